import { paramBuilder, type ParamBuilder, type Query } from './params.js';
import { FILTER_DIMENSION, spanCondition, traceCondition } from './conditions.js';
import {
  DURATION_MS_OR_NULL,
  FINAL_SETTINGS,
  ROOT_HEAD_JSON,
  ROOT_NAME,
  SESSION,
  traceHourBefore,
  traceHourFrom,
  USER,
} from './expressions.js';
import { settingsClause, type QueryLimits } from './limits.js';
import { aggregate, rawSpanValue, rollupValue, spanGroup } from './measures.js';
import { DEFAULT_ROWS, seriesGroupLimit } from './series-steps.js';
import { rollupTail, sealedRollup } from './sealed-rollups.js';
import {
  planFrame,
  type MeasureSpec,
  type PlanWindow,
  type Shape,
  type Source,
  type WidgetPlan,
} from './plan-frame.js';
import { planScores } from './score-plan.js';

/**
 * The widget planner (pure): a spec and a window become one parameterised ClickHouse query, read
 * from the span rollups (clickhouse/0002_span_rollups.sql) when they can answer it, from raw spans
 * or the trace rollup otherwise. Both paths answer the same question over the same aligned range,
 * so they agree (quantiles within the t-digest's error).
 *
 * - Time series are bucketed by the interval ("auto": the smallest step giving at most 300 points,
 *   at least 30 whenever the window allows); the range is widened to whole buckets.
 * - Rollups answer when every filter and group-by is one of their dimensions, the measure and
 *   aggregation have a state there, and the step is a multiple of the grain (1m, or 1h); without
 *   filters and group-bys, the dimension-free totals answer (a row per minute or hour).
 * - With `metadataRollup`, a widget naming one metadata key (filters `metadata` and/or group-by
 *   `metadata.<key>`), its other filters and group-bys rollup dimensions, reads the per-hour rollup
 *   keyed by metadata (clickhouse/0006_span_rollup_metadata.sql) when the step is whole hours;
 *   its dimension-free totals (per hour, or per day for whole-day steps) when the key is all it names.
 * - A rollup is read through its `_sealed` view (sealed-rollups.ts): its rows plus the spans stored
 *   after the sealer's watermark, which the plan leaves as the `sealed` parameter (`sealed: true`) for
 *   src/rollups/sealed-read.ts to set; so the answer never depends on the sealer having run.
 * - Every answer is bounded before the query runs (issue 9): a series has at most
 *   MAX_SERIES_POINTS buckets and MAX_SERIES_CELLS buckets × groups (a finer step is coarsened and
 *   the plan says so), a grouped series at most MAX_SERIES_GROUPS groups, a table its `limit`; and
 *   the query carries WIDGET_LIMITS in its SETTINGS.
 */

// The plan's types and frame (shape, buckets, range, bounds) are shared with the SCORES planner.
export {
  WIDGET_LIMITS,
  type MeasureSpec,
  type PlanWindow,
  type Shape,
  type Source,
  type WidgetPlan,
} from './plan-frame.js';

const SPAN_DIMENSIONS: Record<string, string> = {
  model_name: 'model_name',
  environment: 'environment',
  kind: 'kind',
  status: 'status',
  name: 'name',
  error_type: 'error_type',
};

/**
 * `type`: a widget type; `timeseries` answers a series, the others one value, or a row per group.
 * `raw: true` skips the rollups (the bench and the equality tests compare both paths);
 * `answerBytes` lowers the answer's byte limit (a dashboard shares its answer among its widgets);
 * `metadataRollup: true` lets metadata filters and group-bys read span_rollup_meta_1h (widget
 * answers; the alert queries, which build their own SQL from the plan's source, leave it off).
 */
export function planWidget(
  type: string,
  spec: MeasureSpec,
  projectId: string,
  window: PlanWindow,
  options: { raw?: boolean; answerBytes?: number; metadataRollup?: boolean; tail?: boolean } = {},
): WidgetPlan {
  // The SCORES view reads the scores table (score-plan.ts): no rollup, so no tail to seal.
  if (spec.view === 'SCORES') return planScores(type, spec, projectId, window, options);
  const plan = planWithTail(type, spec, projectId, window, options);
  if (!plan.sealed || options.tail === false) return plan;
  const { query, query_params } = planWithTail(type, spec, projectId, window, { ...options, tail: false });
  return { ...plan, untailed: { query, query_params } };
}

function planWithTail(
  type: string,
  spec: MeasureSpec,
  projectId: string,
  window: PlanWindow,
  options: { raw?: boolean; answerBytes?: number; metadataRollup?: boolean; tail?: boolean },
): WidgetPlan {
  const tail = options.tail !== false;
  const groupBy = spec.group_by ?? [];
  const frame = planFrame(type, spec, window, { empty: additive(spec) ? 0 : null, answerBytes: options.answerBytes });
  const { shape, stepSeconds: step, rangeStartMs, rangeEndMs, limits } = frame;
  const base = { ...frame.base, values: ['value'] };
  const b = paramBuilder({ project: projectId });
  const range = {
    from: b.param("DateTime64(3, 'UTC')", rangeStartMs / 1000),
    to: b.param("DateTime64(3, 'UTC')", rangeEndMs / 1000),
  };
  if (spec.view === 'TRACES')
    return { ...base, ...tracesQuery(spec, b, range, step, shape, limits), source: 'traces', sealed: false };
  const rollup =
    !options.raw &&
    rollupValue(spec) !== null &&
    groupBy.every((g) => g in SPAN_DIMENSIONS) &&
    (spec.filters ?? []).every((f) => f.field in FILTER_DIMENSION);
  if (rollup) {
    // No filter and no group-by: the dimension-free totals, a row per minute or hour.
    const totals = !groupBy.length && !(spec.filters ?? []).length;
    const grain = totals && step % 86400 === 0 ? '1d' : step % 3600 === 0 ? '1h' : '1m';
    const source = `span_rollup_${totals ? 'totals_' : ''}${grain}` as Source;
    return { ...base, ...spansQuery(spec, b, range, step, shape, source, limits, tail), source, sealed: true };
  }
  const metadataKey =
    !options.raw && options.metadataRollup && rollupValue(spec) !== null && step % 3600 === 0
      ? rollupMetadataKey(spec)
      : null;
  if (metadataKey !== null) {
    // Only the key (no other filter or group-by): the dimension-free totals, far fewer and fuller states.
    const totals =
      !(spec.filters ?? []).some((f) => f.field !== 'metadata') && groupBy.every((g) => g.startsWith('metadata.'));
    const source: Source = !totals
      ? 'span_rollup_meta_1h'
      : step % 86400 === 0
        ? 'span_rollup_meta_totals_1d'
        : 'span_rollup_meta_totals_1h';
    return {
      ...base,
      ...metadataQuery(
        spec,
        b,
        { ...range, startMs: rangeStartMs, endMs: rangeEndMs },
        step,
        shape,
        metadataKey,
        source,
        limits,
        tail,
      ),
      source,
      sealed: true,
    };
  }
  return { ...base, ...spansQuery(spec, b, range, step, shape, 'spans', limits), source: 'spans', sealed: false };
}

/**
 * The one metadata key a widget names (in `metadata` filters and `metadata.<key>` group-bys) when
 * every other filter and group-by is a rollup dimension; null otherwise (no key, two keys, or a
 * field the metadata rollup lacks).
 */
function rollupMetadataKey(spec: MeasureSpec): string | null {
  const keys = new Set<string>();
  for (const g of spec.group_by ?? []) {
    if (g.startsWith('metadata.')) keys.add(g.slice('metadata.'.length));
    else if (!(g in SPAN_DIMENSIONS)) return null;
  }
  for (const f of spec.filters ?? []) {
    if (f.field === 'metadata') keys.add(f.key);
    else if (!(f.field in FILTER_DIMENSION)) return null;
  }
  return keys.size === 1 ? [...keys][0]! : null;
}

/**
 * A widget naming one metadata key, over span_rollup_meta_1h. A metadata filter matches only spans
 * with a (non-empty) value for the key: its rows `meta_key = key`. A group-by alone also needs the
 * spans without a value (metadata[key] is '' on raw spans): the key-set rows of spans whose keys
 * lack it, whose meta_value is ''. Each span so counts once, in its own group.
 */
function metadataQuery(
  spec: MeasureSpec,
  b: ParamBuilder,
  range: { from: string; to: string; startMs: number; endMs: number },
  step: number,
  shape: Shape,
  key: string,
  source: Source,
  limits: QueryLimits,
  tail: boolean,
): Query {
  const k = b.param('String', key);
  const filtered = (spec.filters ?? []).some((f) => f.field === 'metadata');
  const rows = filtered ? `meta_key = ${k}` : `(meta_key = ${k} OR (meta_key = '' AND NOT has(key_set, ${k})))`;
  const filters = (spec.filters ?? []).map((f) => {
    if (f.field !== 'metadata') return spanCondition(f, b);
    return f.op === 'eq'
      ? `meta_value = ${b.param('String', f.value)}`
      : `position(meta_value, ${b.param('String', f.value)}) > 0`;
  });
  const where = [`project_id = {project:String}`, rows, `bucket >= ${range.from}`, `bucket < ${range.to}`, ...filters];
  const groups = (spec.group_by ?? []).map((g) => (g.startsWith('metadata.') ? 'meta_value' : spanGroup(g, b)));
  const parts = {
    where,
    value: rollupValue(spec)!,
    groups,
    time: 'bucket',
    step,
    shape,
    settings: settingsClause(limits),
  };
  // A stat, table or bar over days reads the whole days of its hour-aligned range from the daily
  // totals and only the hours at either end from the hourly ones: 24 times fewer t-digests to merge.
  // The spans stored after the sealer's watermark come from the tail, over the whole range.
  const dayStartMs = Math.ceil(range.startMs / 86_400_000) * 86_400_000;
  const dayEndMs = Math.floor(range.endMs / 86_400_000) * 86_400_000;
  if (source === 'span_rollup_meta_totals_1h' && shape !== 'series' && dayEndMs > dayStartMs) {
    const days = {
      from: b.param("DateTime('UTC')", dayStartMs / 1000),
      to: b.param("DateTime('UTC')", dayEndMs / 1000),
    };
    const conditions = where.join(' AND ');
    const table = `(SELECT * FROM span_rollup_meta_totals_1d WHERE ${conditions} AND bucket >= ${days.from} AND bucket < ${days.to}
  UNION ALL SELECT * FROM span_rollup_meta_totals_1h WHERE ${conditions} AND (bucket < ${days.from} OR bucket >= ${days.to})${
    tail ? `\n  UNION ALL SELECT * FROM ${rollupTail('span_rollup_meta_tail')} WHERE ${conditions}` : ''
  })`;
    return shaped(spec, b, { ...parts, table });
  }
  return shaped(spec, b, { ...parts, table: sealedRollup(source, tail) });
}

/** Measures whose empty bucket is a real zero. */
function additive(spec: MeasureSpec): boolean {
  if (spec.measure === 'count') return true;
  if (spec.measure === 'error_rate') return false;
  return spec.aggregation === 'sum' || spec.aggregation === 'count' || spec.aggregation === 'uniq';
}

function spansQuery(
  spec: MeasureSpec,
  b: ParamBuilder,
  range: { from: string; to: string },
  step: number,
  shape: Shape,
  source: Source,
  limits: QueryLimits,
  tail = true,
): Query {
  const rollup = source !== 'spans';
  const time = rollup ? 'bucket' : 'start_time';
  const where = [
    `project_id = {project:String}`,
    `${time} >= ${range.from}`,
    `${time} < ${range.to}`,
    ...(spec.filters ?? []).map((f) => spanCondition(f, b)),
  ];
  const value = rollup ? rollupValue(spec)! : rawSpanValue(spec);
  const groups = (spec.group_by ?? []).map((g) => spanGroup(g, b));
  const table = rollup ? sealedRollup(source, tail) : source;
  return shaped(spec, b, { table, where, value, groups, time, step, shape, settings: settingsClause(limits) });
}

/** Traces view: one merged rollup row per trace (FINAL), in the window by trace start. */
function tracesQuery(
  spec: MeasureSpec,
  b: ParamBuilder,
  range: { from: string; to: string },
  step: number,
  shape: Shape,
  limits: QueryLimits,
): Query {
  // Name, metadata, user and session from the small heads the trace list reads (list-query.ts).
  const duration = DURATION_MS_OR_NULL;
  const column: Record<string, string> = {
    latency: duration,
    duration_ms: duration,
    cost: 'total_cost',
    input_tokens: 'input_tokens',
    output_tokens: 'output_tokens',
    total_tokens: 'total_tokens',
    error_count: 'error_count',
    span_count: 'span_count',
    user_id: USER,
    session_id: SESSION,
  };
  let value: string;
  if (spec.measure === 'count') value = 'toFloat64(count())';
  else if (spec.measure === 'error_rate') value = 'if(count() = 0, NULL, countIf(error_count > 0) / count())';
  else if (spec.measure === 'user_id' || spec.measure === 'session_id') {
    value =
      spec.aggregation === 'uniq'
        ? `toFloat64(uniqIf(${column[spec.measure]}, ${column[spec.measure]} != ''))`
        : `toFloat64(countIf(${column[spec.measure]} != ''))`;
  } else
    value =
      spec.aggregation === 'count'
        ? `toFloat64(count(${column[spec.measure]}))`
        : `toFloat64(${aggregate(spec.aggregation, column[spec.measure]!)})`;

  const where = [
    'project_id = {project:String}',
    traceHourFrom(range.from),
    traceHourBefore(range.to),
    `start_time >= ${range.from}`,
    `start_time < ${range.to}`,
    'is_evaluation = 0',
    // The same conditions as the trace list's predicates (one row per trace after FINAL).
    ...(spec.filters ?? []).map((f) =>
      traceCondition(f, b.param, undefined, { project: '{project:String}', from: range.from }),
    ),
  ];
  const groups = (spec.group_by ?? []).map((g) => {
    if (g === 'name') return ROOT_NAME;
    if (g === 'user_id' || g === 'session_id') return column[g]!;
    const key = b.param('String', g.slice('metadata.'.length));
    return `if(JSONHas(${ROOT_HEAD_JSON}, 2, ${key}), JSONExtractString(${ROOT_HEAD_JSON}, 2, ${key}), arrayFirst(kv -> kv.1 = ${key}, metadata_pairs).2)`;
  });
  return shaped(spec, b, {
    table: 'traces FINAL',
    where,
    value,
    groups,
    time: 'start_time',
    step,
    shape,
    settings: settingsClause(limits, FINAL_SETTINGS),
  });
}

type Parts = {
  table: string;
  where: string[];
  value: string;
  groups: string[];
  time: string;
  step: number;
  shape: Shape;
  settings: string;
};

/** The SELECT for a shape. Rows: [bucket_s,] g0.., value. Series keep only the top groups. */
function shaped(spec: MeasureSpec, b: ParamBuilder, p: Parts): Query {
  const groupCols = p.groups.map((g, i) => `${g} AS g${i}`);
  const groupNames = p.groups.map((_, i) => `g${i}`);
  const where = p.where.join('\n  AND ');
  const settings = `\n${p.settings}`;
  if (p.shape === 'single') {
    return { query: `SELECT ${p.value} AS value\nFROM ${p.table}\nWHERE ${where}${settings}`, query_params: b.params };
  }
  if (p.shape === 'groups') {
    const limit = b.param('UInt32', spec.limit ?? DEFAULT_ROWS);
    return {
      query: `SELECT ${groupCols.join(', ')}, ${p.value} AS value\nFROM ${p.table}\nWHERE ${where}\nGROUP BY ${groupNames.join(', ')}\nORDER BY value DESC NULLS LAST, ${groupNames.join(', ')}\nLIMIT ${limit}${settings}`,
      query_params: b.params,
    };
  }
  const bucket = `toUnixTimestamp(toStartOfInterval(${p.time}, INTERVAL ${p.step} SECOND)) AS bucket_s`;
  if (!p.groups.length) {
    return {
      query: `SELECT ${bucket}, ${p.value} AS value\nFROM ${p.table}\nWHERE ${where}\nGROUP BY bucket_s\nORDER BY bucket_s${settings}`,
      query_params: b.params,
    };
  }
  const limit = b.param('UInt32', seriesGroupLimit(spec));
  const tuple = groupNames.length === 1 ? groupNames[0]! : `(${groupNames.join(', ')})`;
  const topTuple = p.groups.length === 1 ? p.groups[0]! : `(${p.groups.join(', ')})`;
  return {
    query: `SELECT ${bucket}, ${groupCols.join(', ')}, ${p.value} AS value
FROM ${p.table}
WHERE ${where}
  AND ${topTuple} IN (SELECT ${tuple} FROM (SELECT ${groupCols.join(', ')}, ${p.value} AS value FROM ${p.table} WHERE ${where} GROUP BY ${groupNames.join(', ')} ORDER BY value DESC NULLS LAST, ${groupNames.join(', ')} LIMIT ${limit}))
GROUP BY bucket_s, ${groupNames.join(', ')}
ORDER BY bucket_s, ${groupNames.join(', ')}${settings}`,
    query_params: b.params,
  };
}
