import type { Param, Query } from './params.js';

/**
 * The SQL of scores (clickhouse/0018_scores.sql; quality.md §1). A score is replaced or deleted by
 * writing it again, so every read takes each score's newest row, by FINAL on the table's key
 * (project_id, score_id), and applies its conditions to that row (a score re-sent about another trace
 * must leave the first one's reads). Two shapes, by how many scores a read can name (measured at 1M
 * scores, bench/score-reads.ts):
 *
 * - Few (a page's traces, one score): the candidates, ids with some row meeting the read's conditions,
 *   found by a subquery, and FINAL over their ids alone (`currentScores`); the key analysis takes the
 *   subquery's set, so only the candidates' granules are merged. For a list page's 200 scores this one
 *   query measured as fast as the candidates' ids read first and sent back as values (a round trip less).
 * - Many (every score of a name, of a window: filters, SCORES widgets, prompt comparisons): FINAL over
 *   the project's rows with only the columns the read needs, then the conditions (`newestScores`).
 *   A set of hundreds of thousands of candidate ids made FINAL 5 to 10 times slower than merging the
 *   project's few narrow columns outright.
 */

/** The columns every score answer reads. */
export const SCORE_COLUMNS = `score_id, trace_id, span_id, session_id, name, data_type, value, string_value,
  comment, source, evaluator_id, execution_id, evaluator_version, author_user_id, config_id, metadata, environment,
  toUnixTimestamp64Milli(created_at) AS created_ms, toUnixTimestamp64Milli(updated_at) AS updated_ms`;

export type ScoreRow = {
  score_id: string;
  trace_id: string;
  span_id: string;
  session_id: string;
  name: string;
  data_type: string;
  value: number;
  string_value: string;
  comment: string;
  source: string;
  evaluator_id: string;
  execution_id: string;
  evaluator_version: number;
  author_user_id: string;
  config_id: string;
  metadata: Record<string, string>;
  environment: string;
  created_ms: string | number;
  updated_ms: string | number;
};

/**
 * The newest live row of each score of `project` (a param) whose rows meet `where` (conditions on the
 * table's columns), with `columns`: a subquery to select from. The candidates are the ids of the rows
 * meeting `where`; conditions on `trace_id` find them through the trace-ordered projection
 * (clickhouse/0028_score_trace_projection.sql).
 */
export function currentScores(project: string, where: readonly string[], columns = '*'): string {
  const conditions = [`project_id = ${project}`, ...where].join(' AND ');
  return `(SELECT ${columns} FROM scores FINAL
    WHERE project_id = ${project} AND score_id IN (SELECT score_id FROM scores WHERE ${conditions})
  ) WHERE is_deleted = 0 AND ${where.length ? where.join(' AND ') : '1'}`;
}

/**
 * The newest row of every score of `project` with `columns` (which must hold `is_deleted` and every
 * column the caller's conditions read): a subquery to select from, to be followed by
 * `WHERE is_deleted = 0 AND ...`. For reads over many scores (see the head of this file).
 */
export function newestScores(project: string, columns: string): string {
  return `(SELECT ${columns} FROM scores FINAL WHERE project_id = ${project})`;
}

export type ScoreFilters = {
  scoreId?: string;
  traceId?: string;
  spanId?: string;
  sessionId?: string;
  name?: string;
  source?: string;
  evaluatorId?: string;
  evaluatorVersion?: number;
  configId?: string;
  dataType?: string;
  createdAfterMs?: number;
  createdBeforeMs?: number;
};

/** The conditions of `GET /scores`' filters. */
export function scoreConditions(f: ScoreFilters, param: Param): string[] {
  const out: string[] = [];
  const eq = (column: string, value: string | undefined) => {
    if (value !== undefined) out.push(`${column} = ${param('String', value)}`);
  };
  eq('score_id', f.scoreId);
  eq('trace_id', f.traceId);
  eq('span_id', f.spanId);
  eq('session_id', f.sessionId);
  eq('name', f.name);
  eq('source', f.source);
  eq('evaluator_id', f.evaluatorId);
  eq('config_id', f.configId);
  eq('data_type', f.dataType);
  if (f.evaluatorVersion !== undefined) out.push(`evaluator_version = ${param('UInt32', f.evaluatorVersion)}`);
  if (f.createdAfterMs !== undefined)
    out.push(`created_at > fromUnixTimestamp64Milli(${param('Int64', f.createdAfterMs)}, 'UTC')`);
  if (f.createdBeforeMs !== undefined)
    out.push(`created_at < fromUnixTimestamp64Milli(${param('Int64', f.createdBeforeMs)}, 'UTC')`);
  return out;
}

/** `GET /scores`: newest first, a page of them with the number of matches. */
export function listScoresQuery(
  project: string,
  where: string[],
  limit: number,
  offset: number,
  settings: string,
): string {
  return `SELECT ${SCORE_COLUMNS}, count() OVER () AS total
FROM ${currentScores(project, where)}
ORDER BY created_at DESC, score_id
LIMIT ${limit} OFFSET ${offset}
${settings}`;
}

/** The `score` predicate of the trace list (quality.md §1, "Filters") as a condition on `trace_id`. */
export function scorePredicateCondition(
  f: { key: string; op: string; value?: number | readonly string[] },
  param: Param,
  project = '{project:String}',
): string {
  const name = `name = ${param('String', f.key)}`;
  const test: string[] = [name, `trace_id != ''`];
  const ops: Record<string, string> = { eq: '=', neq: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
  if (f.op === 'in') test.push(`string_value IN ${param('Array(String)', f.value)}`);
  else if (ops[f.op]) test.push(`value ${ops[f.op]} ${param('Float64', f.value)}`);
  // Every score of the name may match: the project's newest rows, narrow (see the head of this file).
  const traces = `SELECT trace_id FROM ${newestScores(project, 'trace_id, name, value, string_value, is_deleted')}
    WHERE is_deleted = 0 AND ${test.join(' AND ')}`;
  return f.op === 'is_not_set' ? `trace_id NOT IN (${traces})` : `trace_id IN (${traces})`;
}

/** Every live score of the given traces (trace and span level), oldest first: the detail's `scores`. */
export function traceScoresQuery(project: string, traceIds: string, settings: string): string {
  return `SELECT ${SCORE_COLUMNS}
FROM ${currentScores(project, [`trace_id IN ${traceIds}`])}
ORDER BY created_at, score_id
${settings}`;
}

export type ScoreValueRow = Pick<ScoreRow, 'trace_id' | 'name' | 'data_type' | 'value' | 'string_value'>;

/**
 * traceScoresQuery with only what the list's per-name summaries read, in the same order: FINAL
 * merges these few columns of the candidates' granules rather than all of them (half the time).
 */
export function traceScoreValuesQuery(project: string, traceIds: string, settings: string): string {
  const columns = 'score_id, trace_id, name, data_type, value, string_value, created_at, is_deleted';
  return `SELECT trace_id, name, data_type, value, string_value
FROM ${currentScores(project, [`trace_id IN ${traceIds}`], columns)}
ORDER BY created_at, score_id
${settings}`;
}

export type ExistingScore = { score_id: string; created_ms: string | number; is_deleted: number };

/** The newest row of each named score (to keep `created_at` when a score is replaced). */
export function existingScoresQuery(project: string, ids: string): Query['query'] {
  return `SELECT score_id, toUnixTimestamp64Milli(argMax(created_at, version)) AS created_ms, argMax(is_deleted, version) AS is_deleted
FROM scores WHERE project_id = ${project} AND score_id IN ${ids}
GROUP BY score_id`;
}
