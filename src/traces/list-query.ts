import type { Predicate } from './filters.js';
import { metadataCandidates, traceCondition } from '../query/conditions.js';
import { ROOT_SPAN_WITH, TRACE_ITEM_COLUMNS } from './queries.js';
import { paramBuilder, type Query } from '../query/params.js';
import {
  DURATION_MS_OR_NULL,
  FINAL_SETTINGS,
  rootNameContains,
  SESSION,
  traceHourBefore,
  traceHourFrom,
  USER,
} from '../query/expressions.js';
import { settingsClause, type QueryLimits } from '../query/limits.js';
import { textTraceKeysSubquery, traceKeyOf, type TextSearch } from './text-search.js';
import { JUDGE_ENVIRONMENT } from './vocabulary.js';

/**
 * SQL for listing traces from the rollup (pure; see queries.ts for the tables). Two queries:
 *
 * 1. select: the window's traces read with FINAL (each trace's partial rows merged as they are read,
 *    in key order; parts already merged are passed through), the conditions on the merged values,
 *    newest first, one page of ids, and the number of matches in the same pass (`count() OVER ()`).
 *    FINAL measured about twice as fast as GROUP BY trace here (bench/run.ts). A metadata predicate
 *    first takes the traces holding a matching pair from the pair index `trace_metadata_kv`
 *    (clickhouse/0014_trace_metadata_kv.sql) and FINAL merges only their rows (`prewhere` below);
 *    reading every trace's pairs was most of a 90-day metadata list.
 * 2. fetch: the full list items of that page's ids, looked up by their rollup key.
 *
 * The window is a key range: every row of a trace is filed under one hour (`trace_start_hour`, set
 * when the trace was first stored; span-writer.ts), never before the hour of the trace's true start.
 * So the lower bound is exact, and FINAL on the key (project, hour, trace) merges whole traces; the
 * month partitions never split a trace, so FINAL need not merge across them.
 * The hour can be later than the true start when spans that started later arrived before the root,
 * so an upper bound (`end_before`) reads `LATE_ROOT_SLACK_HOURS` further.
 *
 * Both queries run under the caller's limits (src/query/limits.ts), in their SETTINGS.
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
  /**
   * Judge traces (environment JUDGE_ENVIRONMENT, docs/evaluators.md): true keeps them, false leaves
   * them out; unset, they are left out unless an `environment` filter names that environment.
   */
  includeJudgeTraces?: boolean;
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
  /** `sort`/`order` of GET /traces: another order than newest first (ties newest first). */
  sort?: { field: TraceSortField; direction: 'asc' | 'desc' };
  /** `text_query`/`text_scope`: traces whose spans hold every term (src/traces/text-search.ts). */
  text?: TextSearch;
};

/** The columns the list can be sorted by (GET /traces `sort`), as expressions on a merged `traces` row. */
export const TRACE_SORT_FIELDS = {
  start_time: 'start_time',
  duration_ms: DURATION_MS_OR_NULL,
  total_cost: 'total_cost',
  total_tokens: 'total_tokens',
  span_count: 'span_count',
  error_count: 'error_count',
} as const;
export type TraceSortField = keyof typeof TRACE_SORT_FIELDS;

/**
 * `where`: conditions on the FINAL-merged rows. `prewhere`: conditions on `trace_id` alone, applied
 * to the partial rows before FINAL merges them, which is exact because all partial rows of a trace
 * share its id: each limits the merge, and the reads of the other columns, to the traces a metadata
 * predicate can match (`metadataCandidates`). Measured faster than the same test on the whole key
 * (trace_start_hour, trace_id): the hour adds nothing, a trace's rows are all filed under one.
 */
type Built = { params: Record<string, unknown>; where: string[]; prewhere: string[]; settings: string[] };

/**
 * A `score` predicate is a set of trace ids (src/query/scores.ts), so it goes in the PREWHERE too:
 * FINAL then merges only the scored traces' rows. Its set is kept out of the key analysis, where a
 * set of tens of thousands of ids cost more than it saved (the trace id is the key's third column):
 * at 1M spans a 90-day list with a `score` filter measured 75-85 ms so, 175-250 ms with the set in
 * WHERE and the key analysis.
 */
const SCORE_SET_SETTINGS = ['use_index_for_in_with_subqueries = 0'];

function build(p: TraceListParams): Built {
  const b: Built = {
    params: { project: p.projectId },
    where: ['project_id = {project:String}'],
    prewhere: [],
    settings: [...FINAL_SETTINGS],
  };
  const { param } = paramBuilder(b.params);
  let from: string | undefined;
  const hours: string[] = [];
  if (p.startAfter !== undefined) {
    from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    hours.push(traceHourFrom(from));
    b.where.push(traceHourFrom(from), `start_time >= ${from}`);
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    hours.push(traceHourBefore(to));
    b.where.push(traceHourBefore(to), `start_time < ${to}`);
  }
  if (!p.includeEvaluations) b.where.push('is_evaluation = 0');
  if (!includesJudgeTraces(p)) b.where.push(`NOT has(environments, ${param('String', JUDGE_ENVIRONMENT)})`);
  if (p.traceIds) b.where.push(`trace_id IN ${param('Array(String)', p.traceIds)}`);
  if (p.sessionId !== undefined) {
    const session = param('String', p.sessionId);
    b.where.push(`trace_id IN (${sessionTraceIdsSubquery(session)})`, `${SESSION} = ${session}`);
  }
  if (p.name !== undefined) b.where.push(rootNameContains(p.name, param('String', p.name)));
  if (p.userId !== undefined) b.where.push(`${USER} = ${param('String', p.userId)}`);
  if (p.searchQuery !== undefined) {
    const q = param('String', p.searchQuery);
    b.where.push(`(positionCaseInsensitiveUTF8(trace_id, ${q}) > 0 OR ${rootNameContains(p.searchQuery, q)}
      OR positionCaseInsensitiveUTF8(${SESSION}, ${q}) > 0 OR positionCaseInsensitiveUTF8(${USER}, ${q}) > 0)`);
  }
  for (const f of p.filters) {
    if (f.field === 'metadata') {
      const { candidates, rest } = metadataCandidates(f, param, { project: '{project:String}', hours });
      b.prewhere.push(`trace_id IN (${candidates})`);
      b.where.push(rest);
    } else if (f.field === 'score') {
      b.prewhere.push(traceCondition(f, param));
      if (b.settings.length === FINAL_SETTINGS.length) b.settings.push(...SCORE_SET_SETTINGS);
    } else b.where.push(traceCondition(f, param, p.signalIds, { project: '{project:String}', from }));
  }
  if (p.text) b.where.push(textCondition(p, p.text, param));
  return b;
}

function includesJudgeTraces(p: TraceListParams): boolean {
  if (p.includeJudgeTraces !== undefined) return p.includeJudgeTraces;
  return p.filters.some((f) => f.field === 'environment' && f.value.includes(JUDGE_ENVIRONMENT));
}

/**
 * The ids of the traces with a span in a session (`session`: a parameter placeholder), found through
 * the bloom filter on `spans.session_id`. Params: project.
 */
export function sessionTraceIdsSubquery(session: string): string {
  return `SELECT trace_id FROM spans WHERE project_id = {project:String} AND session_id = ${session}`;
}

/**
 * The traces whose spans hold the text, by their key `(trace_start_hour, sipHash64(trace_id))`
 * (src/traces/text-search.ts: the index names traces so), for a query over `traces`. Only the spans
 * and postings the list's window can hold are read: a trace's spans start at or after the trace's
 * start (so `start_after` bounds them by the spans' own key), and carry the trace's rollup hour (so
 * `end_before` bounds them the way it bounds the rollup, late-root slack included, through the minmax
 * index on `spans.trace_start_hour`; the postings are keyed by that hour too).
 */
export function textCondition(
  p: Pick<TraceListParams, 'startAfter' | 'endBefore' | 'includeEvaluations'>,
  text: TextSearch,
  param: (type: string, value: unknown) => string,
): string {
  const window: string[] = [];
  const hours: string[] = [];
  if (p.startAfter !== undefined) {
    const from = param("DateTime64(3, 'UTC')", p.startAfter / 1000);
    window.push(`start_time >= ${from}`);
    hours.push(traceHourFrom(from));
  }
  if (p.endBefore !== undefined) {
    const to = param("DateTime64(3, 'UTC')", p.endBefore / 1000);
    hours.push(traceHourBefore(to));
  }
  if (!p.includeEvaluations) window.push("evaluation_run_id = ''");
  return `(trace_start_hour, ${traceKeyOf('trace_id')}) IN (${textTraceKeysSubquery(text, param, window, hours)})`;
}

/** Phase 1. Rows: trace_id, hour (epoch s of its rollup key), total (matches in the window). */
export function selectTracesQuery(p: TraceListParams, limits: QueryLimits): Query {
  const b = build(p);
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  // A chosen sort first (no value, as a running trace's duration, last either way), then newest first.
  const sorted = p.sort
    ? `${TRACE_SORT_FIELDS[p.sort.field]} ${p.sort.direction === 'asc' ? 'ASC' : 'DESC'} NULLS LAST, `
    : '';
  return {
    query: `SELECT trace_id, toUnixTimestamp(trace_start_hour) AS hour, count() OVER () AS total
FROM traces FINAL${b.prewhere.length ? `\nPREWHERE ${b.prewhere.join('\n  AND ')}` : ''}
WHERE ${b.where.join('\n  AND ')}
ORDER BY ${sorted}start_time ${direction}, trace_id ${direction}
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
${settingsClause(limits, b.settings)}`,
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

/**
 * The page's keys are a PREWHERE (exact under FINAL: every partial row of a trace carries its key),
 * so FINAL merges the page's rows alone, not every row of the granules they lie in with their
 * roots' input and output: on a page spread over a window (a rare metadata value, 90 days) this
 * measured 1.5 times faster.
 */
function pageQuery(p: TraceListParams, page: PageKey[], columns: string, limits: QueryLimits): Query {
  const direction = p.order === 'oldest' ? 'ASC' : 'DESC';
  return {
    query: `${ROOT_SPAN_WITH}
SELECT ${columns}
FROM traces FINAL
PREWHERE trace_start_hour IN {hours:Array(DateTime('UTC'))} AND trace_id IN {ids:Array(String)}
WHERE project_id = {project:String}
ORDER BY start_time ${direction}, trace_id ${direction}
${settingsClause(limits, FINAL_SETTINGS)}`,
    query_params: {
      project: p.projectId,
      hours: [...new Set(page.map((r) => r.hour))],
      ids: page.map((r) => r.trace_id),
    },
  };
}
