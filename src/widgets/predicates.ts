import { z } from 'zod';
import { SET_FIELDS, TIMING_FIELDS, type NumericOp } from '../traces/filters.js';
import { spanFilter, type Builder } from './planner.js';
import type { WidgetFilter } from './spec.js';

/**
 * Row predicates over spans as callers write them, turned into the one filter form widgets already
 * use (`WidgetFilter`, which planner.ts turns into SQL), so lists, widgets and alerts share one
 * vocabulary and one SQL builder. Pure.
 *
 * Accepted: `{field, op, value, key?}` with the list/widget ops (`eq`, `in`, `contains`, `gt`, `gte`,
 * `lt`, `lte`) or comparison symbols (`=`, `!=`, `>`, `>=`, `<`, `<=`). The spec's alert filters write
 * `op: "="` with a string `value` (docs/filters.md, "Alerts and detectors"), so a string is accepted where the widget
 * form takes a list (`model_name = "gpt-4o"` is `model_name in ["gpt-4o"]`) or a number (`"0.5"`).
 * `!=` is the matching positive filter negated; `NOT (...)` keeps it one condition on the same columns,
 * so it reads the same rollup dimensions. `metadata.<key>` names a metadata key without `key`.
 */

export type SpanPredicate = { filter: WidgetFilter; negate: boolean };

/** An issue of one predicate, located inside it (`['op']`, `['value', 2]`, ...). */
export type PredicateIssue = { path: (string | number)[]; message: string };

const MAX_TEXT = 1024;
const MAX_KEY = 256;

/**
 * Loose on purpose: what each field takes is checked by `normalizePredicate`, with its own message.
 * `op` defaults to `=`: the spec's create body lists filter items as `{field, value, key}`.
 */
export const PredicateInput = z.object({
  field: z.string().min(1).max(300),
  op: z.string().min(1).max(16).default('='),
  value: z.union([z.string(), z.number(), z.array(z.string())]),
  key: z.string().optional(),
});
export type PredicateInput = z.infer<typeof PredicateInput>;

const NUMERIC_FIELDS = ['cost', 'total_tokens', 'duration_ms', 'errors', ...TIMING_FIELDS] as const;
const TEXT_FIELDS = ['trace_id', 'metadata'] as const;
/** Field names accepted besides the widget ones, and what they mean there. */
const ALIASES: Record<string, string> = { kind: 'span_kind', latency: 'duration_ms' };

export const PREDICATE_FIELDS = [...SET_FIELDS, ...NUMERIC_FIELDS, ...TEXT_FIELDS] as const;

const SYMBOLS: Record<string, NumericOp | 'neq' | 'in' | 'contains'> = {
  '=': 'eq',
  '==': 'eq',
  eq: 'eq',
  '!=': 'neq',
  '<>': 'neq',
  neq: 'neq',
  '>': 'gt',
  gt: 'gt',
  '>=': 'gte',
  gte: 'gte',
  '<': 'lt',
  lt: 'lt',
  '<=': 'lte',
  lte: 'lte',
  in: 'in',
  contains: 'contains',
};

type Normalized = { ok: true; predicate: SpanPredicate } | { ok: false; issues: PredicateIssue[] };

/** One predicate in the widget form, or the issues that stop it (each located inside the predicate). */
export function normalizePredicate(input: z.input<typeof PredicateInput>): Normalized {
  const fail = (path: (string | number)[], message: string): Normalized => ({ ok: false, issues: [{ path, message }] });
  let field = ALIASES[input.field] ?? input.field;
  let key = input.key;
  if (field.startsWith('metadata.')) {
    key = field.slice('metadata.'.length);
    field = 'metadata';
  }
  if (!(PREDICATE_FIELDS as readonly string[]).includes(field)) {
    return fail(
      ['field'],
      `unknown field '${input.field}'; expected one of ${PREDICATE_FIELDS.join(', ')}, metadata.<key>`,
    );
  }
  const op = SYMBOLS[input.op ?? '='];
  if (!op)
    return fail(
      ['op'],
      `unknown op '${input.op}'; expected one of =, !=, >, >=, <, <=, eq, in, contains, gt, gte, lt, lte`,
    );
  const negate = op === 'neq';

  if ((SET_FIELDS as readonly string[]).includes(field)) {
    if (op !== 'eq' && op !== 'neq' && op !== 'in') return fail(['op'], `${field} takes =, != or in`);
    const values = typeof input.value === 'string' ? [input.value] : input.value;
    if (!Array.isArray(values)) return fail(['value'], `${field} takes a string or a list of strings`);
    if (values.length === 0) return fail(['value'], 'List should have at least 1 item');
    const tooLong = values.findIndex((v) => v.length > MAX_TEXT);
    if (tooLong >= 0)
      return fail(typeof input.value === 'string' ? ['value'] : ['value', tooLong], `at most ${MAX_TEXT} characters`);
    return ok({ field, op: 'in', value: values } as WidgetFilter, negate);
  }

  if ((NUMERIC_FIELDS as readonly string[]).includes(field)) {
    if (op === 'in' || op === 'contains')
      return fail(['op'], `${field} takes =, !=, >, >=, <, <= (or eq, gt, gte, lt, lte)`);
    const value =
      typeof input.value === 'number'
        ? input.value
        : typeof input.value === 'string' && input.value.trim() !== ''
          ? Number(input.value)
          : NaN;
    if (!Number.isFinite(value)) return fail(['value'], `${field} takes a number`);
    if (value < 0) return fail(['value'], 'Input should be greater than or equal to 0');
    return ok({ field, op: op === 'neq' ? 'eq' : op, value } as WidgetFilter, negate);
  }

  // trace_id and metadata: text equality or substring.
  if (op !== 'eq' && op !== 'neq' && op !== 'contains') return fail(['op'], `${field} takes =, != or contains`);
  if (typeof input.value !== 'string' || input.value.length === 0 || input.value.length > MAX_TEXT) {
    return fail(['value'], `${field} takes a string of 1 to ${MAX_TEXT} characters`);
  }
  if (field === 'metadata') {
    if (!key || key.length > MAX_KEY)
      return fail(
        [input.field === 'metadata' ? 'key' : 'field'],
        `a metadata predicate names a key of 1 to ${MAX_KEY} characters`,
      );
    return ok({ field: 'metadata', op: op === 'contains' ? 'contains' : 'eq', value: input.value, key }, negate);
  }
  return ok({ field: 'trace_id', op: op === 'contains' ? 'contains' : 'eq', value: input.value }, negate);
}

function ok(filter: WidgetFilter, negate: boolean): Normalized {
  return { ok: true, predicate: { filter, negate } };
}

/** The SQL condition of a normalised predicate on spans or a span rollup (the planner's, negated for `!=`). */
export function predicateCondition(p: SpanPredicate, b: Builder): string {
  const condition = spanFilter(p.filter, b);
  return p.negate ? `NOT (${condition})` : condition;
}
