/**
 * The words of a query widget's spec (docs/dashboards.md): the server's contract (spec.ts) and the web
 * app's editor (web/src/widget-spec.ts) both read these lists, so a measure or aggregation is added in
 * one place. Pure: it imports only the pure aggregation list, safe in the browser bundle.
 */

export const WIDGET_TYPES = ['timeseries', 'stat', 'table', 'bar', 'markdown'] as const;
export const QUERY_WIDGET_TYPES = ['timeseries', 'stat', 'table', 'bar'] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];

/** `SCORES` (quality.md §1, docs/scores.md): one score name's values, by when each score was written. */
export const VIEWS = ['SPANS', 'TRACES', 'SCORES'] as const;
export type View = (typeof VIEWS)[number];

export { AGGREGATIONS, type Aggregation } from '../query/aggregations.js';

export const INTERVALS = ['auto', '1m', '5m', '1h', '1d'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * Measures by view. `latency` is an alias of `duration_ms`. `error_rate` is the share of rows in
 * error (spans with status error; traces with at least one), whatever the aggregation.
 * `count` counts rows; with `uniq`, a measure names the column whose distinct values are counted.
 */
export const MEASURES: Record<View, readonly string[]> = {
  SPANS: [
    'count',
    'latency',
    'duration_ms',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'error_count',
    'error_rate',
    'user_id',
    'session_id',
    'trace_id',
    'model_name',
    // More span fields (docs/spans.md): read from raw spans, the rollups keep no state for them.
    'cache_read_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'time_to_first_token_ms',
    'output_tokens_per_second',
  ],
  TRACES: [
    'count',
    'latency',
    'duration_ms',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'error_count',
    'error_rate',
    'span_count',
    'user_id',
    'session_id',
  ],
  SCORES: ['value'],
};

/** The aggregations of the SCORES view's `value` (no `uniq`: a value is no identity). */
export const SCORE_AGGREGATIONS = ['avg', 'min', 'max', 'sum', 'count', 'p50', 'p75', 'p90', 'p95', 'p99'] as const;

/** Fields a widget may group by (`metadata.<key>` too). */
export const GROUP_FIELDS: Record<View, readonly string[]> = {
  SPANS: [
    'model_name',
    'environment',
    'kind',
    'status',
    'name',
    'error_type',
    'user_id',
    'session_id',
    // The prompt version a span used (docs/prompts.md): compare latency, cost and tokens by version.
    'prompt_name',
    'prompt_version',
  ],
  TRACES: ['name', 'user_id', 'session_id'],
  // The score's own fields, then its trace's (docs/scores.md, "The SCORES view").
  SCORES: [
    'score_source',
    'score_string_value',
    'evaluator_version',
    'model_name',
    'environment',
    'name',
    'user_id',
    'session_id',
    'prompt_name',
    'prompt_version',
  ],
};

/** Measures that name a column: counted (`count`) or counted distinct (`uniq`), never summed. */
export const IDENTITY_MEASURES: readonly string[] = ['user_id', 'session_id', 'trace_id', 'model_name'];
