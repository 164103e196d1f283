import { DURATION_MS } from './expressions.js';
import { MIB, READ_MEMORY_BYTES, settingsClause, type QueryLimits } from './limits.js';
import { paramBuilder, type Query } from './params.js';
import { newestScores } from './scores.js';

/**
 * The per-version comparison of one prompt (docs/prompts.md, "Comparing versions"): over the spans
 * that name the prompt (clickhouse/0019_span_prompt.sql) in a window, a row per version with its
 * traces, spans, latency p50/p95 (of the spans that ended), cost, tokens, error rate and the averages
 * of its traces' scores. One pass over the window's spans of the project, reading only the few
 * columns named here: the scores ride along, as the scored traces each version's spans name, joined
 * to the scores afterwards (a second pass over the spans to find those traces made the comparison
 * 1.4 times slower at 1M spans). Traces are counted, and matched to the scored ones, by a 64-bit
 * hash of their id: an exact set of numbers costs a third of one of strings, and two of a million
 * ids share a hash with odds of about 1 in 30 million (a shared hash only admits a trace to the
 * join, which matches ids). Pure.
 */

/** A row per version at most (a prompt has few), each a few numbers. */
export const PROMPT_METRICS_LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: READ_MEMORY_BYTES,
  maxResultRows: 100_000,
  maxResultBytes: 16 * MIB,
};

export type PromptMetricsRow = {
  version: number | string;
  traces: number | string;
  spans: number | string;
  latency: [number, number];
  cost: number;
  input_tokens: number | string;
  output_tokens: number | string;
  total_tokens: number | string;
  errors: number | string;
  /** [name, avg, count] of each numeric or boolean score, by name. */
  scores: [string, number, number | string][];
};

/**
 * The scored traces' set stays out of the spans' key analysis, which their trace ids can't narrow
 * (the key puts the hour before the trace id): measured 1.6 times faster without it at 1M spans.
 */
const SCORED_SET_SETTINGS = ['use_index_for_in_with_subqueries = 0'];

/**
 * Rows: PromptMetricsRow by version, newest first. Versions 0 (a span naming the prompt without a
 * version) included.
 *
 * A version's scores average each numeric or boolean score over the traces whose spans name that
 * version in the window (a trace naming two versions counts for both). A score is read when it is
 * about such a trace (trace or span level) and was written from the window's start on: a score
 * follows its trace, so that bound drops nothing and spares the read every older score of the project.
 * The spans keep, per version, the traces among those of the window's scores (a set of hashes: a
 * project has far fewer scored traces than spans naming a prompt), and only those meet the scores.
 */
export function promptMetricsQuery(projectId: string, name: string, startMs: number, endMs: number): Query {
  const b = paramBuilder({ project: projectId });
  const from = b.param("DateTime64(3, 'UTC')", startMs / 1000);
  const to = b.param("DateTime64(3, 'UTC')", endMs / 1000);
  // Every score of the window may count: the project's newest rows on a few columns (src/query/scores.ts).
  const scores = `${newestScores('{project:String}', 'trace_id, name, value, data_type, created_at, is_deleted')}
                  WHERE is_deleted = 0 AND created_at >= ${from} AND data_type IN ('numeric', 'boolean') AND trace_id != ''`;
  return {
    query: `WITH versions AS (
              SELECT prompt_version AS version,
                     uniqExact(cityHash64(trace_id) AS trace_hash) AS traces,
                     count() AS spans,
                     quantilesIf(0.5, 0.95)(toFloat64(${DURATION_MS}), end_time IS NOT NULL) AS latency,
                     sum(cost) AS cost,
                     sum(input_tokens) AS input_tokens,
                     sum(output_tokens) AS output_tokens,
                     sum(total_tokens) AS total_tokens,
                     countIf(status = 'error') AS errors,
                     groupUniqArrayIf(trace_id, trace_hash IN (SELECT cityHash64(trace_id) FROM scores
                                                                WHERE project_id = {project:String} AND created_at >= ${from}))
                       AS scored_traces
                FROM spans
               WHERE project_id = {project:String} AND start_time >= ${from} AND start_time < ${to}
                 AND prompt_name = ${b.param('String', name)}
               GROUP BY version),
            by_name AS (
              SELECT v.version AS version, any(v.traces) AS traces, any(v.spans) AS spans, any(v.latency) AS latency,
                     any(v.cost) AS cost, any(v.input_tokens) AS input_tokens, any(v.output_tokens) AS output_tokens,
                     any(v.total_tokens) AS total_tokens, any(v.errors) AS errors,
                     s.name AS name, avgIf(s.value, s.scored) AS avg, countIf(s.scored) AS count
                FROM versions AS v
                LEFT ARRAY JOIN v.scored_traces AS trace
                LEFT JOIN (SELECT trace_id, name, value, 1 AS scored FROM ${scores}) AS s ON s.trace_id = trace
               GROUP BY version, name)
            SELECT version, any(traces) AS traces, any(spans) AS spans, any(latency) AS latency, any(cost) AS cost,
                   any(input_tokens) AS input_tokens, any(output_tokens) AS output_tokens,
                   any(total_tokens) AS total_tokens, any(errors) AS errors,
                   arraySort(groupArrayIf((name, avg, count), count > 0)) AS scores
              FROM by_name
             GROUP BY version
             ORDER BY version DESC
             ${settingsClause(PROMPT_METRICS_LIMITS, SCORED_SET_SETTINGS)}`,
    query_params: b.params,
  };
}
