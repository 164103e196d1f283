import { z } from 'zod';
import { HttpUrl } from '../edge-schemas.js';
import { AGGREGATIONS, GROUP_FIELDS, WidgetSpecSchema, type Aggregation, type WidgetSpec } from '../widgets/spec.js';
import { normalizePredicate, PredicateInput, type SpanPredicate } from '../query/predicates.js';

/**
 * The alert contract (docs/alerts.md, "Definition"): enums, request
 * bodies, and the rules a definition must meet. An alert measures the SPANS view exactly as a widget
 * does, so its measure, aggregation, filters and group-by are checked by the widget spec itself
 * (WidgetSpecSchema) after its filters are normalised (src/query/predicates.ts). Pure.
 */

export { ALERT_STATUSES, type AlertStatus } from './vocabulary.js';
export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const OPERATORS = ['>', '>=', '<', '<=', '=', '!='] as const;
export type Operator = (typeof OPERATORS)[number];
export const NO_DATA_MODES = ['HOLD', 'ZERO', 'NOTIFY'] as const;
export type NoDataMode = (typeof NO_DATA_MODES)[number];
export const RENOTIFY_MODES = ['OFF', 'INTERVAL'] as const;
export type RenotifyMode = (typeof RENOTIFY_MODES)[number];

/** Evaluation windows, in minutes. */
export const WINDOWS = { '1m': 1, '5m': 5, '10m': 10, '30m': 30, '1h': 60, '2h': 120 } as const;
export type AlertWindow = keyof typeof WINDOWS;
const WINDOW_KEYS = Object.keys(WINDOWS) as [AlertWindow, ...AlertWindow[]];

export const MAX_ALERT_FILTERS = 20;
export const DEFAULT_RENOTIFY_MINUTES = 60;
/** A week: beyond that a reminder is not a reminder. */
export const MAX_RENOTIFY_MINUTES = 10_080;

/**
 * What the aggregation is when the body leaves it out (the spec's example omits it): counts count,
 * identifiers count distinct values, additive amounts sum, latencies and rates average.
 */
export function defaultAggregation(measure: string): Aggregation {
  if (measure === 'count') return 'count';
  if (['user_id', 'session_id', 'trace_id', 'model_name'].includes(measure)) return 'uniq';
  if (
    [
      'cost',
      'input_tokens',
      'output_tokens',
      'total_tokens',
      'error_count',
      'cache_read_tokens',
      'cache_write_tokens',
      'reasoning_tokens',
    ].includes(measure)
  )
    return 'sum';
  return 'avg';
}

const WebhookUrl = HttpUrl('webhook_url must be an http(s) URL without credentials');
export const Notify = z.object({ webhook_url: WebhookUrl });
const Renotify = z.object({
  mode: z.enum(RENOTIFY_MODES).optional(),
  interval_minutes: z.int().min(1).max(MAX_RENOTIFY_MINUTES).optional(),
});
const Name = z.string().trim().min(1).max(200);
const Threshold = z.number();
const GroupBy = z.string().min(1).max(300);
const Filters = z.array(PredicateInput).max(MAX_ALERT_FILTERS);

/** The fields of an alert definition, as a body writes them (create: all but a few optional). */
const definitionFields = {
  name: Name,
  // SCORES (quality.md §1): one score name's values, as the widget view of that name measures them.
  view: z.enum(['SPANS', 'SCORES']),
  score_name: z.string().min(1).max(128),
  measure: z.string().min(1).max(64),
  aggregation: z.enum(AGGREGATIONS),
  threshold: Threshold,
  threshold_operator: z.enum(OPERATORS),
  window: z.enum(WINDOW_KEYS),
  renotify: Renotify,
  filters: Filters,
  group_by: GroupBy.nullable(),
  no_data_mode: z.enum(NO_DATA_MODES),
  severity: z.enum(SEVERITIES),
  notify: Notify.nullable(),
};

export const CreateAlertBody = z
  .object({
    project_id: z.string().min(1),
    ...definitionFields,
    view: definitionFields.view.default('SPANS'),
    score_name: definitionFields.score_name.optional(),
    aggregation: definitionFields.aggregation.optional(),
    threshold_operator: definitionFields.threshold_operator.default('>'),
    window: definitionFields.window.default('5m'),
    renotify: definitionFields.renotify.optional(),
    filters: definitionFields.filters.default([]),
    group_by: definitionFields.group_by.optional(),
    // Left out, the column default applies (docs/alerts.md: `no_data_mode` defaults to `HOLD`).
    no_data_mode: definitionFields.no_data_mode.optional(),
    severity: definitionFields.severity.default('warning'),
    notify: definitionFields.notify.optional(),
  })
  .superRefine((body, ctx) => {
    for (const { path, message } of definitionIssues(body)) ctx.addIssue({ code: 'custom', path, message });
  });
export type CreateAlertInput = z.infer<typeof CreateAlertBody>;

/** An edit names the project and any fields to change; the merged definition is checked by the service. */
export const UpdateAlertBody = z.object({
  project_id: z.string().min(1),
  name: Name.optional(),
  view: definitionFields.view.optional(),
  score_name: definitionFields.score_name.nullable().optional(),
  measure: definitionFields.measure.optional(),
  aggregation: definitionFields.aggregation.optional(),
  threshold: Threshold.optional(),
  threshold_operator: definitionFields.threshold_operator.optional(),
  window: definitionFields.window.optional(),
  renotify: Renotify.optional(),
  filters: Filters.optional(),
  group_by: GroupBy.nullable().optional(),
  no_data_mode: definitionFields.no_data_mode.optional(),
  severity: definitionFields.severity.optional(),
  notify: Notify.nullable().optional(),
});
export type UpdateAlertInput = z.infer<typeof UpdateAlertBody>;

/** What an alert measures and how it judges; `predicates` is `filters` normalised. */
export type Measured = {
  view: AlertView;
  score_name: string | null;
  measure: string;
  aggregation: Aggregation;
  window: AlertWindow;
  filters: PredicateInput[];
  predicates: SpanPredicate[];
  group_by: string | null;
};

export type AlertView = 'SPANS' | 'SCORES';

type DefinitionLike = {
  view?: AlertView;
  score_name?: string | null;
  measure: string;
  aggregation?: Aggregation;
  filters: PredicateInput[];
  group_by?: string | null;
};

/**
 * A definition's issues, located at the body field a caller fixes: `filters.N.<field|op|value|key>`,
 * `measure` (not a measure of the view), `aggregation`, `group_by`.
 */
export function definitionIssues(def: DefinitionLike): z.core.$ZodIssueCustom[] {
  const issues: z.core.$ZodIssueCustom[] = [];
  const custom = (path: (string | number)[], message: string) =>
    issues.push({ code: 'custom', path, message, input: undefined });
  const predicates = normalizeFilters(def.filters, (path, message) => custom(['filters', ...path], message));
  const spec = WidgetSpecSchema.safeParse(
    widgetSpec({
      view: def.view ?? 'SPANS',
      score_name: def.score_name ?? null,
      measure: def.measure,
      aggregation: def.aggregation ?? defaultAggregation(def.measure),
      predicates,
      group_by: def.group_by ?? null,
    }),
  );
  if (!spec.success) {
    for (const issue of spec.error.issues) {
      // The widget spec holds group_by as a list; an alert names one dimension.
      const path =
        issue.path[0] === 'group_by' ? ['group_by'] : issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
      custom(path, issue.message);
    }
  }
  return issues;
}

/** The normalised filters; `onIssue` hears each one that can't be, located inside `filters`. */
export function normalizeFilters(
  filters: z.input<typeof PredicateInput>[],
  onIssue: (path: (string | number)[], message: string) => void = () => {},
): SpanPredicate[] {
  const out: SpanPredicate[] = [];
  filters.forEach((input, i) => {
    const result = normalizePredicate(input);
    if (result.ok) out.push(result.predicate);
    else for (const issue of result.issues) onIssue([i, ...issue.path], issue.message);
  });
  return out;
}

/**
 * The widget spec an alert measures (a `stat`, or a `table` by its group): the widget engine's answer
 * for it over the same window is the alert's value. Negated predicates keep their field, so the
 * planner picks the same source for them.
 */
export function widgetSpec(m: {
  view?: AlertView;
  score_name?: string | null;
  measure: string;
  aggregation: Aggregation;
  predicates: SpanPredicate[];
  group_by: string | null;
}): WidgetSpec {
  return {
    view: m.view ?? 'SPANS',
    ...(m.score_name !== null && m.score_name !== undefined ? { score_name: m.score_name } : {}),
    measure: m.measure,
    aggregation: m.aggregation,
    ...(m.predicates.length ? { filters: m.predicates.map((p) => p.filter) } : {}),
    ...(m.group_by ? { group_by: [m.group_by] } : {}),
  };
}

/** Dimensions an alert may be grouped by: the SPANS view's widget group-bys and `metadata.<key>`. */
export const ALERT_GROUP_FIELDS = GROUP_FIELDS.SPANS;

/**
 * A SCORES alert keeps its score name in the `measure` column as `value:<score name>` (its measure is
 * always `value`; the alerts table predates the view and has no column of its own for the name). The
 * two helpers below are the only places that spell or read it.
 */
const SCORE_MEASURE = 'value:';

export function storedMeasure(view: AlertView, measure: string, scoreName: string | null | undefined): string {
  return view === 'SCORES' ? `${SCORE_MEASURE}${scoreName ?? ''}` : measure;
}

export function measureOf(view: string, stored: string): { measure: string; score_name: string | null } {
  if (view === 'SCORES' && stored.startsWith(SCORE_MEASURE))
    return { measure: 'value', score_name: stored.slice(SCORE_MEASURE.length) };
  return { measure: stored, score_name: null };
}
