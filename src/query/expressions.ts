/**
 * SQL expressions more than one query spells: said once here so a span's duration, a trace's name or
 * user, or the rollup's late-root slack mean the same in lists, widgets, alerts, detection and public
 * SQL. Pure text over the columns of clickhouse/0001_traces.sql and its successors.
 */

/**
 * Milliseconds from `start` to `end` (DateTime64 columns of a span or a trace row). Only meaningful
 * where `end` is set: wrap it in a NULL check or guard it with `<end> IS NOT NULL`.
 */
export function elapsedMs(start = 'start_time', end = 'end_time'): string {
  return `toUnixTimestamp64Milli(assumeNotNull(${end})) - toUnixTimestamp64Milli(${start})`;
}

/** A span's or trace row's duration for comparisons (guard with `end_time IS NOT NULL`). */
export const DURATION_MS = `(${elapsedMs()})`;

/** A span's or trace row's duration as Float64, NULL while it has no end: what measures aggregate. */
export const DURATION_MS_OR_NULL = `if(end_time IS NULL, NULL, toFloat64(${elapsedMs()}))`;

/** The comparison of each numeric predicate op. */
export const OP_SQL = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * The trace rollup files every row of a trace under one hour (`trace_start_hour`), never before the
 * hour of the trace's true start but possibly later, when spans that started later arrived before the
 * root: an upper bound on a trace's start reads this many hours further (src/traces/list-query.ts).
 */
export const LATE_ROOT_SLACK_HOURS = 24;

/** Rows (of `traces`, or of `spans`, which carry their trace's hour) of traces that start at or after `from`. */
export function traceHourFrom(from: string): string {
  return `trace_start_hour >= toStartOfHour(${from})`;
}

/** Rows of traces that start before `to`: the late-root slack further, where a late root's trace is filed. */
export function traceHourBefore(to: string): string {
  return `trace_start_hour < toStartOfHour(${to}) + INTERVAL ${LATE_ROOT_SLACK_HOURS + 1} HOUR`;
}

/**
 * FINAL over the trace rollup need not merge across its month partitions: they never split a trace
 * (the rollup key starts with the trace's hour).
 */
export const FINAL_SETTINGS: readonly string[] = ['do_not_merge_across_partitions_select_final = 1'];

/**
 * The root span's `[name, {metadata}]` as JSON, after the 16-character rank `root_head` starts with
 * (clickhouse/0005_trace_list_filters.sql): name and metadata conditions read this small column,
 * never `root`, whose state carries the root's input and output.
 */
export const ROOT_HEAD_JSON = 'substring(root_head, 17)';
/** The trace's name: its root span's. */
export const ROOT_NAME = `JSONExtractString(${ROOT_HEAD_JSON}, 1)`;
/** The trace's user and session after the 17-character rank of their heads (same migration). */
export const USER = 'substring(user_head, 18)';
export const SESSION = 'substring(session_head, 18)';

// The characters toJSONString writes escaped (clickhouse/0005's root_head): quote, backslash, slash,
// control characters, U+2028 and U+2029. Every other character stands in the JSON as it is.
const jsonEscapes = (raw: string): boolean =>
  [...raw].some((c) => c < ' ' || c === '"' || c === '\\' || c === '/' || c === '\u2028' || c === '\u2029');

/**
 * The trace's name contains `q` (a placeholder for `raw`), ignoring case. When `raw` has no character
 * JSON escapes, a name holding it holds it in `root_head`'s JSON as written, so a plain search of the
 * column (a necessary condition) runs first and the JSON is parsed only for the heads it finds:
 * parsing every head was most of a 90-day `search_query`.
 */
export function rootNameContains(raw: string, q: string): string {
  const exact = `positionCaseInsensitiveUTF8(${ROOT_NAME}, ${q}) > 0`;
  return jsonEscapes(raw) ? exact : `(positionCaseInsensitiveUTF8(root_head, ${q}) > 0 AND ${exact})`;
}
