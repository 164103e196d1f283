import { z } from 'zod';

/**
 * The row predicates of spans and traces (docs/filters.md, the predicate table): the one vocabulary
 * of fields and ops, the one schema of a predicate, and the loose form alerts and detectors accept,
 * normalised into it. Their SQL is in conditions.ts. Pure.
 *
 * - `PredicateSchema` / `SpanFilterSchema`: the strict form. The trace list's `filters` parameter takes it with
 *   `signal_id` and the span fields' own numeric bounds (src/traces/filters.ts turns its issues into
 *   400s); a widget spec's `filters` without `signal_id`, any number >= 0 (src/widgets/spec.ts, 422s).
 * - `PredicateInput` + `normalizePredicate`: what alerts and detectors store (`op: "="` with a
 *   string, `!=`, `metadata.<key>`), answered as a strict span predicate and whether it is negated.
 */

const MAX_TEXT = 1024;
const MAX_KEY = 256;
/** The span fields' own bound (src/traces/span-input.ts caps time_to_first_token_ms there). */
const MAX_TIMING_VALUE = 2_147_483_647;

/** Numeric predicates on the spans' streaming timings: they compare spans, never a trace total. */
export const TIMING_FIELDS = ['time_to_first_token_ms', 'output_tokens_per_second'] as const;
export type TimingField = (typeof TIMING_FIELDS)[number];

/**
 * The prompt version a span used (docs/prompts.md, "Linking spans"): `prompt_name` `in`,
 * `prompt_version` `eq`. Not rollup dimensions: read from `spans` (clickhouse/0019_span_prompt.sql).
 */
export const PROMPT_FIELDS = ['prompt_name', 'prompt_version'] as const;
/** The largest prompt version (a Postgres integer, as src/traces/span-input.ts bounds it). */
const MAX_PROMPT_VERSION = 2_147_483_647;

export const SET_FIELDS = ['model_name', 'environment', 'span_kind', 'status', 'error_type', 'name'] as const;
export type SetField = (typeof SET_FIELDS)[number];
export const NUMERIC_OPS = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
/** The ops of a `score` predicate (quality.md §1): on `value`, on `string_value` (`in`), or presence. */
export const SCORE_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'is_set', 'is_not_set'] as const;
export type NumericOp = (typeof NUMERIC_OPS)[number];

const Text = z.string().min(1).max(MAX_TEXT);
const TextList = z.array(z.string().max(MAX_TEXT)).min(1);
const NumericOpSchema = z.enum(NUMERIC_OPS);
/** Integers up to the spec's bounds, which lie beyond 2^53: `z.int()` would stop at the safe range. */
const bigInteger = (max: number) =>
  z
    .number()
    .refine(Number.isInteger, 'Input should be a valid integer')
    .refine((n) => n >= 0, 'Input should be greater than or equal to 0')
    .refine((n) => n <= max, `Input should be less than or equal to ${max}`);

const setPredicate = <F extends SetField>(field: F) =>
  z.strictObject({ field: z.literal(field), op: z.literal('in'), value: TextList });

/**
 * The options of a predicate schema, in the order of the predicate table. `bounded`: numbers within
 * the span fields' own bounds (integers where the field is one); else any number >= 0.
 */
function predicateOptions(bounded: boolean) {
  const numeric = <F extends string>(field: F, value: z.ZodType<number>) =>
    z.strictObject({ field: z.literal(field), op: NumericOpSchema, value: bounded ? value : z.number().min(0) });
  return {
    traceId: z.strictObject({ field: z.literal('trace_id'), op: z.enum(['eq', 'contains']), value: Text }),
    signalId: z.strictObject({ field: z.literal('signal_id'), op: z.literal('eq'), value: Text }),
    // A trace's tags (issue 37): any of them; the trace list's own field, like signal_id.
    tags: z.strictObject({ field: z.literal('tags'), op: z.literal('in'), value: TextList }),
    // A trace's scores (quality.md §1): `key` is the score name; a trace matches when any of its
    // scores of that name (trace or span level) does. Numeric ops compare `value`, `in` `string_value`.
    score: z
      .strictObject({
        field: z.literal('score'),
        key: z.string().min(1).max(128),
        op: z.enum(SCORE_OPS),
        value: z.union([z.number(), TextList]).optional(),
      })
      .superRefine((p, ctx) => {
        const wants = p.op === 'in' ? 'list' : p.op === 'is_set' || p.op === 'is_not_set' ? 'none' : 'number';
        const has = p.value === undefined ? 'none' : Array.isArray(p.value) ? 'list' : 'number';
        if (wants === has && (has !== 'number' || Number.isFinite(p.value))) return;
        const message = {
          list: "Input should be a list of labels for op 'in'",
          none: `Input should be absent for op '${p.op}'`,
          number: `Input should be a finite number for op '${p.op}'`,
        }[wants];
        ctx.addIssue({ code: 'custom', path: ['value'], message });
      }),
    sets: [
      setPredicate('model_name'),
      setPredicate('environment'),
      setPredicate('span_kind'),
      setPredicate('status'),
      setPredicate('error_type'),
      setPredicate('name'),
    ] as const,
    numbers: [
      numeric('cost', z.number().min(0).max(999_999_999)),
      numeric('total_tokens', bigInteger(9223372036854776000)),
      numeric('duration_ms', bigInteger(9223372036854776000)),
      numeric('errors', bigInteger(18446744073709552000)),
      // Streaming timings (docs/spans.md, "More span fields"): a trace matches when one of its spans does.
      numeric('time_to_first_token_ms', z.number().min(0).max(MAX_TIMING_VALUE)),
      numeric('output_tokens_per_second', z.number().min(0).max(MAX_TIMING_VALUE)),
    ] as const,
    metadata: z.strictObject({
      field: z.literal('metadata'),
      op: z.enum(['eq', 'contains']),
      value: Text,
      key: z.string().min(1).max(MAX_KEY),
    }),
    prompts: [
      z.strictObject({ field: z.literal('prompt_name'), op: z.literal('in'), value: TextList }),
      z.strictObject({
        field: z.literal('prompt_version'),
        op: z.literal('eq'),
        value: bounded ? z.int().min(1).max(MAX_PROMPT_VERSION) : z.number().min(0),
      }),
    ] as const,
  };
}

const list = predicateOptions(true);
const span = predicateOptions(false);

/** A trace list predicate (`filters` of GET /traces and /sessions). */
export const PredicateSchema = z.discriminatedUnion('field', [
  list.traceId,
  list.signalId,
  list.tags,
  list.score,
  ...list.sets,
  ...list.numbers,
  list.metadata,
  ...list.prompts,
]);
export type Predicate = z.infer<typeof PredicateSchema>;

/** The span fields a sampling `keep` rule may test (quality.md §6, `sampling`). */
export const KEEP_FIELDS = ['status', 'environment', 'model_name', 'span_kind', 'metadata'] as const;

/**
 * A sampling `keep` predicate: the list's own rows for those fields, tested against each span as it
 * arrives (src/controls/sampling.ts `keepMatches`). Any other field, or a row that fits none, is refused
 * naming the fields allowed. A plain union (`anyOf` in the OpenAPI document, as the web types read it).
 */
export const KeepPredicateSchema = z.union([list.sets[3], list.sets[1], list.sets[0], list.sets[2], list.metadata], {
  error:
    'not a keep rule: a keep rule tests status, environment, model_name or span_kind (op "in", value a list of strings) or metadata (key, op "eq" or "contains", value a string)',
});
export type KeepPredicate = z.infer<typeof KeepPredicateSchema>;

/** A span predicate: a widget spec's filters, and what alert and detector predicates normalise to. */
export const SpanFilterSchema = z.discriminatedUnion('field', [
  span.traceId,
  // A span (or a score) matches when its trace has a matching score (quality.md §1, "Filters").
  span.score,
  ...span.sets,
  ...span.numbers,
  span.metadata,
  ...span.prompts,
]);
export type SpanFilter = z.infer<typeof SpanFilterSchema>;

/**
 * The loose form alerts and detectors accept: `{field, op, value, key?}` with the list/widget ops
 * (`eq`, `in`, `contains`, `gt`, `gte`, `lt`, `lte`) or comparison symbols (`=`, `!=`, `>`, `>=`, `<`,
 * `<=`). The spec's alert filters write `op: "="` with a string `value` (docs/filters.md, "Alerts and
 * detectors"), so a string is accepted where the strict form takes a list (`model_name = "gpt-4o"` is
 * `model_name in ["gpt-4o"]`) or a number (`"0.5"`). `!=` is the matching positive filter negated;
 * `NOT (...)` keeps it one condition on the same columns, so it reads the same rollup dimensions.
 * `metadata.<key>` names a metadata key without `key`.
 */
export type SpanPredicate = { filter: SpanFilter; negate: boolean };

/** An issue of one predicate, located inside it (`['op']`, `['value', 2]`, ...). */
export type PredicateIssue = { path: (string | number)[]; message: string };

/**
 * Loose on purpose: what each field takes is checked by `normalizePredicate`, with its own message.
 * `op` defaults to `=`: the spec's create body lists filter items as `{field, value, key}`.
 */
export const PredicateInput = z.object({
  field: z.string().min(1).max(300),
  op: z.string().min(1).max(16).default('='),
  // Absent only for a score's `is_set`/`is_not_set`; every other field says it needs one.
  value: z.union([z.string(), z.number(), z.array(z.string())]).optional(),
  key: z.string().optional(),
});
export type PredicateInput = z.infer<typeof PredicateInput>;

const NUMERIC_FIELDS = ['cost', 'total_tokens', 'duration_ms', 'errors', ...TIMING_FIELDS] as const;
const TEXT_FIELDS = ['trace_id', 'metadata'] as const;
/** Field names accepted besides the widget ones, and what they mean there. */
const ALIASES: Record<string, string> = { kind: 'span_kind', latency: 'duration_ms' };

export const PREDICATE_FIELDS = [...SET_FIELDS, ...NUMERIC_FIELDS, ...TEXT_FIELDS, ...PROMPT_FIELDS] as const;

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
  if (field === 'score' || field.startsWith('score.'))
    return scorePredicate(input, field === 'score' ? key : field.slice(6));
  if (!(PREDICATE_FIELDS as readonly string[]).includes(field)) {
    return fail(
      ['field'],
      `unknown field '${input.field}'; expected one of ${PREDICATE_FIELDS.join(', ')}, metadata.<key>, score`,
    );
  }
  const op = SYMBOLS[input.op ?? '='];
  if (!op)
    return fail(
      ['op'],
      `unknown op '${input.op}'; expected one of =, !=, >, >=, <, <=, eq, in, contains, gt, gte, lt, lte`,
    );
  const negate = op === 'neq';

  if (field === 'prompt_version') {
    if (op !== 'eq' && op !== 'neq') return fail(['op'], 'prompt_version takes = or !=');
    const value =
      typeof input.value === 'number' ? input.value : typeof input.value === 'string' ? Number(input.value) : NaN;
    if (!Number.isInteger(value) || value < 1) return fail(['value'], 'prompt_version takes a version number (>= 1)');
    return ok({ field, op: 'eq', value }, negate);
  }

  if ((SET_FIELDS as readonly string[]).includes(field) || field === 'prompt_name') {
    if (op !== 'eq' && op !== 'neq' && op !== 'in') return fail(['op'], `${field} takes =, != or in`);
    const values = typeof input.value === 'string' ? [input.value] : input.value;
    if (!Array.isArray(values)) return fail(['value'], `${field} takes a string or a list of strings`);
    if (values.length === 0) return fail(['value'], 'List should have at least 1 item');
    const tooLong = values.findIndex((v) => v.length > MAX_TEXT);
    if (tooLong >= 0)
      return fail(typeof input.value === 'string' ? ['value'] : ['value', tooLong], `at most ${MAX_TEXT} characters`);
    return ok({ field, op: 'in', value: values } as SpanFilter, negate);
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
    return ok({ field, op: op === 'neq' ? 'eq' : op, value } as SpanFilter, negate);
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

/**
 * A `score` predicate in the loose form (`score` with `key`, or `score.<name>`): the strict form's ops
 * (quality.md §1), `!=` being the score's own `neq` (a score of the name with another value), never
 * a negation; a numeric string is a number, one label a list.
 */
function scorePredicate(input: z.input<typeof PredicateInput>, key: string | undefined): Normalized {
  const fail = (path: (string | number)[], message: string): Normalized => ({ ok: false, issues: [{ path, message }] });
  if (!key || key.length > 128)
    return fail([input.field === 'score' ? 'key' : 'field'], 'a score predicate names a score of 1 to 128 characters');
  const op = input.op === 'is_set' || input.op === 'is_not_set' ? input.op : SYMBOLS[input.op ?? '='];
  if (!op || op === 'contains')
    return fail(
      ['op'],
      `unknown op '${input.op}' for score; expected one of =, !=, >, >=, <, <=, in, is_set, is_not_set`,
    );
  if (op === 'is_set' || op === 'is_not_set') {
    if (input.value !== undefined) return fail(['value'], `Input should be absent for op '${op}'`);
    return { ok: true, predicate: { filter: { field: 'score', key, op }, negate: false } };
  }
  if (op === 'in') {
    const labels = typeof input.value === 'string' ? [input.value] : input.value;
    if (!Array.isArray(labels) || labels.length === 0 || labels.some((l) => l.length > MAX_TEXT))
      return fail(['value'], "Input should be a list of labels for op 'in'");
    return { ok: true, predicate: { filter: { field: 'score', key, op, value: labels }, negate: false } };
  }
  const value =
    typeof input.value === 'number'
      ? input.value
      : typeof input.value === 'string' && input.value.trim() !== ''
        ? Number(input.value)
        : NaN;
  if (!Number.isFinite(value)) return fail(['value'], `Input should be a finite number for op '${op}'`);
  return { ok: true, predicate: { filter: { field: 'score', key, op, value }, negate: false } };
}

function ok(filter: SpanFilter, negate: boolean): Normalized {
  return { ok: true, predicate: { filter, negate } };
}
