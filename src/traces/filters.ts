import { z } from 'zod';
import { BadRequestError } from '../errors.js';

/**
 * The `filters` parameter of list traces (docs/filters.md, the predicate table): a JSON-encoded array
 * of at most 20 predicates, each with exactly the keys of its row. Anything wrong with it is a 400
 * ("invalid filters parameter"), not a 422: the documented errors set the two apart.
 */

export const MAX_FILTERS = 20;
/**
 * The raw parameter's length: 20 predicates of 1,024-character values, with room to spare. Over
 * HTTP the request line's 16 KiB limit comes first; this bounds the parse wherever the text comes from.
 */
export const MAX_FILTERS_PARAM_LENGTH = 64 * 1024;
const MAX_VALUE_LENGTH = 1024;
const MAX_METADATA_KEY_LENGTH = 256;
/** The span fields' own bound (src/traces/span-input.ts caps time_to_first_token_ms there). */
const MAX_TIMING_VALUE = 2_147_483_647;
/** Numeric predicates on the spans' streaming timings: they compare spans, never a trace total. */
export const TIMING_FIELDS = ['time_to_first_token_ms', 'output_tokens_per_second'] as const;
export type TimingField = (typeof TIMING_FIELDS)[number];

export const SET_FIELDS = ['model_name', 'environment', 'span_kind', 'status', 'error_type', 'name'] as const;
export type SetField = (typeof SET_FIELDS)[number];
export const NUMERIC_OPS = ['eq', 'gt', 'gte', 'lt', 'lte'] as const;
export type NumericOp = (typeof NUMERIC_OPS)[number];

const Text = z.string().min(1).max(MAX_VALUE_LENGTH);
const TextList = z.array(z.string().max(MAX_VALUE_LENGTH)).min(1);
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

export const PredicateSchema = z.discriminatedUnion('field', [
  z.strictObject({ field: z.literal('trace_id'), op: z.enum(['eq', 'contains']), value: Text }),
  z.strictObject({ field: z.literal('signal_id'), op: z.literal('eq'), value: Text }),
  setPredicate('model_name'),
  setPredicate('environment'),
  setPredicate('span_kind'),
  setPredicate('status'),
  setPredicate('error_type'),
  setPredicate('name'),
  z.strictObject({ field: z.literal('cost'), op: NumericOpSchema, value: z.number().min(0).max(999_999_999) }),
  z.strictObject({ field: z.literal('total_tokens'), op: NumericOpSchema, value: bigInteger(9223372036854776000) }),
  z.strictObject({ field: z.literal('duration_ms'), op: NumericOpSchema, value: bigInteger(9223372036854776000) }),
  z.strictObject({ field: z.literal('errors'), op: NumericOpSchema, value: bigInteger(18446744073709552000) }),
  // Streaming timings (docs/spans.md, "More span fields"): a trace matches when one of its spans does.
  z.strictObject({
    field: z.literal('time_to_first_token_ms'),
    op: NumericOpSchema,
    value: z.number().min(0).max(MAX_TIMING_VALUE),
  }),
  z.strictObject({
    field: z.literal('output_tokens_per_second'),
    op: NumericOpSchema,
    value: z.number().min(0).max(MAX_TIMING_VALUE),
  }),
  z.strictObject({
    field: z.literal('metadata'),
    op: z.enum(['eq', 'contains']),
    value: Text,
    key: z.string().min(1).max(MAX_METADATA_KEY_LENGTH),
  }),
]);

export type Predicate = z.infer<typeof PredicateSchema>;

const FiltersSchema = z.array(PredicateSchema).max(MAX_FILTERS);

/** Parses the raw query value; throws 400 with a detail naming the first problem. */
export function parseFilters(raw: string | undefined): Predicate[] {
  if (raw === undefined || raw.trim() === '') return [];
  if (raw.length > MAX_FILTERS_PARAM_LENGTH)
    throw new BadRequestError(`invalid filters parameter: longer than ${MAX_FILTERS_PARAM_LENGTH} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new BadRequestError('invalid filters parameter: not valid JSON');
  }
  if (!Array.isArray(parsed))
    throw new BadRequestError('invalid filters parameter: expected a JSON array of predicates');
  if (parsed.length > MAX_FILTERS)
    throw new BadRequestError(`invalid filters parameter: at most ${MAX_FILTERS} predicates are allowed`);
  const result = FiltersSchema.safeParse(parsed);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new BadRequestError(`invalid filters parameter: ${describe(issue)}`);
}

function describe(issue: z.core.$ZodIssue): string {
  const where = issue.path.length
    ? `filters[${String(issue.path[0])}]${issue.path
        .slice(1)
        .map((p) => `.${String(p)}`)
        .join('')}`
    : 'filters';
  switch (issue.code) {
    case 'invalid_union':
      return `${where}: unknown field; expected one of trace_id, signal_id, ${SET_FIELDS.join(', ')}, cost, total_tokens, duration_ms, errors, ${TIMING_FIELDS.join(', ')}, metadata`;
    case 'unrecognized_keys':
      return `${where}: unexpected key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
    case 'invalid_value':
      return `${where}: expected ${issue.values.map((v) => `'${String(v)}'`).join(' or ')}`;
    case 'invalid_type':
      return `${where}: expected ${issue.expected}`;
    case 'too_small':
      return `${where}: ${issue.origin === 'array' ? 'needs at least 1 item' : issue.origin === 'string' ? 'must not be empty' : `must be at least ${String(issue.minimum)}`}`;
    case 'too_big':
      return `${where}: ${issue.origin === 'string' ? `at most ${String(issue.maximum)} characters` : `must be at most ${String(issue.maximum)}`}`;
    default:
      return `${where}: ${issue.message}`;
  }
}
