import { z } from 'zod';
import { MAX_SPANS_PER_REQUEST, SpanInputSchema } from './traces/span-input.js';

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
  'POST /otel/v1/traces': {
    content: {
      'application/x-protobuf': { schema: OTLP_PROTOBUF },
      'application/protobuf': { schema: OTLP_PROTOBUF },
      'application/json': { schema: OTLP_JSON },
    },
  },
};
