import { z } from 'zod';
import { MAX_FILTERS } from './traces/filters.js';
import { PredicateSchema } from './query/predicates.js';
import { MAX_SPANS_PER_REQUEST, SpanInputSchema } from './traces/span-input.js';
import { WidgetSpecSchema } from './widgets/spec.js';
import { CreateEvaluatorDocumented, UpdateEvaluatorDocumented } from './evaluators/schema.js';

/**
 * What the document says of a request where it says more than the schema the route validates with.
 */

/**
 * Request bodies the document states apart from the schema the route validates with (keys as in
 * openapi-operations.ts). `POST /traces` validates `spans` as `unknown[]` so one bad span is reported
 * in `rejected` rather than failing the batch (docs/spans.md, "Answer"), but what a client should send
 * is a list of spans of this shape. The OTLP route reads its body with its own parsers.
 */

export const SpanIngestBody = z
  .object({
    spans: z.array(SpanInputSchema).min(1).max(MAX_SPANS_PER_REQUEST),
    project_id: z
      .string()
      .nullish()
      .describe("the project the spans belong to; for an API key optional and must match the key's project"),
  })
  .meta({ id: 'SpanIngestRequest' });

const OTLP_JSON = {
  type: 'object',
  description:
    'An OTLP/JSON ExportTraceServiceRequest (opentelemetry-proto, trace/v1): ids in hex, int64 as decimal strings',
  properties: {
    resourceSpans: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          resource: { type: 'object' },
          scopeSpans: { type: 'array', items: { type: 'object' } },
        },
      },
    },
  },
} as const;

const OTLP_PROTOBUF = {
  type: 'string',
  format: 'binary',
  description: 'An encoded opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest',
} as const;

/** A request body as @fastify/swagger takes it: one schema per content type. */
type ContentBody = { content: Record<string, { schema: object }> };

export const OPERATION_BODIES: Readonly<Record<string, z.ZodType | ContentBody>> = {
  'POST /traces': SpanIngestBody,
  // The scorer as one flat union (src/evaluators/schema.ts, `ScorerDocumented`).
  'POST /evaluators': CreateEvaluatorDocumented,
  'PATCH /evaluators/{evaluator_id}': UpdateEvaluatorDocumented,
  'POST /otel/v1/traces': {
    content: {
      'application/x-protobuf': { schema: OTLP_PROTOBUF },
      'application/protobuf': { schema: OTLP_PROTOBUF },
      'application/json': { schema: OTLP_JSON },
    },
  },
};

const EXPORT_FILE = { schema: { type: 'string', format: 'binary' } } as const;

/**
 * Answers that are not JSON, by operation (keys as in openapi-operations.ts): an export's file in its
 * format (docs/exports.md, "Download").
 */
export const OPERATION_RESPONSES: Readonly<Record<string, Record<string, object>>> = {
  'GET /exports/{export_id}/download': {
    '200': {
      description: "The export's rows in its format, streamed",
      content: {
        'application/vnd.apache.parquet': EXPORT_FILE,
        'application/x-ndjson': EXPORT_FILE,
        'text/csv': EXPORT_FILE,
      },
    },
  },
};

/**
 * One predicate of the trace and session lists' `filters` parameter (docs/filters.md). The schema is
 * the one `parseFilters` applies (src/traces/filters.ts; being unified with the widgets' predicates in
 * src/query/).
 */
export const Predicate = PredicateSchema.meta({ id: 'Predicate' });

/**
 * The `filters` query parameter as documented: a JSON-encoded array of predicates, stated as the
 * parameter's `application/json` content (OpenAPI's form for a structured query value). The route
 * reads it as a string so a bad one answers 400 "invalid filters parameter" rather than 422.
 */
const FiltersParam = z
  .array(Predicate)
  .max(MAX_FILTERS)
  .optional()
  .meta({
    'x-consume': 'application/json',
    description: `a JSON-encoded array of at most ${MAX_FILTERS} predicates, all of which a trace must match (docs/filters.md)`,
  });

/** A route's query schema as documented: `filters`, where the route takes it, typed. */
export function documentedQuery(querystring: unknown): unknown {
  if (!(querystring instanceof z.ZodObject) || !('filters' in querystring.shape)) return querystring;
  // The route's own words for its filters (sessions: "a session matches when one of its traces does").
  const described = (querystring.shape.filters as z.ZodType).description;
  return querystring.extend({ filters: described ? FiltersParam.meta({ description: described }) : FiltersParam });
}

/**
 * A query widget's spec (src/widgets/spec.ts), named where the routes use it: registered as it is
 * (not a copy), so every body that takes a spec refers to one `WidgetSpec` component.
 */
z.globalRegistry.add(WidgetSpecSchema, { ...z.globalRegistry.get(WidgetSpecSchema), id: 'WidgetSpec' });
