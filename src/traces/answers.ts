import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { CostSource, SpanStatus } from './span-input.js';
import { ScoreAnswer, ScoreSummaryAnswer } from '../scores/answers.js';

/** The answers of the trace routes (docs/traces.md). */

const MetadataMap = z.record(z.string(), z.string());

/** docs/traces.md "Trace list item" (`PublicTraceListItem`). */
export const TraceListItemAnswer = z
  .object({
    trace_id: z.string(),
    project_id: z.string(),
    name: z.string(),
    trace_start_time: DateTime,
    user_id: z.string().nullable().describe('user id recorded on the trace'),
    session_id: z.string().nullable(),
    span_count: Count,
    duration_ms: z.number().nullable(),
    error_count: Count,
    input: z.string().nullable(),
    output: z.string().nullable(),
    trace_url: z.string().describe("backend-built link to the trace's detail view in the UI"),
    // The spec lets these four be absent or null (defaults `{}` and 0); this server always sends them.
    metadata_map: MetadataMap.describe("the trace's metadata: the root span's values win, else any span's"),
    total_cost: z.number().describe('sum of the spans’ cost, USD'),
    total_input_tokens: Count,
    total_output_tokens: Count,
    // Beside the spec's fields (issue 37): a trace's tags and models, each the union of its spans', sorted.
    tags: z.array(z.string()).describe("the trace's tags: the union of its spans' tags, sorted"),
    model_names: z.array(z.string()).describe("the models the trace's spans called, sorted"),
  })
  .meta({ id: 'TraceListItem' });

/** Where a trace found by `text_query` matched (docs/traces.md, "Text search"). */
export const TextMatchAnswer = z
  .object({
    span_id: z.string().describe('the earliest span of the trace holding a search term'),
    field: z.enum(['input', 'output', 'error_message']).describe('the first field of the scope that holds one'),
    snippet: z.string().describe('at most 300 characters of that field around the first match, cut between characters'),
  })
  .meta({ id: 'TextMatch' });

/** A list traces item: the trace list item, plus where the text matched when `text_query` was given. */
export const TraceListEntryAnswer = TraceListItemAnswer.extend({
  text_match: TextMatchAnswer.optional().describe('present on items found by `text_query`: where the text matched'),
  scores: z
    .array(ScoreSummaryAnswer)
    .describe("the trace's scores (trace and span level), one summary per name; empty when none"),
}).meta({ id: 'TraceListEntry' });

export const TraceListAnswer = page(TraceListEntryAnswer).meta({ id: 'TraceList' });

const Attributes = z.record(z.string(), z.string());
export const SpanEventAnswer = z
  .object({ name: z.string(), time: DateTime, attributes: Attributes })
  .meta({ id: 'SpanEvent' });
export const SpanLinkAnswer = z
  .object({ trace_id: z.string(), span_id: z.string(), attributes: Attributes })
  .meta({ id: 'SpanLink' });

/** A stored span, as the trace detail answers it (docs/spans.md, "Span fields"). */
export const SpanAnswer = z
  .object({
    trace_id: z.string(),
    span_id: z.string(),
    parent_span_id: z.string().nullable(),
    name: z.string(),
    kind: z
      .string()
      .describe(
        'as sent: `llm`, `tool`, `agent`, `chain`, `retriever`, `embedding`, `http`, `custom`, ... (free text)',
      ),
    start_time: DateTime,
    end_time: DateTime.nullable(),
    duration_ms: z.number().nullable(),
    status: SpanStatus,
    error_type: z.string().nullable(),
    error_message: z.string().nullable(),
    model_name: z.string().nullable(),
    environment: z.string().nullable(),
    user_id: z.string().nullable(),
    session_id: z.string().nullable(),
    input: z.string().nullable().describe('stored as text: strings as they were sent, anything else as JSON'),
    output: z.string().nullable(),
    metadata: MetadataMap,
    cost: z.number(),
    input_tokens: Count,
    output_tokens: Count,
    total_tokens: Count,
    evaluation_run_id: z.string().nullable(),
    // docs/spans.md, "More span fields".
    cost_source: CostSource.describe(
      'where `cost` came from: sent by the producer, computed from the price table, or none',
    ),
    cache_read_tokens: Count.describe("of input_tokens, read from the provider's prompt cache"),
    cache_write_tokens: Count.describe("of input_tokens, written to the provider's prompt cache"),
    reasoning_tokens: Count.describe("of output_tokens, the model's reasoning tokens"),
    time_to_first_token_ms: z
      .number()
      .nullable()
      .describe("streaming: milliseconds from the span's start to its first token"),
    output_tokens_per_second: z
      .number()
      .nullable()
      .describe('output tokens per second of generation, as sent or computed at ingest'),
    events: z.array(SpanEventAnswer).describe('span events (exceptions, messages, stream chunks), in the order sent'),
    links: z.array(SpanLinkAnswer),
    resource: MetadataMap.describe(
      "the producer's resource attributes (host.*, process.*, service.*), apart from metadata",
    ),
    attributes: MetadataMap.describe(
      "the instrumentation conventions' attributes no field used (ai.*, gen_ai.*, http.*, ...), apart from the user's metadata; never in the trace's metadata_map",
    ),
    dropped_attributes_count: Count.describe('attributes, events or links dropped past their caps'),
    tags: z.array(z.string()).describe("the span's tags, as sent"),
    prompt_name: z.string().nullable().describe('the prompt the span used (docs/prompts.md, "Linking spans")'),
    prompt_version: z.number().int().min(1).nullable().describe('the version of `prompt_name` the span used'),
  })
  .meta({ id: 'Span' });

/** `GET /traces/{trace_id}`: the list item's fields plus all spans, ordered by start time. */
export const TraceDetailAnswer = TraceListItemAnswer.extend({
  spans: z.array(SpanAnswer),
  scores: z
    .array(ScoreAnswer)
    .describe("the trace's scores and its spans' (each with its span_id or null), oldest first"),
  comment_count: Count.describe('the comments on the trace and its spans (GET /comments?trace_id=)'),
  truncated: z.literal(true).optional().describe('present when spans were left out to bound the answer'),
}).meta({ id: 'TraceDetail' });

export const SessionSummaryAnswer = z
  .object({
    session_id: z.string(),
    trace_count: Count,
    first_trace_time: DateTime,
    last_trace_time: DateTime,
    total_cost: z.number(),
    total_input_tokens: Count,
    total_output_tokens: Count,
    error_count: Count.describe("errors in the session's traces (spans with status error)"),
    duration_ms: z
      .number()
      .nullable()
      .describe("first trace's start to last trace's end; null while a trace has no end"),
    user_id: z.string().nullable(),
  })
  .meta({ id: 'SessionSummary' });

export const SessionListAnswer = page(SessionSummaryAnswer).meta({ id: 'SessionList' });

/** `GET /sessions/{session_id}`: the session plus its traces, oldest first. */
export const SessionDetailAnswer = SessionSummaryAnswer.extend({
  traces: z.array(TraceListItemAnswer),
  scores: z
    .array(ScoreAnswer)
    .describe("the session's own scores (those naming the session and no trace), oldest first"),
  truncated: z.boolean().describe('true when traces were left out'),
}).meta({ id: 'SessionDetail' });

/** `POST /traces` (docs/spans.md, "Answer"): partial success. */
export const IngestAnswer = z
  .object({
    accepted: Count,
    sampled_out: Count.optional().describe(
      'of the accepted spans, those sampled out (held for the decision window, docs/producer-controls.md); present when the project samples',
    ),
    rejected: z.array(z.object({ index: Count, span_id: z.string().nullable(), errors: z.array(z.string()) })),
  })
  .meta({ id: 'IngestResult' });

/** `POST /otel/v1/traces` answers as OTLP/HTTP does, in the request's encoding. */
export const OtlpAnswer = {
  description: 'OTLP ExportTraceServiceResponse (partial success), in the encoding of the request',
  content: {
    'application/json': {
      schema: z.object({ partialSuccess: z.object({ rejectedSpans: Count, errorMessage: z.string() }).optional() }),
    },
    'application/x-protobuf': {
      schema: z.string().describe('an encoded opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    },
  },
};
