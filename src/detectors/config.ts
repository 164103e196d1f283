import { z } from 'zod';
import { normalizePredicate, PredicateInput, type SpanPredicate } from '../query/predicates.js';
import { guardSql } from '../sql/guard.js';
import { SqlRefused } from '../sql/lexer.js';

/**
 * The detector contract (docs/signals.md; issue 11): types and the `config` each takes. Span
 * filters are the predicates widgets and alerts take (src/query/predicates.ts), so one vocabulary
 * narrows a list, a widget, an alert and a detector; the threshold measure is a per-span measure of
 * the SPANS view (src/widgets/spec.ts). Pure.
 */

export const DETECTOR_TYPES = ['error', 'threshold', 'sql'] as const;
export type DetectorType = (typeof DETECTOR_TYPES)[number];

/** SPANS-view measures that have a value per span (the aggregate-only ones, like error_rate, don't). */
export const THRESHOLD_MEASURES = [
  'latency',
  'duration_ms',
  'cost',
  'input_tokens',
  'output_tokens',
  'total_tokens',
] as const;
export type ThresholdMeasure = (typeof THRESHOLD_MEASURES)[number];
export const THRESHOLD_OPERATORS = ['>', '>=', '<', '<=', '=', '!='] as const;
export type ThresholdOperator = (typeof THRESHOLD_OPERATORS)[number];

export const MAX_DETECTOR_FILTERS = 20;
export const MAX_SQL_LENGTH = 20_000;
/** How often a sql detector runs when `interval_minutes` is left out; a day at most. */
export const DEFAULT_SQL_INTERVAL_MINUTES = 5;
export const MAX_SQL_INTERVAL_MINUTES = 1440;

const Filters = z.array(PredicateInput).max(MAX_DETECTOR_FILTERS);

export const ErrorConfig = z.strictObject({ filters: Filters.optional() });
export const ThresholdConfig = z.strictObject({
  measure: z.enum(THRESHOLD_MEASURES),
  operator: z.enum(THRESHOLD_OPERATORS),
  value: z.number().refine(Number.isFinite, 'Input should be a finite number'),
  filters: Filters.optional(),
});
export const SqlConfig = z.strictObject({
  query: z.string().trim().min(1).max(MAX_SQL_LENGTH),
  interval_minutes: z.int().min(1).max(MAX_SQL_INTERVAL_MINUTES).default(DEFAULT_SQL_INTERVAL_MINUTES),
});

export type ErrorConfig = z.infer<typeof ErrorConfig>;
export type ThresholdConfig = z.infer<typeof ThresholdConfig>;
export type SqlConfig = z.infer<typeof SqlConfig>;
export type DetectorConfig = ErrorConfig | ThresholdConfig | SqlConfig;

const SCHEMAS = { error: ErrorConfig, threshold: ThresholdConfig, sql: SqlConfig } as const;

/** A config issue located inside `config` (`['filters', 0, 'op']`, `['query']`, ...). */
export type ConfigIssue = { path: (string | number)[]; message: string; code?: string };

export type ParsedConfig = { ok: true; config: DetectorConfig } | { ok: false; issues: z.core.$ZodIssue[] };

/**
 * A config as its type requires, with defaults filled in; or its issues (zod's own, so the 422 reads
 * like every other). Filters must normalise; a sql query must pass the public SQL guard.
 */
export function parseConfig(type: DetectorType, raw: unknown): ParsedConfig {
  const result = SCHEMAS[type].safeParse(raw ?? {});
  if (!result.success) return { ok: false, issues: result.error.issues };
  const config = result.data as DetectorConfig;
  const extra: z.core.$ZodIssue[] = [];
  if ('filters' in config && config.filters) {
    config.filters.forEach((f, i) => {
      const n = normalizePredicate(f);
      if (!n.ok) for (const issue of n.issues) extra.push(custom(['filters', i, ...issue.path], issue.message, f));
    });
  }
  if (type === 'sql') {
    const query = (config as SqlConfig).query;
    try {
      // The guard's answer does not depend on the database name; it is checked again when it runs.
      guardSql(query, 'default');
    } catch (error) {
      if (!(error instanceof SqlRefused)) throw error;
      extra.push(custom(['query'], `query refused: ${error.detail}`, query));
    }
  }
  return extra.length ? { ok: false, issues: extra } : { ok: true, config };
}

function custom(path: (string | number)[], message: string, input: unknown): z.core.$ZodIssue {
  return { code: 'custom', path, message, input } as z.core.$ZodIssue;
}

/** The normalised span predicates of an error or threshold config (they were checked on write). */
export function configPredicates(config: ErrorConfig | ThresholdConfig): SpanPredicate[] {
  return (config.filters ?? []).map((f) => {
    const n = normalizePredicate(f);
    if (!n.ok) throw new Error(`stored detector filter is invalid: ${n.issues.map((i) => i.message).join('; ')}`);
    return n.predicate;
  });
}
