import { paramBuilder, type ParamBuilder } from './params.js';
import { traceCondition } from './conditions.js';
import { FINAL_SETTINGS, ROOT_HEAD_JSON, ROOT_NAME, SESSION, USER } from './expressions.js';
import { settingsClause } from './limits.js';
import { planFrame, type MeasureSpec, type PlanWindow, type WidgetPlan } from './plan-frame.js';
import { currentScores, newestScores } from './scores.js';
import { seriesGroupLimit, DEFAULT_ROWS } from './series-steps.js';

/**
 * The SCORES view's planner (quality.md §1; docs/scores.md, "The SCORES view"). Pure: a spec naming
 * one score and a window become one parameterised query over the scores table
 * (clickhouse/0018_scores.sql), framed like every widget (plan-frame.ts: same shapes, buckets,
 * range alignment and bounds).
 *
 * - A score counts in the window by its `created_at` (when the judgement was made; a replaced score
 *   keeps its first one), and only its newest live row counts: up to a day, FINAL over the ids the
 *   window names (currentScores); longer, every score of the project merged on a few columns
 *   (newestScores), faster than merging a set of hundreds of thousands of ids.
 * - Its own fields group it (`score_source`, `score_string_value`, `evaluator_version`,
 *   `environment`, `session_id`, `metadata.<key>`), and its trace's: the trace rollup's name, user,
 *   session, environment, models and metadata (root wins), and the first prompt its spans used. A
 *   trace that used two models puts its score in both models' groups; the score's own environment,
 *   session and metadata value win over the trace's.
 * - Filters are the predicate table's trace conditions (traceCondition, as the trace list and the
 *   TRACES view read them): a score counts when its trace matches them all, so a session score
 *   (no trace) counts only in a widget without filters.
 * - Each row ends with `value`, `count` (the scores aggregated) and, for `avg`, `ci_low`/`ci_high`:
 *   the 95% interval of the mean by the normal approximation, mean ± 1.96·s/√n with s the sample
 *   standard deviation; null below two scores.
 * - Percentiles are `quantile` (exact below 8,192 scores a row, a uniform sample of that many above).
 * - The join to traces is made only when a filter or a trace field needs it, and reads only the
 *   traces the window's scores name.
 */

export type ScorePlanOptions = {
  answerBytes?: number;
  /** Grouped alerts: groups ranked lowest first (a `<` alert's breaches), and '' groups left out. */
  ascending?: boolean;
  skipEmptyGroups?: boolean;
  /** Alerts rank their own groups: a grouped answer of this many rows. */
  limit?: number;
};

const QUANTILES: Record<string, number> = { p50: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };
/** z for a two-sided 95% interval. */
const Z95 = 1.959964;

/** Windows up to this long read their scores by candidate ids (scoreRows). */
const CANDIDATE_WINDOW_MS = 24 * 3_600_000;

/** The score's own columns the group-bys read (groupExpression), each with the groups that read it. */
const SCORE_GROUP_COLUMNS: [string, (group: string) => boolean][] = [
  ['source', (g) => g === 'score_source'],
  ['string_value', (g) => g === 'score_string_value'],
  ['evaluator_version', (g) => g === 'evaluator_version'],
  ['environment', (g) => g === 'environment'],
  ['session_id', (g) => g === 'session_id'],
  ['metadata', (g) => g.startsWith('metadata.')],
];

/** The trace fields a group-by reads from the trace rollup (the `t` side of the join). */
const TRACE_GROUPS = new Set(['model_name', 'environment', 'name', 'user_id', 'session_id']);
const PROMPT_GROUPS = new Set(['prompt_name', 'prompt_version']);

export function planScores(
  type: string,
  spec: MeasureSpec,
  projectId: string,
  window: PlanWindow,
  options: ScorePlanOptions = {},
): WidgetPlan {
  const additive = spec.aggregation === 'count' || spec.aggregation === 'sum';
  const frame = planFrame(type, spec, window, { empty: additive ? 0 : null, answerBytes: options.answerBytes });
  const b = paramBuilder({ project: projectId });
  const from = b.param("DateTime64(3, 'UTC')", frame.rangeStartMs / 1000);
  const to = b.param("DateTime64(3, 'UTC')", frame.rangeEndMs / 1000);
  const name = b.param('String', spec.score_name ?? '');
  const rows = scoreRows(spec, b, { from, to, name, spanMs: frame.rangeEndMs - frame.rangeStartMs });
  const values = spec.aggregation === 'avg' ? ['value', 'count', 'ci_low', 'ci_high'] : ['value', 'count'];
  const aggs = [`${scoreValue(spec.aggregation)} AS value`, 'count() AS count'];
  if (spec.aggregation === 'avg') {
    const half = `${Z95} * stddevSamp(x) / sqrt(count())`;
    aggs.push(
      `if(count() < 2, NULL, avg(x) - ${half}) AS ci_low`,
      `if(count() < 2, NULL, avg(x) + ${half}) AS ci_high`,
    );
  }
  const groups = (spec.group_by ?? []).map((_, i) => `g${i}`);
  const settings = settingsClause(frame.limits, FINAL_SETTINGS);
  const emptyGroups =
    options.skipEmptyGroups && groups.length ? `WHERE ${groups.map((g) => `${g} != ''`).join(' AND ')}` : '';
  const head = `WITH rows AS (${rows})\n`;
  let query: string;
  if (frame.shape === 'single') {
    query = `${head}SELECT ${aggs.join(', ')}\nFROM rows\n${settings}`;
  } else if (frame.shape === 'groups') {
    const limit = b.param('UInt32', options.limit ?? spec.limit ?? DEFAULT_ROWS);
    const order = options.ascending ? 'ASC' : 'DESC';
    query = `${head}SELECT ${groups.join(', ')}, ${aggs.join(', ')}
FROM rows ${emptyGroups}
GROUP BY ${groups.join(', ')}
ORDER BY value ${order} NULLS LAST, ${groups.join(', ')}
LIMIT ${limit}
${settings}`;
  } else {
    const bucket = `toUnixTimestamp(toStartOfInterval(at, INTERVAL ${frame.stepSeconds} SECOND)) AS bucket_s`;
    if (!groups.length) {
      query = `${head}SELECT ${bucket}, ${aggs.join(', ')}\nFROM rows\nGROUP BY bucket_s\nORDER BY bucket_s\n${settings}`;
    } else {
      // Only the top groups over the whole range are drawn (as span series keep theirs). One pass over
      // the rows: grouping sets give each (bucket, group) and each group over the whole range (its
      // bucket 0, a time no score has), whose value ranks the groups. (`rows` named twice would be
      // read twice: a CTE is inlined where it is used, joins and all.)
      const limit = b.param('UInt32', seriesGroupLimit(spec));
      const list = groups.join(', ');
      query = `${head}SELECT ${['bucket_s', ...groups, ...values].join(', ')}
FROM (
  SELECT *, dense_rank() OVER (ORDER BY group_value DESC NULLS LAST, ${list}) AS group_rank
  FROM (
    SELECT *, max(if(bucket_s = 0, value, NULL)) OVER (PARTITION BY ${list}) AS group_value
    FROM (
      SELECT ${bucket}, ${list}, ${aggs.join(', ')}
      FROM rows
      GROUP BY GROUPING SETS ((bucket_s, ${list}), (${list}))
    )
  )
)
WHERE bucket_s != 0 AND group_rank <= ${limit}
ORDER BY bucket_s, ${list}
${settings}`;
    }
  }
  return { ...frame.base, values, query, query_params: b.params, source: 'scores', sealed: false };
}

/** The aggregate of the scores' values (`x`), a Float64. */
function scoreValue(aggregation: string): string {
  const q = QUANTILES[aggregation];
  if (q !== undefined) return `quantile(${q})(x)`;
  if (aggregation === 'count') return 'toFloat64(count())';
  return `toFloat64(${aggregation}(x))`;
}

/**
 * One row per live score of the name in the range, with its time (`at`), value (`x`) and group
 * values (`g0`, ...): the scores, joined to their traces when a filter or group needs them.
 */
function scoreRows(
  spec: MeasureSpec,
  b: ParamBuilder,
  p: { from: string; to: string; name: string; spanMs: number },
): string {
  const groupBy = spec.group_by ?? [];
  const filters = spec.filters ?? [];
  const inRange = [`name = ${p.name}`, `created_at >= ${p.from}`, `created_at < ${p.to}`];
  const scored = `SELECT trace_id FROM scores WHERE project_id = {project:String} AND ${inRange.join(' AND ')} AND trace_id != ''`;
  // Only the columns the groups read: FINAL merges every score of the project on these.
  const columns = [
    'trace_id, name, value, created_at, is_deleted',
    ...SCORE_GROUP_COLUMNS.flatMap(([column, used]) => (groupBy.some(used) ? [column] : [])),
  ].join(', ');
  // A short window (an alert's hour) names few scores: merge just those. A long one may name most of
  // the project's: merge them all on the few columns (src/query/scores.ts says why).
  const scores =
    p.spanMs <= CANDIDATE_WINDOW_MS
      ? `(SELECT ${columns} FROM ${currentScores('{project:String}', inRange, columns)})`
      : `(SELECT ${columns} FROM ${newestScores('{project:String}', columns)}
    WHERE is_deleted = 0 AND ${inRange.join(' AND ')})`;

  // The trace side: its fields the groups read, and the filters (an inner join then keeps only the
  // scores of matching traces). One row per trace on the right (FINAL; GROUP BY for the prompts), so
  // plain joins: `ANY INNER` would keep one score per trace on the left too.
  const metaKeys = groupBy.filter((g) => g.startsWith('metadata.')).map((g) => g.slice('metadata.'.length));
  // Only the columns the groups read: the rollup's heads are wide, and FINAL merges what it reads.
  const traceColumns = [
    'trace_id',
    ...(groupBy.includes('name') ? [`${ROOT_NAME} AS trace_name`] : []),
    ...(groupBy.includes('user_id') ? [`${USER} AS trace_user`] : []),
    ...(groupBy.includes('session_id') ? [`${SESSION} AS trace_session`] : []),
    ...(groupBy.includes('environment') ? ['arraySort(environments)[1] AS trace_environment'] : []),
    ...(groupBy.includes('model_name') ? ['model_names'] : []),
    ...metaKeys.map((key, i) => {
      const k = b.param('String', key);
      return `if(JSONHas(${ROOT_HEAD_JSON}, 2, ${k}), JSONExtractString(${ROOT_HEAD_JSON}, 2, ${k}), arrayFirst(kv -> kv.1 = ${k}, metadata_pairs).2) AS trace_meta${i}`;
    }),
  ];
  const needsTraces = filters.length > 0 || groupBy.some((g) => TRACE_GROUPS.has(g) || g.startsWith('metadata.'));
  const conditions = filters.map((f) => traceCondition(f, b.param.bind(b)));
  const traces = needsTraces
    ? `\n  ${filters.length ? 'INNER' : 'LEFT'} JOIN (SELECT ${traceColumns.join(', ')} FROM traces FINAL
    WHERE ${['project_id = {project:String}', `trace_id IN (${scored})`, ...conditions].join('\n      AND ')}) AS t ON t.trace_id = s.trace_id`
    : '';
  const prompts = groupBy.some((g) => PROMPT_GROUPS.has(g))
    ? `\n  LEFT JOIN (SELECT trace_id, argMin(prompt_name, start_time) AS prompt_name, argMin(prompt_version, start_time) AS prompt_version
    FROM spans WHERE project_id = {project:String} AND prompt_name != '' AND trace_id IN (${scored}) GROUP BY trace_id) AS p ON p.trace_id = s.trace_id`
    : '';

  let meta = 0;
  const groups = groupBy.map((g, i) => {
    const expr = groupExpression(g, g.startsWith('metadata.') ? meta++ : -1, b);
    return `${expr} AS g${i}`;
  });
  return `SELECT s.created_at AS at, s.value AS x${groups.map((g) => `, ${g}`).join('')}
  FROM ${scores} AS s${traces}${prompts}`;
}

/** A group-by as a String over the joined row (the trace side's defaults are '' and [] when unjoined). */
function groupExpression(field: string, metaIndex: number, b: ParamBuilder): string {
  if (field.startsWith('metadata.')) {
    const key = b.param('String', field.slice('metadata.'.length));
    return `if(s.metadata[${key}] != '', s.metadata[${key}], t.trace_meta${metaIndex})`;
  }
  switch (field) {
    case 'score_source':
      return 's.source';
    case 'score_string_value':
      return 's.string_value';
    case 'evaluator_version':
      return "if(s.evaluator_version = 0, '', toString(s.evaluator_version))";
    case 'model_name':
      return "arrayJoin(if(empty(t.model_names), [''], t.model_names))";
    case 'environment':
      return "if(s.environment != '', s.environment, t.trace_environment)";
    case 'name':
      return 't.trace_name';
    case 'user_id':
      return 't.trace_user';
    case 'session_id':
      return "if(s.session_id != '', s.session_id, t.trace_session)";
    case 'prompt_name':
      return 'p.prompt_name';
    case 'prompt_version':
      return "if(p.prompt_version = 0, '', toString(p.prompt_version))";
    default:
      throw new Error(`no SCORES group ${field}`);
  }
}
