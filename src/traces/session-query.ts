import { paramBuilder, type Query } from '../query/params.js';
import { sessionTraceIdsSubquery, textCondition } from './list-query.js';
import { traceCondition } from '../query/conditions.js';
import { FINAL_SETTINGS, SESSION, USER } from '../query/expressions.js';
import type { Predicate } from './filters.js';
import type { TextSearch } from './text-search.js';
import { settingsClause, type QueryLimits } from '../query/limits.js';

/**
 * Sessions (docs/traces.md, "Sessions"): the traces sharing a `session_id`, summed. Built from the trace
 * rollup: each trace's merged row, then one row per session. A session's `user_id` is the
 * one of its earliest trace that has one.
 */

export type SessionRow = {
  session_id: string;
  trace_count: string | number;
  first_ms: string | number;
  last_ms: string | number;
  total_cost: number;
  total_input_tokens: string | number;
  total_output_tokens: string | number;
  error_count: string | number;
  end_ms: string | number | null;
  user_id: string;
  total: string | number;
};

/** Which sessions to list: those with a trace matching all the filters and the text (GET /sessions). */
export type SessionWhere = {
  filters: Predicate[];
  signalIds?: Readonly<Record<string, readonly string[]>>;
  text?: TextSearch;
};

/**
 * Sessions, most recent first; with `sessionId`, that one session, over only the traces with a span
 * in it (a subquery on `spans`, so no id list passes through the process). With `where`, only the
 * sessions one of whose traces matches it; their totals still count all their traces.
 */
export function sessionListQuery(
  p: { projectId: string; limit: number; offset: number; sessionId?: string; where?: SessionWhere },
  limits: QueryLimits,
): Query {
  const params: Record<string, unknown> = { project: p.projectId, limit: p.limit, offset: p.offset };
  const where = ['project_id = {project:String}'];
  const outer = ["trace_session != ''"];
  const matched = matchCondition(p.where, params);
  if (p.sessionId !== undefined) {
    where.push(`trace_id IN (${sessionTraceIdsSubquery('{session:String}')})`);
    outer.push('trace_session = {session:String}');
    params.session = p.sessionId;
  }
  return {
    query: `SELECT
    trace_session AS session_id,
    count() AS trace_count,
    toUnixTimestamp64Milli(min(trace_start)) AS first_ms,
    toUnixTimestamp64Milli(max(trace_start)) AS last_ms,
    sum(cost_sum) AS total_cost,
    sum(input_tokens_sum) AS total_input_tokens,
    sum(output_tokens_sum) AS total_output_tokens,
    sum(errors_sum) AS error_count,
    -- The session's span of time: first trace start to last trace end (null while a trace is open).
    if(countIf(trace_end IS NULL) > 0, NULL, toUnixTimestamp64Milli(max(assumeNotNull(trace_end)))) AS end_ms,
    argMinIf(trace_user, trace_start, trace_user != '') AS user_id,
    count() OVER () AS total
FROM (
  -- One row per trace: FINAL merges a trace's partial rollup rows (see list-query.ts).
  SELECT
    start_time AS trace_start,
    ${SESSION} AS trace_session,
    ${USER} AS trace_user,
    total_cost AS cost_sum,
    input_tokens AS input_tokens_sum,
    output_tokens AS output_tokens_sum,
    error_count AS errors_sum,
    end_time AS trace_end,
    ${matched} AS trace_matched
  FROM traces FINAL
  WHERE ${where.join(' AND ')}
)
WHERE ${outer.join(' AND ')}
GROUP BY trace_session
HAVING max(trace_matched)
ORDER BY last_ms DESC, session_id DESC
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
${settingsClause(limits, FINAL_SETTINGS)}`,
    query_params: params,
  };
}

/** Whether a trace (a FINAL-merged rollup row) matches the session list's filters and text: SQL, 1 when none. */
function matchCondition(where: SessionWhere | undefined, params: Record<string, unknown>): string {
  if (!where) return '1';
  const { param } = paramBuilder(params);
  const conditions = where.filters.map((f) => traceCondition(f, param, where.signalIds));
  if (where.text) conditions.push(textCondition({ includeEvaluations: true }, where.text, param));
  return conditions.length ? `toUInt8(${conditions.join('\n    AND ')})` : '1';
}
