import { z } from 'zod';
import RE2 from 're2';
import { StoredText } from '../edge-schemas.js';
import { PredicateSchema } from '../query/predicates.js';
import { compileJsonSchema } from './json-schema.js';
import { MAX_TEMPLATE_CHARS, MAX_VARIABLES, parsePath, placeholders, VARIABLE_NAME } from './template.js';

/**
 * An evaluator definition (docs/evaluators.md; quality spec §2): every field of the spec's table,
 * the scorer union and each check's params. Pure: a regex is compiled by the linear-time engine and
 * a JSON schema by ajv here, so a definition that would fail when run is refused when written (422).
 */

export const MAX_FILTERS = 20;
export const MAX_PATTERN_CHARS = 1024;
export const MAX_JSON_SCHEMA_CHARS = 32_768;
export const MAX_CATEGORIES = 100;
export const MAX_SPAN_FILTER_VALUES = 50;
export const MAX_DELAY_SECONDS = 86_400;
export const TARGETS = ['trace', 'span'] as const;
export const DATA_TYPES = ['numeric', 'categorical', 'boolean'] as const;
export const CHECKS = [
  'json_valid',
  'json_schema',
  'regex',
  'contains',
  'not_contains',
  'length',
  'latency_ms',
  'cost',
  'total_tokens',
] as const;

const Path = z.string().superRefine((path, ctx) => {
  const parsed = parsePath(path);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});
/** The field a check reads: a path like a variable's; the output unless said. */
const Field = Path.default('output');

const Output = z
  .strictObject({
    data_type: z.enum(DATA_TYPES),
    categories: z.array(StoredText(1, 256)).min(1).max(MAX_CATEGORIES).optional(),
    min_value: z.number().optional(),
    max_value: z.number().optional(),
  })
  .superRefine((o, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (o.data_type === 'categorical') {
      if (!o.categories) issue('categories', 'a categorical output needs categories');
      else if (new Set(o.categories).size !== o.categories.length) issue('categories', 'categories must be distinct');
    } else if (o.categories) issue('categories', 'only a categorical output takes categories');
    if (o.data_type !== 'numeric') {
      if (o.min_value !== undefined) issue('min_value', 'only a numeric output takes min_value');
      if (o.max_value !== undefined) issue('max_value', 'only a numeric output takes max_value');
    } else if (o.min_value !== undefined && o.max_value !== undefined && o.min_value > o.max_value)
      issue('max_value', 'max_value must not be less than min_value');
  });
export type OutputSpec = z.infer<typeof Output>;

const LlmJudge = z
  .strictObject({
    type: z.literal('llm_judge'),
    connection_id: z.string().min(1).max(64),
    model: StoredText(1, 200).optional(),
    prompt: StoredText(1, MAX_TEMPLATE_CHARS),
    variables: z
      .record(
        z.string().regex(VARIABLE_NAME, 'a variable name is letters, digits and _, not starting with a digit'),
        Path,
      )
      .default({})
      .refine((v) => Object.keys(v).length <= MAX_VARIABLES, `at most ${MAX_VARIABLES} variables`),
    output: Output,
    temperature: z.number().min(0).max(2).optional(),
  })
  .superRefine((s, ctx) => {
    const unknown = placeholders(s.prompt).filter((name) => !(name in s.variables));
    if (unknown.length)
      ctx.addIssue({
        code: 'custom',
        path: ['prompt'],
        message: `the prompt uses {{${unknown[0]}}}, which is not among the variables`,
      });
  });

const compiles = (pattern: string) => {
  try {
    new RE2(pattern, 'u');
    return true;
  } catch {
    return false;
  }
};

function jsonSchemaIssue(schema: unknown): string | null {
  if (JSON.stringify(schema).length > MAX_JSON_SCHEMA_CHARS)
    return `a JSON schema is at most ${MAX_JSON_SCHEMA_CHARS} characters as JSON`;
  try {
    compileJsonSchema(schema as object);
    return null;
  } catch {
    return 'params.schema is not a valid JSON schema';
  }
}

const check = <C extends (typeof CHECKS)[number], P extends z.ZodType>(name: C, params: P) =>
  z.strictObject({ type: z.literal('check'), check: z.literal(name), params });
const NoParams = z.strictObject({ field: Field }).default({ field: 'output' });
const Max = z.strictObject({ max: z.number().min(0) });

const Check = z.discriminatedUnion('check', [
  check('json_valid', NoParams),
  check(
    'json_schema',
    z.strictObject({
      field: Field,
      schema: z.record(z.string(), z.unknown()).superRefine((schema, ctx) => {
        const issue = jsonSchemaIssue(schema);
        if (issue) ctx.addIssue({ code: 'custom', message: issue });
      }),
    }),
  ),
  check(
    'regex',
    z.strictObject({
      field: Field,
      pattern: z
        .string()
        .min(1)
        .max(MAX_PATTERN_CHARS)
        .refine(compiles, 'the pattern is not one the linear-time regex engine (RE2) accepts'),
    }),
  ),
  check('contains', z.strictObject({ field: Field, text: StoredText(1, 1024) })),
  check('not_contains', z.strictObject({ field: Field, text: StoredText(1, 1024) })),
  check(
    'length',
    z
      .strictObject({ field: Field, min: z.number().int().min(0).optional(), max: z.number().int().min(0).optional() })
      .refine((p) => p.min !== undefined || p.max !== undefined, 'length needs min, max or both')
      .refine((p) => p.min === undefined || p.max === undefined || p.min <= p.max, 'max must not be less than min'),
  ),
  check('latency_ms', Max),
  check('cost', Max),
  check('total_tokens', Max),
]);
export type CheckScorer = z.infer<typeof Check>;

export const Scorer = z.discriminatedUnion('type', [LlmJudge, Check]);
export type Scorer = z.infer<typeof Scorer>;

/**
 * The scorer as the OpenAPI document states it: the same ten shapes as one flat union. The nested
 * discriminated union validates with errors located at the field; flat, the document's types stay
 * plain unions for generated clients (web/src/api-schema.gen.ts).
 */
export const ScorerDocumented = z
  .union([LlmJudge, ...Check.options])
  .describe('an LLM judge (`type: "llm_judge"`) or a check (`type: "check"`, one of the `check` kinds)')
  .meta({ id: 'EvaluatorScorer' });
export type LlmJudgeScorer = Extract<Scorer, { type: 'llm_judge' }>;

const SpanFilter = z
  .strictObject({
    kind: z.array(StoredText(1, 256)).min(1).max(MAX_SPAN_FILTER_VALUES).optional(),
    name: z.array(StoredText(1, 256)).min(1).max(MAX_SPAN_FILTER_VALUES).optional(),
  })
  .describe('which spans of a matching trace are scored, each on its own (target `span` only)');
export type SpanFilter = z.infer<typeof SpanFilter>;

const definition = {
  name: StoredText(1, 128),
  target: z.enum(TARGETS),
  span_filter: SpanFilter.nullish(),
  filters: z.array(PredicateSchema).max(MAX_FILTERS),
  sampling_rate: z.number().gt(0).max(1),
  delay_seconds: z.number().int().min(0).max(MAX_DELAY_SECONDS),
  scorer: Scorer,
  score_name: StoredText(1, 128),
  score_config_id: StoredText(1, 128).nullish(),
  enabled: z.boolean(),
};

const spanFilterOnlyForSpans = (b: { target?: string; span_filter?: unknown }, ctx: z.RefinementCtx) => {
  if (b.target === 'trace' && b.span_filter)
    ctx.addIssue({ code: 'custom', path: ['span_filter'], message: 'span_filter is for target span only' });
};

const CreateFields = z.object({
  project_id: z.string().optional(),
  ...definition,
  filters: definition.filters.default([]),
  sampling_rate: definition.sampling_rate.default(1),
  delay_seconds: definition.delay_seconds.default(30),
  enabled: definition.enabled.default(true),
});
export const CreateEvaluatorBody = CreateFields.superRefine(spanFilterOnlyForSpans);
export type CreateEvaluatorInput = z.infer<typeof CreateEvaluatorBody>;

const UpdateFields = z.object({
  project_id: z.string().optional(),
  name: definition.name.optional(),
  target: definition.target.optional(),
  span_filter: definition.span_filter,
  filters: definition.filters.optional(),
  sampling_rate: definition.sampling_rate.optional(),
  delay_seconds: definition.delay_seconds.optional(),
  scorer: definition.scorer.optional(),
  score_name: definition.score_name.optional(),
  score_config_id: definition.score_config_id,
  enabled: definition.enabled.optional(),
});
export const UpdateEvaluatorBody = UpdateFields.superRefine(spanFilterOnlyForSpans);

/** The create and edit bodies as the OpenAPI document states them (src/openapi-documented.ts). */
export const CreateEvaluatorDocumented = CreateFields.extend({ scorer: ScorerDocumented });
export const UpdateEvaluatorDocumented = UpdateFields.extend({ scorer: ScorerDocumented.optional() });
export type UpdateEvaluatorInput = z.infer<typeof UpdateEvaluatorBody>;
