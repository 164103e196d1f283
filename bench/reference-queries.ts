
/**
 * Hand-written ClickHouse queries for the same answer as one list-traces page (newest 50 traces of a
 * window, their aggregates and the total), written as a ClickHouse user would without our planner.
 * The bench reports the fastest of them as "the best hand-written query". They are generous to the
 * reference: they skip the input/output lookup of the page and any dedup of re-sent spans.
 */
/** Each trace's values merged with GROUP BY (the alternative to FINAL). */
const TRACE_COLUMNS = `
    trace_id,
    min(start_time) AS trace_start,
    max(end_time) AS trace_end,
    argMinMerge(root) AS root_span,
    argMinMerge(user_id) AS trace_user,
    argMinMerge(session_id) AS trace_session,
    sum(span_count) AS spans_n,
    sum(error_count) AS errors_n,
    sum(total_cost) AS cost_sum,
    sum(input_tokens) AS input_tokens_sum,
    sum(output_tokens) AS output_tokens_sum,
    groupUniqArrayArray(metadata_pairs) AS metadata_pairs_all,
    max(is_evaluation) AS is_eval`;

export type ReferenceInput = { projectId: string; startAfterMs: number; filter: string };
type Sql = { query: string; query_params: Record<string, unknown> };

const ROLLUP_HAVING: Record<string, string> = {
  none: '',
  'model_name in': "AND has(groupUniqArrayArray(model_names), 'claude-3-haiku')",
  'cost >': 'AND cost_sum > 0.02',
};
const SPANS_HAVING: Record<string, string> = {
  none: '',
  'model_name in': "AND countIf(model_name = 'claude-3-haiku') > 0",
  'cost >': 'AND sum(cost) > 0.02',
};

export function referenceQueries(input: ReferenceInput): Record<string, Sql> {
  const params = { p: input.projectId, from: input.startAfterMs / 1000 };
  const finalFilter: Record<string, string> = {
    none: '',
    'model_name in': "AND has(model_names, 'claude-3-haiku')",
    'cost >': 'AND total_cost > 0.02',
  };
  const refs: Record<string, Sql> = {
    // One statement: the page's keys and the count from a FINAL scan of the window, then the page's rows.
    'rollup FINAL, keys then rows': {
      query: `WITH window AS (
                SELECT trace_start_hour, trace_id, start_time FROM traces FINAL
                 WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)})
                   AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 ${finalFilter[input.filter]}
                SETTINGS do_not_merge_across_partitions_select_final = 1)
              SELECT trace_id, start_time, end_time, finalizeAggregation(root) AS root_span, finalizeAggregation(user_id) AS u,
                     finalizeAggregation(session_id) AS s, span_count, error_count, total_cost, input_tokens, output_tokens,
                     metadata_pairs, (SELECT count() FROM window) AS total
                FROM traces FINAL
               WHERE project_id = {p:String}
                 AND (trace_start_hour, trace_id) IN (SELECT trace_start_hour, trace_id FROM window ORDER BY start_time DESC LIMIT 50)
               ORDER BY start_time DESC
              SETTINGS do_not_merge_across_partitions_select_final = 1`,
      query_params: params,
    },
    'rollup, one pass': {
      query: `SELECT *, count() OVER () AS total FROM (
                SELECT ${TRACE_COLUMNS} FROM traces
                 WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)})
                 GROUP BY trace_id
                HAVING trace_start >= {from:DateTime64(3)} AND is_eval = 0 ${ROLLUP_HAVING[input.filter]})
              ORDER BY trace_start DESC LIMIT 50`,
      query_params: params,
    },
    'spans, one pass': {
      query: `SELECT trace_id, min(start_time) AS s, max(end_time) AS e, count() AS n, countIf(status = 'error') AS errors,
                     sum(cost) AS c, sum(input_tokens) AS it, sum(output_tokens) AS ot,
                     argMin(name, (parent_span_id != '', start_time)) AS trace_name,
                     argMin(input, (parent_span_id != '', start_time)) AS trace_input,
                     argMin(output, (parent_span_id != '', start_time)) AS trace_output,
                     argMin(user_id, (user_id = '', parent_span_id != '', start_time)) AS trace_user,
                     argMin(session_id, (session_id = '', parent_span_id != '', start_time)) AS trace_session,
                     count() OVER () AS total
                FROM spans
               WHERE project_id = {p:String} AND start_time >= {from:DateTime64(3)}
               GROUP BY trace_id
              HAVING max(evaluation_run_id != '') = 0 ${SPANS_HAVING[input.filter]}
               ORDER BY s DESC LIMIT 50`,
      query_params: params,
    },
  };
  if (input.filter !== 'cost >') {
    // Knowing that newest-first pages live in the last hours: read back just far enough for 50
    // traces, and count the window separately.
    const rowFilter = input.filter === 'none' ? '' : "AND has(model_names, 'claude-3-haiku')";
    refs['rollup, newest hours'] = {
      query: `SELECT *, (SELECT uniqExact(trace_id) FROM traces WHERE project_id = {p:String}
                          AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)}
                          AND is_evaluation = 0 ${rowFilter}) AS total
              FROM (
                SELECT ${TRACE_COLUMNS} FROM traces
                 WHERE project_id = {p:String}
                   AND trace_start_hour >= (SELECT min(h) FROM (SELECT trace_start_hour AS h FROM traces
                         WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)})
                           AND is_evaluation = 0 ${rowFilter}
                         ORDER BY trace_start_hour DESC LIMIT 50))
                 GROUP BY trace_id
                HAVING trace_start >= {from:DateTime64(3)} AND is_eval = 0 ${ROLLUP_HAVING[input.filter]})
              ORDER BY trace_start DESC LIMIT 50`,
      query_params: params,
    };
  }
  return refs;
}
