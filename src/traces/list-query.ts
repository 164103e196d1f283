import type { Predicate, SetField } from './filters.js';
import { TRACE_COLUMNS, TRACE_OUTPUT, type Query } from './queries.js';

/**
 * SQL for listing traces from the rollup (pure; see queries.ts for the tables).
 *
 * Plan (measured in bench/run.ts):
 * - Every list merges only the rollup rows of its window: rows are keyed by the hour a trace started
 *   (`trace_start_hour`), so the window is a key range and nothing older is read.
 * - When every filter can be decided row by row (time, evaluation flag, trace id, signal, and the
 *   "`in`" set filters: a trace's set is the union of its rows' sets), a small histogram of traces per
 *   hour gives `meta.total` and the oldest hour the page can reach; the page query then merges only
 *   the rows from that hour on. Newest-first pages touch a few hours whatever the window.
 * - Other filters (sums, durations, names, users, metadata) need each trace's merged values, so the
 *   page query merges the whole window and counts matches with a window function in the same pass.
 *
 * Window bounds are on the trace's start. A trace's rows are filed under the hour of its earliest
 * span known when they arrived, which is never before the trace's real start hour, so the lower hour
 * bound is exact; the upper one reads a few hours past `end_before` for traces whose root arrived
 * after spans that started later.
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
  /** Signal ids whose findings a `signal_id` filter matches (the signal and those merged into it). */
  signalIds?: string[];
  /** Restrict to these traces (a session's). */
  traceIds?: string[];
  sessionId?: string;
  order?: 'newest' | 'oldest';
};

const LATE_ROOT_SLACK_HOURS = 6;

const SET_COLUMN: Record<SetField, string> = {
  model_name: 'model_names',
  environment: 'environments',
  span_kind: 'span_kinds',
  status: 'statuses',
  error_type: 'error_types',
  name: 'span_names',
};

const NUMERIC_EXPR = {
  cost: 'cost_sum',
  total_tokens: 'total_tokens_sum',
  errors: 'errors_n',
  duration_ms: '(toUnixTimestamp64Milli(assumeNotNull(trace_end)) - toUnixTimestamp64Milli(trace_start))',
} as const;

const OP_SQL = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

type Built = {
  params: Record<string, unknown>;
  /** Row-level conditions on `traces` that select whole traces exactly (always applied). */
  rowWhere: string[];
  /** Row-level conditions that hold for a row of a trace iff they hold for the trace (histogram). */
  rowMonotone: string[];
  /** Conditions on merged trace values. */
  having: string[];
  /** Merged set columns the conditions need. */
  setColumns: Set<SetField>;
  /** True when some condition needs merged values (no histogram shortcut). */
  needsMerge: boolean;
};

function build(p: TraceListParams): Built {
  const b: Built = { params: { project: p.projectId }, rowWhere: ['project_id = {project:String}'], rowMonotone: [], having: [], setColumns: new Set(), needsMerge: false };
  let n = 0;
  const param = (type: string, value: unknown) => {
    const name = `p${n++}`;
    b.params[name] = value;
    return `{${name}:${type}}`;
  };
  if (p.startAfter !== undefined) {
    const from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    b.rowWhere.push(`trace_start_hour >= toStartOfHour(${from})`);
    b.rowMonotone.push(`start_time >= ${from}`);
    b.having.push(`trace_start >= ${from}`);
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    b.rowWhere.push(`trace_start_hour < toStartOfHour(${to}) + INTERVAL ${LATE_ROOT_SLACK_HOURS + 1} HOUR`);
    b.rowMonotone.push(`start_time < ${to}`);
    b.having.push(`trace_start < ${to}`);
  }
  if (!p.includeEvaluations) {
    b.rowMonotone.push('is_evaluation = 0');
    b.having.push('is_eval = 0');
  }
  if (p.traceIds) b.rowWhere.push(`trace_id IN ${param('Array(String)', p.traceIds)}`);
  if (p.sessionId !== undefined) {
    b.having.push(`trace_session = ${param('String', p.sessionId)}`);
    b.needsMerge = true;
  }
  if (p.name !== undefined) {
    b.having.push(`positionCaseInsensitiveUTF8(root_span.1, ${param('String', p.name)}) > 0`);
    b.needsMerge = true;
  }
  if (p.userId !== undefined) {
    b.having.push(`trace_user = ${param('String', p.userId)}`);
    b.needsMerge = true;
  }
  if (p.searchQuery !== undefined) {
    const q = param('String', p.searchQuery);
    b.having.push(`(positionCaseInsensitiveUTF8(trace_id, ${q}) > 0 OR positionCaseInsensitiveUTF8(root_span.1, ${q}) > 0
      OR positionCaseInsensitiveUTF8(trace_session, ${q}) > 0 OR positionCaseInsensitiveUTF8(trace_user, ${q}) > 0)`);
    b.needsMerge = true;
  }
  for (const f of p.filters) {
    switch (f.field) {
      case 'trace_id':
        b.rowWhere.push(f.op === 'eq' ? `trace_id = ${param('String', f.value)}` : `position(trace_id, ${param('String', f.value)}) > 0`);
        break;
      case 'signal_id':
        b.rowWhere.push(
          `trace_id IN (SELECT trace_id FROM findings WHERE project_id = {project:String} AND signal_id IN ${param('Array(String)', p.signalIds ?? [f.value])})`,
        );
        break;
      case 'cost':
      case 'total_tokens':
      case 'errors':
      case 'duration_ms': {
        const expr = NUMERIC_EXPR[f.field];
        const guard = f.field === 'duration_ms' ? 'trace_end IS NOT NULL AND ' : '';
        b.having.push(`(${guard}${expr} ${OP_SQL[f.op]} ${param('Float64', f.value)})`);
        b.needsMerge = true;
        break;
      }
      case 'metadata': {
        const key = param('String', f.key);
        const value = param('String', f.value);
        const test = (v: string) => (f.op === 'eq' ? `${v} = ${value}` : `position(${v}, ${value}) > 0`);
        // The root's value wins; otherwise any span's value for the key (§3 metadata_map).
        b.having.push(`if(mapContains(root_span.4, ${key}), ${test(`root_span.4[${key}]`)}, arrayExists(kv -> kv.1 = ${key} AND ${test('kv.2')}, metadata_pairs_all))`);
        b.needsMerge = true;
        break;
      }
      default: {
        const column = SET_COLUMN[f.field];
        const values = param('Array(String)', f.value);
        b.setColumns.add(f.field);
        b.rowMonotone.push(`hasAny(${column}, ${values})`);
        b.having.push(`hasAny(${column}_all, ${values})`);
      }
    }
  }
  return b;
}

/** Merged-value expressions by alias, for the select phase to compute only what its HAVING uses. */
const AGGREGATES: Record<string, string> = {
  trace_end: 'max(end_time)',
  root_span: 'argMinMerge(root)',
  trace_user: 'argMinMerge(user_id)',
  trace_session: 'argMinMerge(session_id)',
  spans_n: 'sum(span_count)',
  errors_n: 'sum(error_count)',
  cost_sum: 'sum(total_cost)',
  total_tokens_sum: 'sum(total_tokens)',
  metadata_pairs_all: 'groupUniqArrayArray(metadata_pairs)',
  is_eval: 'max(is_evaluation)',
};

function setAggregates(b: Built): string {
  return [...b.setColumns].map((f) => `,\n    groupUniqArrayArray(${SET_COLUMN[f]}) AS ${SET_COLUMN[f]}_all`).join('');
}

function pageQuery(p: TraceListParams, b: Built, fromHour: number | null): Query {
  const where = [...b.rowWhere];
  const params: Record<string, unknown> = { ...b.params, limit: p.limit, offset: p.page * p.limit };
  if (fromHour !== null) {
    where.push("trace_start_hour >= {from_hour:DateTime('UTC')}");
    params.from_hour = fromHour;
  }
  return {
    query: `SELECT ${TRACE_OUTPUT}
FROM (
  SELECT ${TRACE_COLUMNS}${setAggregates(b)}
  FROM traces
  WHERE ${where.join('\n    AND ')}
  GROUP BY trace_id${b.having.length ? `\n  HAVING ${b.having.join('\n    AND ')}` : ''}
)
ORDER BY trace_start DESC, trace_id DESC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
    query_params: params,
  };
}

/**
 * Select phase of a filtered list: which traces of the window match, newest first, and how many;
 * merging only the values the conditions read (no root input/output, no metadata unless asked).
 */
function selectQuery(p: TraceListParams, b: Built): Query {
  const having = b.having.join('\n    AND ');
  const used = Object.entries(AGGREGATES)
    .filter(([alias]) => new RegExp(`\\b${alias}\\b`).test(having))
    .map(([alias, expr]) => `,\n    ${expr} AS ${alias}`)
    .join('');
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `SELECT trace_id, toUnixTimestamp(min_hour) AS min_hour, count() OVER () AS total
FROM (
  SELECT trace_id, min(start_time) AS trace_start, min(trace_start_hour) AS min_hour${used}${setAggregates(b)}
  FROM traces
  WHERE ${b.rowWhere.join('\n    AND ')}
  GROUP BY trace_id${having ? `\n  HAVING ${having}` : ''}
)
ORDER BY trace_start ${direction}, trace_id ${direction}
LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
    query_params: { ...b.params, limit: p.limit, offset: p.page * p.limit },
  };
}

/** Fetch phase: the full list items of the chosen traces. */
function fetchQuery(p: TraceListParams, b: Built, traceIds: string[], fromHour: number): Query {
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `SELECT ${TRACE_OUTPUT}
FROM (
  SELECT ${TRACE_COLUMNS}
  FROM traces
  WHERE ${b.rowWhere.join('\n    AND ')}
    AND trace_start_hour >= {from_hour:DateTime('UTC')}
    AND trace_id IN {page_ids:Array(String)}
  GROUP BY trace_id
)
ORDER BY trace_start ${direction}, trace_id ${direction}`,
    query_params: { ...b.params, from_hour: fromHour, page_ids: traceIds },
  };
}

export type TraceListPlan =
  | { kind: 'histogram'; histogram: Query; page: (fromHour: number | null) => Query }
  | { kind: 'select'; select: Query; fetch: (traceIds: string[], fromHour: number) => Query };

/**
 * The queries for one list request.
 * - 'histogram': run `histogram` (rows: hour, n), pick the oldest hour the page needs with
 *   `pageStartHour`, then run `page(hour)` for the list items.
 * - 'select': run `select` (rows: trace_id, min_hour, total), then `fetch(ids, oldest min_hour)`.
 */
export function planTraceList(p: TraceListParams): TraceListPlan {
  const b = build(p);
  if (b.needsMerge || p.order === 'oldest') {
    return { kind: 'select', select: selectQuery(p, b), fetch: (ids, fromHour) => fetchQuery(p, b, ids, fromHour) };
  }
  const conditions = [...b.rowWhere, ...b.rowMonotone];
  return {
    kind: 'histogram',
    histogram: {
      query: `SELECT toUnixTimestamp(trace_start_hour) AS hour, uniqExact(trace_id) AS n
FROM traces
WHERE ${conditions.join('\n  AND ')}
GROUP BY hour
ORDER BY hour DESC`,
      query_params: b.params,
    },
    page: (fromHour) => pageQuery(p, b, fromHour),
  };
}

/** Total traces, and the oldest hour (epoch s) whose traces the requested page can reach. */
export function pageStartHour(histogram: { hour: number; n: number }[], needed: number): { total: number; fromHour: number | null } {
  let total = 0;
  let fromHour: number | null = null;
  for (const { hour, n } of histogram) {
    if (total < needed) fromHour = hour;
    total += n;
  }
  return { total, fromHour };
}
