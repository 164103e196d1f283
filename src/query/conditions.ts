import type { ParamBuilder, Param } from './params.js';
import { DURATION_MS, OP_SQL, ROOT_HEAD_JSON } from './expressions.js';
import { scorePredicateCondition } from './scores.js';
import type { Predicate, SetField, SpanFilter, SpanPredicate } from './predicates.js';

/**
 * Predicates (predicates.ts) as SQL conditions, every value a parameter: on span rows and the span
 * rollups (`spanCondition`; widgets, alerts, detection) and on FINAL-merged trace rollup rows
 * (`traceCondition`; the trace list, sessions and the TRACES view of widgets). Pure.
 */

/** The span rollups' dimension of each set field (clickhouse/0002_span_rollups.sql): the spans' column names. */
export const FILTER_DIMENSION: Record<SetField, string> = {
  model_name: 'model_name',
  environment: 'environment',
  span_kind: 'kind',
  status: 'status',
  error_type: 'error_type',
  name: 'name',
};

// A span's value of each numeric predicate.
const SPAN_NUMBER = {
  cost: 'cost',
  total_tokens: 'total_tokens',
  errors: "toUInt8(status = 'error')",
  duration_ms: DURATION_MS,
} as const;

/** A span predicate as a condition on `spans` or a span rollup (whose dimensions carry the same names). */
export function spanCondition(f: SpanFilter, b: ParamBuilder): string {
  switch (f.field) {
    case 'trace_id':
      return f.op === 'eq'
        ? `trace_id = ${b.param('String', f.value)}`
        : `position(trace_id, ${b.param('String', f.value)}) > 0`;
    case 'score':
      // On `trace_id`, which raw spans carry and the rollups lack: the planner reads spans for it.
      return scorePredicateCondition(f, b.param.bind(b));
    case 'metadata': {
      const value = `metadata[${b.param('String', f.key)}]`;
      return f.op === 'eq'
        ? `${value} = ${b.param('String', f.value)}`
        : `position(${value}, ${b.param('String', f.value)}) > 0`;
    }
    case 'time_to_first_token_ms':
    case 'output_tokens_per_second':
      // A span without the timing (NULL) matches no comparison.
      return `${f.field} ${OP_SQL[f.op]} ${b.param('Float64', f.value)}`;
    case 'prompt_name':
    case 'prompt_version':
      return promptCondition(f, b.param.bind(b));
    case 'cost':
    case 'total_tokens':
    case 'duration_ms':
    case 'errors': {
      const op = OP_SQL[f.op];
      const expr = SPAN_NUMBER[f.field];
      return `${f.field === 'duration_ms' ? 'end_time IS NOT NULL AND ' : ''}${expr} ${op} ${b.param('Float64', f.value)}`;
    }
    default:
      return `${FILTER_DIMENSION[f.field]} IN ${b.param('Array(String)', f.value)}`;
  }
}

type PromptPredicate = Extract<SpanFilter, { field: 'prompt_name' | 'prompt_version' }>;

/** A prompt predicate on span rows (clickhouse/0019_span_prompt.sql; docs/prompts.md, "Linking spans"). */
function promptCondition(f: PromptPredicate, param: Param): string {
  return f.field === 'prompt_name'
    ? `prompt_name IN ${param('Array(String)', f.value)}`
    : `prompt_version = ${param('UInt32', f.value)}`;
}

/** A normalised predicate on spans or a span rollup, negated for `!=`. */
export function predicateCondition(p: SpanPredicate, b: ParamBuilder): string {
  const condition = spanCondition(p.filter, b);
  return p.negate ? `NOT (${condition})` : condition;
}

// The trace rollup's union of its spans' values of each set field (clickhouse/0001_traces.sql).
const SET_COLUMN: Record<SetField, string> = {
  model_name: 'model_names',
  environment: 'environments',
  span_kind: 'span_kinds',
  status: 'statuses',
  error_type: 'error_types',
  name: 'span_names',
};

// A trace's value of each numeric predicate, over a FINAL-merged rollup row (one row = one trace).
const TRACE_NUMBER = {
  cost: 'total_cost',
  total_tokens: 'total_tokens',
  errors: 'error_count',
  duration_ms: DURATION_MS,
} as const;

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
export function traceCondition(
  f: Predicate,
  param: Param,
  signalIds?: Readonly<Record<string, readonly string[]>>,
  scope: SpanScope = { project: '{project:String}' },
): string {
  switch (f.field) {
    case 'trace_id':
      return f.op === 'eq'
        ? `trace_id = ${param('String', f.value)}`
        : `position(trace_id, ${param('String', f.value)}) > 0`;
    case 'tags':
      // The trace's tags are its spans' union (clickhouse/0020_span_tags.sql): any of the values matches.
      return `hasAny(tags, ${param('Array(String)', f.value)})`;
    case 'score':
      return scorePredicateCondition(f, param, scope.project);
    case 'signal_id':
      return `trace_id IN (SELECT trace_id FROM findings WHERE project_id = {project:String} AND signal_id IN ${param('Array(String)', signalIds?.[f.value] ?? [f.value])})`;
    case 'cost':
    case 'total_tokens':
    case 'errors':
    case 'duration_ms': {
      const guard = f.field === 'duration_ms' ? 'end_time IS NOT NULL AND ' : '';
      return `(${guard}${TRACE_NUMBER[f.field]} ${OP_SQL[f.op]} ${param('Float64', f.value)})`;
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
    case 'prompt_name':
    case 'prompt_version': {
      // Any span of the trace used the prompt (version): read from `spans` like the timings above.
      const window = scope.from === undefined ? '' : ` AND start_time >= ${scope.from}`;
      return `trace_id IN (SELECT trace_id FROM spans WHERE project_id = ${scope.project}${window}
      AND ${promptCondition(f, param)})`;
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
      if (f.op === 'eq')
        return `(has(metadata_kv, concat(${prefix}, ${value})) AND ${rootMetadataCondition(f.op, key, value)})`;
      return `(arrayExists(kv -> position(kv, ${value}) > 0, metadata_kv)
      AND if(JSONHas(${ROOT_HEAD_JSON}, 2, ${key}), position(JSONExtractString(${ROOT_HEAD_JSON}, 2, ${key}), ${value}) > 0,
        arrayExists(kv -> startsWith(kv, ${prefix}) AND position(substring(kv, length(${prefix}) + 1), ${value}) > 0, metadata_kv)))`;
    }
    default:
      // The trace's set is the union of its spans' (docs/filters.md): any span with one of the values matches.
      return `hasAny(${SET_COLUMN[f.field]}, ${param('Array(String)', f.value)})`;
  }
}

/** The root-wins half of a metadata predicate: the root's value matches, or the root lacks the key. */
function rootMetadataCondition(op: 'eq' | 'contains', key: string, value: string): string {
  const root = `JSONExtractString(${ROOT_HEAD_JSON}, 2, ${key})`;
  const test = op === 'eq' ? `${root} = ${value}` : `position(${root}, ${value}) > 0`;
  return `if(JSONHas(${ROOT_HEAD_JSON}, 2, ${key}), ${test}, 1)`;
}

type MetadataPredicate = Extract<Predicate, { field: 'metadata' }>;

/**
 * A metadata predicate of the trace list in two halves (the list's plan: src/traces/list-query.ts):
 * `candidates`, the ids of the traces some span of which has a matching value for the key, from the
 * pair index `trace_metadata_kv` (clickhouse/0014_trace_metadata_kv.sql), bounded by `hours`
 * (conditions on `trace_start_hour`, which the index carries as `traces` does);
 * and `rest`, the condition left for the trace's merged row: the root, if it has the key, matches.
 * A trace among the candidates that passes `rest` is exactly one `traceCondition` matches: some span
 * matches and the root does or lacks the key, for `eq` as for `contains`.
 */
export function metadataCandidates(
  f: MetadataPredicate,
  param: Param,
  scope: { project: string; hours: readonly string[] },
): { candidates: string; rest: string } {
  const key = param('String', f.key);
  const value = param('String', f.value);
  const prefix = `concat(toString(length(${key})), ':', ${key})`;
  // `contains` reads every pair of the key: one key range too, the pairs sorting by key first.
  const pair =
    f.op === 'eq'
      ? `kv = concat(${prefix}, ${value})`
      : `startsWith(kv, ${prefix}) AND position(substring(kv, length(${prefix}) + 1), ${value}) > 0`;
  const where = [`project_id = ${scope.project}`, pair, ...scope.hours];
  return {
    candidates: `SELECT trace_id FROM trace_metadata_kv WHERE ${where.join(' AND ')}`,
    rest: rootMetadataCondition(f.op, key, value),
  };
}
