/**
 * Hand-written ClickHouse queries for the same answer as one list-traces page (newest 50 traces of a
 * window, their aggregates and the total), written as a ClickHouse user would without our planner.
 * The bench reports the fastest of them as "the best hand-written query". They are generous to the
 * reference: they skip the input/output lookup of the page and any dedup of re-sent spans.
 */

/** What the bench lists, and the same condition as a hand-written query would state it. */
export type ListCase = {
  name: string;
  /** The `filters` parameter of the API call. */
  filters?: unknown[];
  /** The `search_query` parameter. */
  search?: string;
  /** On one FINAL-merged `traces` row (the cheapest columns for it: clickhouse/0005_trace_list_filters.sql). */
  final: string;
  /** On a trace grouped from its `traces` rows (GROUP BY trace_id over the aggregates below). */
  rollup: string;
  /** On a trace grouped from its spans (GROUP BY trace_id over `spans`). */
  spans: string;
};

const ROOT_JSON = 'substring(root_head, 17)';
const CUSTOMER_EQ_FINAL = `has(metadata_kv, '11:customer_idcust_7') AND if(JSONHas(${ROOT_JSON}, 2, 'customer_id'), JSONExtractString(${ROOT_JSON}, 2, 'customer_id') = 'cust_7', 1)`;
const CUSTOMER_EQ_ROLLUP = `has(kv_all, '11:customer_idcust_7') AND if(JSONHas(substring(head, 17), 2, 'customer_id'), JSONExtractString(substring(head, 17), 2, 'customer_id') = 'cust_7', 1)`;
const ROOT_META = "argMin(metadata, (parent_span_id != '', start_time))";
const metaSpans = (key: string, test: (v: string) => string) =>
  `if(mapContains(${ROOT_META}, '${key}'), ${test(`${ROOT_META}['${key}']`)}, countIf(${test(`metadata['${key}']`)}) > 0)`;
const MODELS = "['claude-3-haiku', 'gpt-4o']";

export const LIST_CASES: ListCase[] = [
  { name: 'none', final: '1', rollup: '1', spans: '1' },
  {
    name: 'model_name in',
    filters: [{ field: 'model_name', op: 'in', value: ['claude-3-haiku'] }],
    final: "has(model_names, 'claude-3-haiku')",
    rollup: "has(models, 'claude-3-haiku')",
    spans: "countIf(model_name = 'claude-3-haiku') > 0",
  },
  {
    name: 'cost >',
    filters: [{ field: 'cost', op: 'gt', value: 0.02 }],
    final: 'total_cost > 0.02',
    rollup: 'cost_sum > 0.02',
    spans: 'sum(cost) > 0.02',
  },
  {
    name: 'metadata eq (customer_id, 1 in 500)',
    filters: [{ field: 'metadata', op: 'eq', key: 'customer_id', value: 'cust_7' }],
    final: CUSTOMER_EQ_FINAL,
    rollup: CUSTOMER_EQ_ROLLUP,
    spans: metaSpans('customer_id', (v) => `${v} = 'cust_7'`),
  },
  {
    name: 'metadata eq (region, 1 in 3)',
    filters: [{ field: 'metadata', op: 'eq', key: 'region', value: 'us-east' }],
    final: `has(metadata_kv, '6:regionus-east') AND if(JSONHas(${ROOT_JSON}, 2, 'region'), JSONExtractString(${ROOT_JSON}, 2, 'region') = 'us-east', 1)`,
    rollup: `has(kv_all, '6:regionus-east') AND if(JSONHas(substring(head, 17), 2, 'region'), JSONExtractString(substring(head, 17), 2, 'region') = 'us-east', 1)`,
    spans: metaSpans('region', (v) => `${v} = 'us-east'`),
  },
  {
    name: 'metadata contains (customer_id)',
    filters: [{ field: 'metadata', op: 'contains', key: 'customer_id', value: 'ust_7' }],
    final: `if(JSONHas(${ROOT_JSON}, 2, 'customer_id'), position(JSONExtractString(${ROOT_JSON}, 2, 'customer_id'), 'ust_7') > 0,
      arrayExists(kv -> startsWith(kv, '11:customer_id') AND position(substring(kv, 15), 'ust_7') > 0, metadata_kv))`,
    rollup: `if(JSONHas(substring(head, 17), 2, 'customer_id'), position(JSONExtractString(substring(head, 17), 2, 'customer_id'), 'ust_7') > 0,
      arrayExists(kv -> startsWith(kv, '11:customer_id') AND position(substring(kv, 15), 'ust_7') > 0, kv_all))`,
    spans: metaSpans('customer_id', (v) => `position(${v}, 'ust_7') > 0`),
  },
  {
    name: 'metadata eq + model_name in',
    filters: [
      { field: 'model_name', op: 'in', value: ['claude-3-haiku', 'gpt-4o'] },
      { field: 'metadata', op: 'eq', key: 'customer_id', value: 'cust_7' },
    ],
    final: `hasAny(model_names, ${MODELS}) AND ${CUSTOMER_EQ_FINAL}`,
    rollup: `hasAny(models, ${MODELS}) AND ${CUSTOMER_EQ_ROLLUP}`,
    spans: `countIf(model_name IN ${MODELS}) > 0 AND ${metaSpans('customer_id', (v) => `${v} = 'cust_7'`)}`,
  },
  {
    name: 'metadata eq + model_name in + cost >',
    filters: [
      { field: 'model_name', op: 'in', value: ['claude-3-haiku', 'gpt-4o'] },
      { field: 'metadata', op: 'eq', key: 'customer_id', value: 'cust_7' },
      { field: 'cost', op: 'gt', value: 0.02 },
    ],
    final: `hasAny(model_names, ${MODELS}) AND total_cost > 0.02 AND ${CUSTOMER_EQ_FINAL}`,
    rollup: `hasAny(models, ${MODELS}) AND cost_sum > 0.02 AND ${CUSTOMER_EQ_ROLLUP}`,
    spans: `countIf(model_name IN ${MODELS}) > 0 AND sum(cost) > 0.02 AND ${metaSpans('customer_id', (v) => `${v} = 'cust_7'`)}`,
  },
  {
    name: 'search_query',
    search: 'research',
    final:
      "(positionCaseInsensitiveUTF8(trace_id, 'research') > 0 OR positionCaseInsensitiveUTF8(JSONExtractString(substring(root_head, 17), 1), 'research') > 0 OR positionCaseInsensitiveUTF8(substring(session_head, 18), 'research') > 0 OR positionCaseInsensitiveUTF8(substring(user_head, 18), 'research') > 0)",
    rollup:
      "(positionCaseInsensitiveUTF8(trace_id, 'research') > 0 OR positionCaseInsensitiveUTF8(JSONExtractString(substring(head, 17), 1), 'research') > 0 OR positionCaseInsensitiveUTF8(trace_session, 'research') > 0 OR positionCaseInsensitiveUTF8(trace_user, 'research') > 0)",
    spans:
      "(positionCaseInsensitiveUTF8(trace_id, 'research') > 0 OR positionCaseInsensitiveUTF8(trace_name, 'research') > 0 OR positionCaseInsensitiveUTF8(trace_session, 'research') > 0 OR positionCaseInsensitiveUTF8(trace_user, 'research') > 0)",
  },
];

/** Each trace's values merged with GROUP BY (the alternative to FINAL). */
const TRACE_COLUMNS = `
    trace_id,
    min(start_time) AS trace_start,
    max(end_time) AS trace_end,
    argMinMerge(root) AS root_span,
    min(root_head) AS head,
    substring(min(user_head), 18) AS trace_user,
    substring(min(session_head), 18) AS trace_session,
    sum(span_count) AS spans_n,
    sum(error_count) AS errors_n,
    sum(total_cost) AS cost_sum,
    sum(input_tokens) AS input_tokens_sum,
    sum(output_tokens) AS output_tokens_sum,
    groupUniqArrayArray(metadata_pairs) AS metadata_pairs_all,
    groupUniqArrayArray(metadata_kv) AS kv_all,
    groupUniqArrayArray(model_names) AS models,
    max(is_evaluation) AS is_eval`;

export type ReferenceInput = { projectId: string; startAfterMs: number; listCase: ListCase };
type Sql = { query: string; query_params: Record<string, unknown> };

export function referenceQueries(input: ReferenceInput): Record<string, Sql> {
  const params = { p: input.projectId, from: input.startAfterMs / 1000 };
  const c = input.listCase;
  const refs: Record<string, Sql> = {
    // One statement: the page's keys and the count from a FINAL scan of the window, then the page's rows.
    'rollup FINAL, keys then rows': {
      query: `WITH window AS (
                SELECT trace_start_hour, trace_id, start_time FROM traces FINAL
                 WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)})
                   AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 AND ${c.final}
                SETTINGS do_not_merge_across_partitions_select_final = 1)
              SELECT trace_id, start_time, end_time, finalizeAggregation(root) AS root_span, substring(user_head, 18) AS u,
                     substring(session_head, 18) AS s, span_count, error_count, total_cost, input_tokens, output_tokens,
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
                HAVING trace_start >= {from:DateTime64(3)} AND is_eval = 0 AND ${c.rollup})
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
              HAVING max(evaluation_run_id != '') = 0 AND ${c.spans}
               ORDER BY s DESC LIMIT 50`,
      query_params: params,
    },
  };
  if (c.name === 'none' || c.name === 'model_name in') {
    // Knowing that newest-first pages live in the last hours: read back just far enough for 50
    // traces, and count the window separately. (Only for conditions true of every partial row.)
    refs['rollup, newest hours'] = {
      query: `SELECT *, (SELECT uniqExact(trace_id) FROM traces WHERE project_id = {p:String}
                          AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)}
                          AND is_evaluation = 0 AND ${c.final}) AS total
              FROM (
                SELECT ${TRACE_COLUMNS} FROM traces
                 WHERE project_id = {p:String}
                   AND trace_start_hour >= (SELECT min(h) FROM (SELECT trace_start_hour AS h FROM traces
                         WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)})
                           AND is_evaluation = 0 AND ${c.final}
                         ORDER BY trace_start_hour DESC LIMIT 50))
                 GROUP BY trace_id
                HAVING trace_start >= {from:DateTime64(3)} AND is_eval = 0 AND ${c.rollup})
              ORDER BY trace_start DESC LIMIT 50`,
      query_params: params,
    };
  }
  return refs;
}
