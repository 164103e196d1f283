import type { Predicate, SetField } from './filters.js';
import { TRACE_COLUMNS, TRACE_OUTPUT, type Query } from './queries.js';

/**
 * SQL for listing traces from the rollup (pure; see queries.ts for the tables). Two queries:
 *
 * 1. select: the window's traces, merged per trace with only the values the conditions read (start,
 *    evaluation flag, and whatever the filters need), newest first, one page of ids, and the number
 *    of matches in the same pass (`count() OVER ()`).
 * 2. fetch: the full list items of that page's ids, looked up by their rollup key.
 *
 * The window is a key range: every row of a trace is filed under one hour (`trace_start_hour`, set
 * when the trace was first stored; span-writer.ts), never before the hour of the trace's true start.
 * So the lower bound is exact, and grouping by the key (project, hour, trace) groups by trace.
 * The hour can be later than the true start when spans that started later arrived before the root,
 * so an upper bound (`end_before`) reads `LATE_ROOT_SLACK_HOURS` further.
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

export const LATE_ROOT_SLACK_HOURS = 24;

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

/** Merged values by alias; the select phase computes only those its conditions name. */
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
  ...Object.fromEntries(Object.values(SET_COLUMN).map((c) => [`${c}_all`, `groupUniqArrayArray(${c})`])),
};

type Built = { params: Record<string, unknown>; where: string[]; having: string[] };

function build(p: TraceListParams): Built {
  const b: Built = { params: { project: p.projectId }, where: ['project_id = {project:String}'], having: [] };
  let n = 0;
  const param = (type: string, value: unknown) => {
    const name = `p${n++}`;
    b.params[name] = value;
    return `{${name}:${type}}`;
  };
  if (p.startAfter !== undefined) {
    const from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    b.where.push(`trace_start_hour >= toStartOfHour(${from})`);
    b.having.push(`trace_start >= ${from}`);
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    b.where.push(`trace_start_hour < toStartOfHour(${to}) + INTERVAL ${LATE_ROOT_SLACK_HOURS + 1} HOUR`);
    b.having.push(`trace_start < ${to}`);
  }
  if (!p.includeEvaluations) b.having.push('max(is_evaluation) = 0');
  if (p.traceIds) b.where.push(`trace_id IN ${param('Array(String)', p.traceIds)}`);
  if (p.sessionId !== undefined) b.having.push(`trace_session = ${param('String', p.sessionId)}`);
  if (p.name !== undefined) b.having.push(`positionCaseInsensitiveUTF8(root_span.1, ${param('String', p.name)}) > 0`);
  if (p.userId !== undefined) b.having.push(`trace_user = ${param('String', p.userId)}`);
  if (p.searchQuery !== undefined) {
    const q = param('String', p.searchQuery);
    b.having.push(`(positionCaseInsensitiveUTF8(trace_id, ${q}) > 0 OR positionCaseInsensitiveUTF8(root_span.1, ${q}) > 0
      OR positionCaseInsensitiveUTF8(trace_session, ${q}) > 0 OR positionCaseInsensitiveUTF8(trace_user, ${q}) > 0)`);
  }
  for (const f of p.filters) {
    switch (f.field) {
      case 'trace_id':
        b.where.push(f.op === 'eq' ? `trace_id = ${param('String', f.value)}` : `position(trace_id, ${param('String', f.value)}) > 0`);
        break;
      case 'signal_id':
        b.where.push(
          `trace_id IN (SELECT trace_id FROM findings WHERE project_id = {project:String} AND signal_id IN ${param('Array(String)', p.signalIds ?? [f.value])})`,
        );
        break;
      case 'cost':
      case 'total_tokens':
      case 'errors':
      case 'duration_ms': {
        const guard = f.field === 'duration_ms' ? 'trace_end IS NOT NULL AND ' : '';
        b.having.push(`(${guard}${NUMERIC_EXPR[f.field]} ${OP_SQL[f.op]} ${param('Float64', f.value)})`);
        break;
      }
      case 'metadata': {
        const key = param('String', f.key);
        const value = param('String', f.value);
        const test = (v: string) => (f.op === 'eq' ? `${v} = ${value}` : `position(${v}, ${value}) > 0`);
        // The root's value wins; otherwise any span's value for the key (§3 metadata_map).
        b.having.push(`if(mapContains(root_span.4, ${key}), ${test(`root_span.4[${key}]`)}, arrayExists(kv -> kv.1 = ${key} AND ${test('kv.2')}, metadata_pairs_all))`);
        break;
      }
      default:
        // The trace's set is the union of its spans' (§3): any span with one of the values matches.
        b.having.push(`hasAny(${SET_COLUMN[f.field]}_all, ${param('Array(String)', f.value)})`);
    }
  }
  return b;
}

const GROUP_BY_KEY = 'GROUP BY project_id, trace_start_hour, trace_id';

/** Phase 1. Rows: trace_id, hour (epoch s of its rollup key), total (matches in the window). */
export function selectTracesQuery(p: TraceListParams): Query {
  const b = build(p);
  const having = b.having.join('\n    AND ');
  const used = Object.entries(AGGREGATES)
    .filter(([alias]) => new RegExp(`\\b${alias}\\b`).test(having))
    .map(([alias, expr]) => `,\n    ${expr} AS ${alias}`)
    .join('');
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `SELECT trace_id, toUnixTimestamp(trace_start_hour) AS hour, count() OVER () AS total
FROM (
  SELECT trace_start_hour, trace_id, min(start_time) AS trace_start${used}
  FROM traces
  WHERE ${b.where.join('\n    AND ')}
  ${GROUP_BY_KEY}${having ? `\n  HAVING ${having}` : ''}
)
ORDER BY trace_start ${direction}, trace_id ${direction}
LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
    query_params: { ...b.params, limit: p.limit, offset: p.page * p.limit },
  };
}

/** Phase 2. The list items of the chosen traces, by their rollup key, in the page's order. */
export function fetchTracesQuery(p: TraceListParams, page: { trace_id: string; hour: number }[]): Query {
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `SELECT ${TRACE_OUTPUT}
FROM (
  SELECT ${TRACE_COLUMNS}
  FROM traces
  WHERE project_id = {project:String}
    AND trace_start_hour IN {hours:Array(DateTime('UTC'))}
    AND trace_id IN {ids:Array(String)}
  ${GROUP_BY_KEY}
)
ORDER BY trace_start ${direction}, trace_id ${direction}`,
    query_params: { project: p.projectId, hours: [...new Set(page.map((r) => r.hour))], ids: page.map((r) => r.trace_id) },
  };
}
