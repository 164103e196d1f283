/**
 * The ClickHouse SQL of traces, as pure builders returning `{query, query_params}`. Every user value
 * travels as a `{name:Type}` parameter; only identifiers chosen here are spliced into the text.
 *
 * Tables (clickhouse/0001_traces.sql): `spans` (one row per span) and `traces` (the rollup: partial
 * rows per trace, merged here with GROUP BY trace_id).
 */

import type { Query } from '../query/params.js';
import { ROOT_HEAD_JSON, ROOT_NAME, SESSION, USER } from '../query/expressions.js';
import { SCAN_MEMORY_BYTES, settingsClause, type QueryLimits, type WorkLimits } from '../query/limits.js';

/** One row per stored trace of the batch: the hour it was filed under and which of the batch's spans it holds already. */
export type ExistingTraceRow = { trace_id: string; trace_start_hour: string | number; stored_span_ids: string[] };

/** The stored-span check answers one row per trace of the batch, so only its time and memory are bounded. */
const STORED_CHECK_LIMITS: WorkLimits = { maxExecutionSeconds: 60, maxMemoryBytes: SCAN_MEMORY_BYTES };

/**
 * Which of a batch's spans are already stored, and the hour each of its stored traces was filed
 * under: one row per trace, whatever the trace's size (the span ids come back only for the batch's
 * own span ids, so a batch appending to a trace of a million spans reads a few rows, not a million).
 * The bloom filter on `spans.trace_id` keeps this to the granules that hold the traces.
 * `stored_span_ids` may name a span id the batch sent for another trace: callers match (trace, span)
 * pairs. The ids travel as one Array(String) turned into a set by a subquery: measured in the embedded
 * engine with 4,000 spans, an Array(Tuple) parameter took 30-160 ms to bind and test per row, this 16-20 ms.
 * Params: project (String), traces (Array(String)), span_ids (Array(String)).
 */
export function existingSpansQuery(
  projectId: string,
  traceIds: string[],
  spanKeys: [traceId: string, spanId: string][],
): Query {
  return {
    query: `SELECT trace_id,
                   toUnixTimestamp(min(trace_start_hour)) AS trace_start_hour,
                   groupUniqArrayIf(span_id, span_id IN (SELECT arrayJoin({span_ids:Array(String)}))) AS stored_span_ids
              FROM spans
             WHERE project_id = {project:String} AND trace_id IN {traces:Array(String)}
             GROUP BY trace_id
            ${settingsClause(STORED_CHECK_LIMITS)}`,
    query_params: { project: projectId, traces: traceIds, span_ids: [...new Set(spanKeys.map((k) => k[1]))] },
  };
}

/**
 * The root span's tuple of a FINAL-merged rollup row: (name, span_id, start, metadata, input, output);
 * see clickhouse/0001_traces.sql. A WITH alias, so the tuple (input and output again) is not answered.
 */
export const ROOT_SPAN_WITH = 'WITH finalizeAggregation(root) AS root_span';

/**
 * A list item's values from one FINAL-merged rollup row (one row per trace), under ROOT_SPAN_WITH.
 * The name, the root's metadata, the user and the session come from the heads the list's filters
 * read (src/traces/list-query.ts, clickhouse/0005_trace_list_filters.sql), so what a filter matched
 * is what the item shows.
 */
export const TRACE_ITEM_COLUMNS = `
    trace_id,
    toUnixTimestamp64Milli(start_time) AS start_ms,
    if(end_time IS NULL, NULL, toUnixTimestamp64Milli(assumeNotNull(end_time))) AS end_ms,
    ${ROOT_NAME} AS name,
    JSONExtract(${ROOT_HEAD_JSON}, 2, 'Map(String, String)') AS root_metadata,
    root_span.5 AS input,
    root_span.6 AS output,
    ${USER} AS trace_user,
    ${SESSION} AS trace_session,
    span_count,
    error_count,
    total_cost,
    input_tokens,
    output_tokens,
    metadata_pairs,
    tags,
    model_names`;

export type TraceAggregateRow = {
  trace_id: string;
  start_ms: string | number;
  end_ms: string | number | null;
  name: string;
  root_metadata: Record<string, string>;
  input: string | null;
  output: string | null;
  trace_user: string;
  trace_session: string;
  span_count: string | number;
  error_count: string | number;
  total_cost: number;
  input_tokens: string | number;
  output_tokens: string | number;
  metadata_pairs: [string, string][];
  tags: string[];
  model_names: string[];
};

export type StoredSpanRow = {
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  start_ms: string | number;
  end_ms: string | number | null;
  status: string;
  error_type: string;
  error_message: string;
  model_name: string;
  environment: string;
  user_id: string;
  session_id: string;
  input: string | null;
  output: string | null;
  metadata: Record<string, string>;
  cost: number;
  input_tokens: string | number;
  output_tokens: string | number;
  total_tokens: string | number;
  evaluation_run_id: string;
  // clickhouse/0007_span_details.sql
  cost_source: string;
  cache_read_tokens: string | number;
  cache_write_tokens: string | number;
  reasoning_tokens: string | number;
  time_to_first_token_ms: number | null;
  output_tokens_per_second: number | null;
  /** JSON text: [{name, time (epoch ms), attributes}]. */
  events: string;
  /** JSON text: [{trace_id, span_id, attributes}]. */
  links: string;
  resource: Record<string, string>;
  dropped_attributes_count: string | number;
  tags: string[];
  // clickhouse/0019_span_prompt.sql
  prompt_name: string;
  prompt_version: string | number;
  // clickhouse/0027_span_attributes.sql
  attributes: Record<string, string>;
};

// One row per span (a copy re-sent by two processes at once is folded by LIMIT 1 BY), by start time.
const ONE_TRACE_SPANS = `FROM spans
             WHERE project_id = {project:String} AND trace_id = {trace:String}
             ORDER BY start_time, span_id, ingested_at DESC
             LIMIT 1 BY trace_id, span_id`;

/**
 * The first `limit` spans of one trace, ordered by start time (then span id).
 * Params: project, trace, limit.
 */
export function traceSpansQuery(projectId: string, traceId: string, limit: number, limits: QueryLimits): Query {
  return {
    query: `SELECT trace_id, span_id, parent_span_id, name, kind,
                   toUnixTimestamp64Milli(start_time) AS start_ms,
                   if(end_time IS NULL, NULL, toUnixTimestamp64Milli(assumeNotNull(end_time))) AS end_ms,
                   status, error_type, error_message, model_name, environment, user_id, session_id,
                   input, output, metadata, cost, input_tokens, output_tokens, total_tokens, evaluation_run_id,
                   cost_source, cache_read_tokens, cache_write_tokens, reasoning_tokens, time_to_first_token_ms,
                   output_tokens_per_second, events, links, resource, dropped_attributes_count, tags,
                   prompt_name, prompt_version, attributes
              ${ONE_TRACE_SPANS}
             LIMIT {limit:UInt32}
             ${settingsClause(limits)}`,
    query_params: { project: projectId, trace: traceId, limit },
  };
}

/**
 * The bytes of the long fields (input, output, metadata, error message, events, links, resource,
 * attributes) of
 * a trace's first `limit` spans, in the same order as traceSpansQuery: what the detail read spends its byte budget on
 * before it reads the spans themselves. Rows: bytes. Params: project, trace, limit.
 */
export function traceSpanBytesQuery(projectId: string, traceId: string, limit: number, limits: QueryLimits): Query {
  return {
    query: `SELECT byteSize(input, output, metadata, error_message, events, links, resource, attributes) AS bytes
              ${ONE_TRACE_SPANS}
             LIMIT {limit:UInt32}
             ${settingsClause(limits)}`,
    query_params: { project: projectId, trace: traceId, limit },
  };
}
