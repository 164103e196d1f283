import { elapsedMs } from '../query/expressions.js';

/**
 * The public SQL contract (docs/design.md, decision 5): the only tables and columns a caller's SQL can
 * name. `GET /sql/schema` prints it and the guard (guard.ts) enforces it; both read this module, so
 * they can't disagree (test/sql/contract.test.ts checks every column is queryable and nothing else).
 *
 * Each table is answered by a subquery over the physical tables, scoped to the caller's project by a
 * query parameter. A caller's query never touches a physical table directly.
 */

export type ContractColumn = { name: string; type: string; expr: string };
/**
 * `physical` lists the physical columns the expressions read; the inner subquery renames each to
 * `p_<name>` so no advertised name can collide with a physical one inside the scoped subquery
 * (ClickHouse resolves a SELECT alias before a column of the same name).
 */
export type ContractTable = {
  name: string;
  columns: ContractColumn[];
  physical: string[];
  from: (db: string, inner: string) => string;
};

/** The project parameter every scoped subquery carries. No caller identifier may start with `__sl`. */
export const PROJECT_PARAM = '__sl_project';
const PROJECT = `{${PROJECT_PARAM}:String}`;

const col = (name: string, type: string, expr = `p_${name}`): ContractColumn => ({ name, type, expr });

const TRACES: ContractTable = {
  name: 'traces',
  columns: [
    col('trace_id', 'String'),
    col('name', 'String', 'JSONExtractString(substring(p_root_head, 17), 1)'),
    col('trace_start_time', "DateTime64(3, 'UTC')", 'p_start_time'),
    col('trace_end_time', "Nullable(DateTime64(3, 'UTC'))", 'p_end_time'),
    col('duration_ms', 'Nullable(Int64)', `if(p_end_time IS NULL, NULL, ${elapsedMs('p_start_time', 'p_end_time')})`),
    col('user_id', 'String', 'substring(p_user_head, 18)'),
    col('session_id', 'String', 'substring(p_session_head, 18)'),
    col('span_count', 'UInt64'),
    col('error_count', 'UInt64'),
    col('total_cost', 'Float64'),
    col('total_input_tokens', 'UInt64', 'p_input_tokens'),
    col('total_output_tokens', 'UInt64', 'p_output_tokens'),
    col('total_tokens', 'UInt64'),
    col('input', 'Nullable(String)', 'tupleElement(p_root, 5)'),
    col('output', 'Nullable(String)', 'tupleElement(p_root, 6)'),
    // All spans' metadata, the root's winning (docs/concepts.md, trace fields). Name, metadata, user
    // and session read the small heads of clickhouse/0005_trace_list_filters.sql, as the trace list
    // does: a query that leaves out input and output never reads the root's state.
    col(
      'metadata',
      'Map(String, String)',
      "mapUpdate(mapFromArrays(arrayMap(kv -> kv.1, p_metadata_pairs), arrayMap(kv -> kv.2, p_metadata_pairs)), JSONExtract(substring(p_root_head, 17), 2, 'Map(String, String)'))",
    ),
    col('model_names', 'Array(String)'),
    col('environments', 'Array(String)'),
    col('span_kinds', 'Array(String)'),
    col('statuses', 'Array(String)'),
    col('error_types', 'Array(String)'),
    col('span_names', 'Array(String)'),
    col('is_evaluation', 'UInt8'),
  ],
  physical: [
    'trace_id',
    'start_time',
    'end_time',
    'span_count',
    'error_count',
    'total_cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'metadata_pairs',
    'root_head',
    'user_head',
    'session_head',
    'model_names',
    'environments',
    'span_kinds',
    'statuses',
    'error_types',
    'span_names',
    'is_evaluation',
  ],
  // FINAL merges each trace's partial rollup rows (src/traces/list-query.ts); the aggregate states
  // are finalized here, inside, so callers only ever see plain values.
  from: (db, inner) =>
    `SELECT ${inner}, finalizeAggregation(root) AS p_root FROM ${db}.traces FINAL WHERE project_id = ${PROJECT}`,
};

const SPANS: ContractTable = {
  name: 'spans',
  columns: [
    col('trace_id', 'String'),
    col('span_id', 'String'),
    col('parent_span_id', 'Nullable(String)', "nullIf(p_parent_span_id, '')"),
    col('name', 'String'),
    col('kind', 'String'),
    col('start_time', "DateTime64(3, 'UTC')"),
    col('end_time', "Nullable(DateTime64(3, 'UTC'))"),
    col('duration_ms', 'Nullable(Int64)', `if(p_end_time IS NULL, NULL, ${elapsedMs('p_start_time', 'p_end_time')})`),
    col('status', 'String'),
    col('error_type', 'String'),
    col('error_message', 'String'),
    col('model_name', 'String'),
    col('environment', 'String'),
    col('user_id', 'String'),
    col('session_id', 'String'),
    col('input', 'Nullable(String)'),
    col('output', 'Nullable(String)'),
    col('metadata', 'Map(String, String)'),
    col('cost', 'Float64'),
    col('input_tokens', 'UInt64'),
    col('output_tokens', 'UInt64'),
    col('total_tokens', 'UInt64'),
    col('evaluation_run_id', 'String'),
    // The scalar span fields of clickhouse/0007_span_details.sql (docs/spans.md, "More span fields").
    col('cost_source', 'String'),
    col('cache_read_tokens', 'UInt64'),
    col('cache_write_tokens', 'UInt64'),
    col('reasoning_tokens', 'UInt64'),
    col('time_to_first_token_ms', 'Nullable(Float64)'),
    col('output_tokens_per_second', 'Nullable(Float64)'),
    // clickhouse/0019_span_prompt.sql (docs/prompts.md): '' and NULL when the span names no prompt.
    col('prompt_name', 'String'),
    col('prompt_version', 'Nullable(UInt32)', 'nullIf(p_prompt_version, 0)'),
  ],
  physical: [
    'trace_id',
    'span_id',
    'parent_span_id',
    'name',
    'kind',
    'start_time',
    'end_time',
    'status',
    'error_type',
    'error_message',
    'model_name',
    'environment',
    'user_id',
    'session_id',
    'input',
    'output',
    'metadata',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'evaluation_run_id',
    'cost_source',
    'cache_read_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'time_to_first_token_ms',
    'output_tokens_per_second',
    'prompt_name',
    'prompt_version',
  ],
  from: (db, inner) => `SELECT ${inner} FROM ${db}.spans WHERE project_id = ${PROJECT}`,
};

const FINDINGS: ContractTable = {
  name: 'findings',
  columns: [
    col('finding_id', 'String'),
    col('signal_id', 'String'),
    col('detector_id', 'String'),
    col('trace_id', 'String'),
    col('span_id', 'String'),
    col('trace_start_time', "DateTime64(3, 'UTC')"),
    col('found_at', "DateTime64(3, 'UTC')"),
    col('summary', 'String'),
  ],
  physical: [
    'finding_id',
    'signal_id',
    'detector_id',
    'trace_id',
    'span_id',
    'trace_start_time',
    'found_at',
    'summary',
  ],
  from: (db, inner) => `SELECT ${inner} FROM ${db}.findings FINAL WHERE project_id = ${PROJECT}`,
};

// Evaluation results (issue 12; clickhouse/0004_evaluations.sql): a copy of the results Postgres
// holds, for joining with traces and spans on trace_id / evaluation_run_id. FINAL keeps each test
// case's latest result (the highest revision).
const EVALUATION_RESULTS: ContractTable = {
  name: 'evaluation_results',
  columns: [
    col('evaluation_run_id', 'String'),
    col('evaluation_id', 'String'),
    col('dataset_version_id', 'String'),
    col('test_case_id', 'String'),
    col('trace_id', 'Nullable(String)'),
    col('output', 'Nullable(String)'),
    col('error', 'Nullable(String)'),
    col('scores', 'Map(String, Float64)'),
    col('metrics', 'Map(String, Float64)'),
    col('passed', 'Nullable(UInt8)'),
    col('written_at', "DateTime64(3, 'UTC')"),
  ],
  physical: [
    'evaluation_run_id',
    'evaluation_id',
    'dataset_version_id',
    'test_case_id',
    'trace_id',
    'output',
    'error',
    'scores',
    'metrics',
    'passed',
    'written_at',
  ],
  from: (db, inner) => `SELECT ${inner} FROM ${db}.evaluation_results FINAL WHERE project_id = ${PROJECT}`,
};

// Scores (quality.md §1; clickhouse/0018_scores.sql): each score's newest row, deleted ones left
// out. FINAL applies the replacing engine's rule per (project, score_id); the project filter runs first.
const SCORE_FIELDS: [string, string][] = [
  ['score_id', 'String'],
  ['trace_id', 'String'],
  ['span_id', 'String'],
  ['session_id', 'String'],
  ['name', 'String'],
  ['data_type', 'String'],
  ['value', 'Float64'],
  ['string_value', 'String'],
  ['comment', 'String'],
  ['source', 'String'],
  ['evaluator_id', 'String'],
  ['execution_id', 'String'],
  ['evaluator_version', 'UInt32'],
  ['author_user_id', 'String'],
  ['config_id', 'String'],
  ['metadata', 'Map(String, String)'],
  ['environment', 'String'],
  ['created_at', "DateTime64(3, 'UTC')"],
  ['updated_at', "DateTime64(3, 'UTC')"],
];
const SCORES: ContractTable = {
  name: 'scores',
  columns: SCORE_FIELDS.map(([name, type]) => col(name, type)),
  physical: SCORE_FIELDS.map(([name]) => name),
  from: (db, inner) =>
    `SELECT ${inner} FROM (SELECT * FROM ${db}.scores FINAL WHERE project_id = ${PROJECT}) WHERE is_deleted = 0`,
};

export const CONTRACT: readonly ContractTable[] = [TRACES, SPANS, FINDINGS, EVALUATION_RESULTS, SCORES];
export const CONTRACT_TABLES: ReadonlyMap<string, ContractTable> = new Map(CONTRACT.map((t) => [t.name, t]));

/** `GET /sql/schema` (docs/sql.md, "Tables"). */
export function sqlSchema(): { tables: { name: string; columns: { name: string; type: string }[] }[] } {
  return {
    tables: CONTRACT.map((t) => ({ name: t.name, columns: t.columns.map(({ name, type }) => ({ name, type })) })),
  };
}

/**
 * The scoped subquery that stands for a contract table: exactly its advertised columns, computed
 * from the physical table, only the caller's project's rows.
 */
export function scopedTable(table: ContractTable, db: string): string {
  const inner = table.physical.map((c) => `${c} AS p_${c}`).join(', ');
  // The CAST makes each column exactly the advertised type (no LowCardinality or
  // SimpleAggregateFunction wrapper shows through), so the schema and answers agree.
  const columns = table.columns.map((c) => `CAST(${c.expr}, '${c.type.replace(/'/g, "\\'")}') AS ${c.name}`).join(', ');
  // The LIMIT is a wall: ClickHouse never pushes a filter through it, so a caller's predicate runs
  // only on rows the project filter already kept. Pushed down, it would also be evaluated on other
  // projects' rows in shared granules, and its errors (division by zero, a failed parse quoting the
  // value) would be an oracle on their data.
  return `(SELECT ${columns} FROM (${table.from(db, inner)} LIMIT ${SCOPE_BARRIER_ROWS}))`;
}

const SCOPE_BARRIER_ROWS = '18446744073709551615';
