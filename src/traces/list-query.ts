import type { Predicate, SetField } from './filters.js';
import { ROOT_SPAN_WITH, TRACE_ITEM_COLUMNS, type Query } from './queries.js';
import { settingsClause, type QueryLimits } from '../query-limits.js';
import { textTraceIdsSubquery, type TextSearch } from './text-search.js';

/**
 * SQL for listing traces from the rollup (pure; see queries.ts for the tables). Two queries:
 *
 * 1. select: the window's traces read with FINAL (each trace's partial rows merged as they are read,
 *    in key order; parts already merged are passed through), the conditions on the merged values,
 *    newest first, one page of ids, and the number of matches in the same pass (`count() OVER ()`).
 *    FINAL measured about twice as fast as GROUP BY trace here (bench/run.ts).
 * 2. fetch: the full list items of that page's ids, looked up by their rollup key.
 *
 * The window is a key range: every row of a trace is filed under one hour (`trace_start_hour`, set
 * when the trace was first stored; span-writer.ts), never before the hour of the trace's true start.
 * So the lower bound is exact, and FINAL on the key (project, hour, trace) merges whole traces; the
 * month partitions never split a trace, so FINAL need not merge across them.
 * The hour can be later than the true start when spans that started later arrived before the root,
 * so an upper bound (`end_before`) reads `LATE_ROOT_SLACK_HOURS` further.
 *
 * Both queries run under the caller's limits (src/query-limits.ts), in their SETTINGS.
 */

export type TraceListParams = {
  projectId: string;
  limit: number;
  page: number;
  /** Inclusive, epoch ms. */
  startAfter?: number;
  /** Exclusive, epoch ms. */
  endBefore?: number;
  includeEvaluations: boolean;
  name?: string;
  userId?: string;
  searchQuery?: string;
  filters: Predicate[];
  /**
   * By the signal id a `signal_id` predicate names: the signals whose findings it matches (the signal
   * and those merged into it; src/signals/service.ts `signalMembers`). Unlisted ids match their own.
   */
  signalIds?: Readonly<Record<string, readonly string[]>>;
  /** Restrict to these traces. */
  traceIds?: string[];
  /**
   * A session's traces: those whose trace-level session is this one, among the traces with a span
   * in it (found in ClickHouse by a subquery, so no id list, however long, passes through here).
   */
  sessionId?: string;
  order?: 'newest' | 'oldest';
  /** `text_query`/`text_scope`: traces whose spans hold every term (src/traces/text-search.ts). */
  text?: TextSearch;
};

export const LATE_ROOT_SLACK_HOURS = 24;

const SET_COLUMN: Record<SetField, string> = {
  model_name: 'model_names',
  environment: 'environments',
  span_kind: 'span_kinds',
  status: 'statuses',
  error_type: 'error_types',
  name: 'span_names',
};

// Row-level expressions over a FINAL-merged rollup row (one row = one trace).
const NUMERIC_EXPR = {
  cost: 'total_cost',
  total_tokens: 'total_tokens',
  errors: 'error_count',
  duration_ms: '(toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))',
} as const;
/**
 * The root span's `[name, {metadata}]` as JSON, after the 16-character rank `root_head` starts with
 * (clickhouse/0005_trace_list_filters.sql): name and metadata conditions read this small column,
 * never `root`, whose state carries the root's input and output.
 */
export const ROOT_HEAD_JSON = 'substring(root_head, 17)';
const ROOT_NAME = `JSONExtractString(${ROOT_HEAD_JSON}, 1)`;
/** The trace's user and session after the 17-character rank of their heads (same migration). */
export const USER = 'substring(user_head, 18)';
export const SESSION = 'substring(session_head, 18)';

export const OP_SQL = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

type Built = { params: Record<string, unknown>; where: string[] };

function build(p: TraceListParams): Built {
  const b: Built = { params: { project: p.projectId }, where: ['project_id = {project:String}'] };
  let n = 0;
  const param = (type: string, value: unknown) => {
    const name = `p${n++}`;
    b.params[name] = value;
    return `{${name}:${type}}`;
  };
  let from: string | undefined;
  if (p.startAfter !== undefined) {
    from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    b.where.push(`trace_start_hour >= toStartOfHour(${from})`, `start_time >= ${from}`);
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    b.where.push(
      `trace_start_hour < toStartOfHour(${to}) + INTERVAL ${LATE_ROOT_SLACK_HOURS + 1} HOUR`,
      `start_time < ${to}`,
    );
  }
  if (!p.includeEvaluations) b.where.push('is_evaluation = 0');
  if (p.traceIds) b.where.push(`trace_id IN ${param('Array(String)', p.traceIds)}`);
  if (p.sessionId !== undefined) {
    const session = param('String', p.sessionId);
    b.where.push(`trace_id IN (${sessionTraceIdsSubquery(session)})`, `${SESSION} = ${session}`);
  }
  if (p.name !== undefined) b.where.push(`positionCaseInsensitiveUTF8(${ROOT_NAME}, ${param('String', p.name)}) > 0`);
  if (p.userId !== undefined) b.where.push(`${USER} = ${param('String', p.userId)}`);
  if (p.searchQuery !== undefined) {
    const q = param('String', p.searchQuery);
    b.where
      .push(`(positionCaseInsensitiveUTF8(trace_id, ${q}) > 0 OR positionCaseInsensitiveUTF8(${ROOT_NAME}, ${q}) > 0
      OR positionCaseInsensitiveUTF8(${SESSION}, ${q}) > 0 OR positionCaseInsensitiveUTF8(${USER}, ${q}) > 0)`);
  }
  for (const f of p.filters)
    b.where.push(traceFilterCondition(f, param, p.signalIds, { project: '{project:String}', from }));
  if (p.text) b.where.push(textCondition(p, p.text, param));
  return b;
}

/**
 * Where the spans of the traces a query reads lie: the project's placeholder, and the window's
 * lower bound when it has one (a trace's spans never start before the trace).
 */
export type SpanScope = { project: string; from?: string };

/**
 * One predicate of the predicate table as a condition on a FINAL-merged `traces` row (one row per
 * trace). Shared by the trace list and the TRACES view of widgets, so a filter means the same in both.
 * `signalIds`: by named signal, the signals whose findings a `signal_id` predicate matches (the one named, by default).
 */
export function traceFilterCondition(
  f: Predicate,
  param: (type: string, value: unknown) => string,
  signalIds?: Readonly<Record<string, readonly string[]>>,
  scope: SpanScope = { project: '{project:String}' },
): string {
  switch (f.field) {
    case 'trace_id':
      return f.op === 'eq'
        ? `trace_id = ${param('String', f.value)}`
        : `position(trace_id, ${param('String', f.value)}) > 0`;
    case 'signal_id':
      return `trace_id IN (SELECT trace_id FROM findings WHERE project_id = {project:String} AND signal_id IN ${param('Array(String)', signalIds?.[f.value] ?? [f.value])})`;
    case 'cost':
    case 'total_tokens':
    case 'errors':
    case 'duration_ms': {
      const guard = f.field === 'duration_ms' ? 'end_time IS NOT NULL AND ' : '';
      return `(${guard}${NUMERIC_EXPR[f.field]} ${OP_SQL[f.op]} ${param('Float64', f.value)})`;
    }
    case 'time_to_first_token_ms':
    case 'output_tokens_per_second': {
      // Any span of the trace compares as asked (docs/filters.md); spans without the timing never do.
      // Read from `spans` (clickhouse/0007_span_details.sql) rather than a rollup column: ingest
      // feeds no extra view for these rare filters, and the window's lower bound prunes the scan.
      const window = scope.from === undefined ? '' : ` AND start_time >= ${scope.from}`;
      return `trace_id IN (SELECT trace_id FROM spans WHERE project_id = ${scope.project}${window}
      AND ${f.field} ${OP_SQL[f.op]} ${param('Float64', f.value)})`;
    }
    case 'metadata': {
      const key = param('String', f.key);
      const value = param('String', f.value);
      // The root's value wins; otherwise any span's value for the key (metadata_map, docs/concepts.md).
      // `metadata_kv` holds every span's pairs as '<key length>:<key><value>' and `root_head` the
      // root's as JSON (clickhouse/0005_trace_list_filters.sql). A trace matches when some span
      // has a matching value and the root, if it has the key, is one of them: the cheap has() over
      // short strings runs first, the JSON of the root only for the traces it lets through.
      const prefix = `concat(toString(length(${key})), ':', ${key})`;
      if (f.op === 'eq') {
        return `(has(metadata_kv, concat(${prefix}, ${value}))
      AND if(JSONHas(${ROOT_HEAD_JSON}, 2, ${key}), JSONExtractString(${ROOT_HEAD_JSON}, 2, ${key}) = ${value}, 1))`;
      }
      return `(arrayExists(kv -> position(kv, ${value}) > 0, metadata_kv)
      AND if(JSONHas(${ROOT_HEAD_JSON}, 2, ${key}), position(JSONExtractString(${ROOT_HEAD_JSON}, 2, ${key}), ${value}) > 0,
        arrayExists(kv -> startsWith(kv, ${prefix}) AND position(substring(kv, length(${prefix}) + 1), ${value}) > 0, metadata_kv)))`;
    }
    default:
      // The trace's set is the union of its spans' (docs/filters.md): any span with one of the values matches.
      return `hasAny(${SET_COLUMN[f.field]}, ${param('Array(String)', f.value)})`;
  }
}

/**
 * The ids of the traces with a span in a session (`session`: a parameter placeholder), found through
 * the bloom filter on `spans.session_id`. Params: project.
 */
export function sessionTraceIdsSubquery(session: string): string {
  return `SELECT trace_id FROM spans WHERE project_id = {project:String} AND session_id = ${session}`;
}

/**
 * `trace_id IN` the traces whose spans hold the text, reading only the spans the list's window can
 * hold: a trace's spans start at or after the trace's start (so `start_after` bounds them by the
 * spans' own key), and carry the trace's rollup hour (so `end_before` bounds them the way it bounds
 * the rollup, late-root slack included, through the minmax index on `spans.trace_start_hour`).
 */
export function textCondition(
  p: Pick<TraceListParams, 'startAfter' | 'endBefore' | 'includeEvaluations'>,
  text: TextSearch,
  param: (type: string, value: unknown) => string,
): string {
  const window: string[] = [];
  if (p.startAfter !== undefined) {
    const from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    window.push(`start_time >= ${from}`, `trace_start_hour >= toStartOfHour(${from})`);
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    window.push(`trace_start_hour < toStartOfHour(${to}) + INTERVAL ${LATE_ROOT_SLACK_HOURS + 1} HOUR`);
  }
  if (!p.includeEvaluations) window.push("evaluation_run_id = ''");
  return `trace_id IN (${textTraceIdsSubquery(text, param, window)})`;
}

const FINAL_SETTINGS = ['do_not_merge_across_partitions_select_final = 1'];

/** Phase 1. Rows: trace_id, hour (epoch s of its rollup key), total (matches in the window). */
export function selectTracesQuery(p: TraceListParams, limits: QueryLimits): Query {
  const b = build(p);
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `SELECT trace_id, toUnixTimestamp(trace_start_hour) AS hour, count() OVER () AS total
FROM traces FINAL
WHERE ${b.where.join('\n  AND ')}
ORDER BY start_time ${direction}, trace_id ${direction}
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
${settingsClause(limits, FINAL_SETTINGS)}`,
    query_params: { ...b.params, limit: p.limit, offset: p.page * p.limit },
  };
}

export type PageKey = { trace_id: string; hour: number };

/** Phase 2. The list items of the chosen traces, by their rollup key, in the page's order. */
export function fetchTracesQuery(p: TraceListParams, page: PageKey[], limits: QueryLimits): Query {
  return pageQuery(p, page, TRACE_ITEM_COLUMNS, limits);
}

/**
 * The bytes each chosen trace's list item carries in its long fields (the root's input, output and
 * metadata, and every span's metadata pairs), in the page's order: what a session read spends its
 * byte budget on before it fetches the items. Rows: trace_id, bytes.
 */
export function traceItemBytesQuery(p: TraceListParams, page: PageKey[], limits: QueryLimits): Query {
  return pageQuery(
    p,
    page,
    'trace_id, byteSize(root_span.4, root_span.5, root_span.6, metadata_pairs) AS bytes',
    limits,
  );
}

function pageQuery(p: TraceListParams, page: PageKey[], columns: string, limits: QueryLimits): Query {
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `${ROOT_SPAN_WITH}
SELECT ${columns}
FROM traces FINAL
WHERE project_id = {project:String}
  AND trace_start_hour IN {hours:Array(DateTime('UTC'))}
  AND trace_id IN {ids:Array(String)}
ORDER BY start_time ${direction}, trace_id ${direction}
${settingsClause(limits, FINAL_SETTINGS)}`,
    query_params: {
      project: p.projectId,
      hours: [...new Set(page.map((r) => r.hour))],
      ids: page.map((r) => r.trace_id),
    },
  };
}
