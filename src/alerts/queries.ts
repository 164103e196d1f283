import { paramBuilder, type Query } from '../query/params.js';
import { MIB, READ_MEMORY_BYTES, settingsClause, type QueryLimits } from '../query/limits.js';
import { planWidget, type Source } from '../query/span-plan.js';
import { rawSpanValue, rollupValue, spanGroup, type Aggregation } from '../query/measures.js';
import { predicateCondition } from '../query/conditions.js';
import { sealedRollup } from '../query/sealed-rollups.js';
import type { SpanPredicate } from '../query/predicates.js';
import { windowStart } from './clock.js';
import { planScores } from '../query/score-plan.js';
import { widgetSpec, type AlertView, type AlertWindow, type Operator } from './schema.js';

/**
 * The ClickHouse side of an evaluation (pure): alerts of one project that share window, filters,
 * group-by and source are answered by ONE query with a value column per alert (issue 10; docs/design.md,
 * "Lessons from peers"). Each column is the very expression the widget planner uses for the same
 * spec (rawSpanValue / rollupValue), over the source planWidget picks for it (the per-minute
 * rollups when the filters are rollup dimensions, raw spans otherwise), so an alert's value is the
 * widget engine's answer for its spec and window (a rollup read through its `_sealed` view, whose
 * `sealed` parameter evaluation.ts sets: src/rollups/sealed-read.ts). Alerts whose specs would read different sources
 * (a rollup has no state for `max(cost)`, say) are put in different queries, never forced onto one.
 *
 * Grouped alerts: one row per group, groups without the dimension ('' values) left out (they belong
 * to no group), and for each alert its top MAX_GROUPS groups by value (lowest first for `<`/`<=`,
 * whose breaches are the low values).
 */

export const MAX_GROUPS = 100;

/**
 * Each evaluation query's limits, in its own SETTINGS (src/query/limits.ts; never per-query client
 * settings on chdb). An answer is one row, or at most MAX_GROUPS rows per alert.
 */
export function evaluationLimits(group: { groupBy: string | null; alerts: unknown[] }): QueryLimits {
  return {
    maxExecutionSeconds: 20,
    maxMemoryBytes: READ_MEMORY_BYTES,
    maxResultRows: group.groupBy ? MAX_GROUPS * group.alerts.length : 1,
    maxResultBytes: 16 * MIB,
  };
}

export type MeasuredAlert = {
  id: string;
  project_id: string;
  /** SPANS when absent; a SCORES alert names its score. */
  view?: AlertView;
  score_name?: string | null;
  measure: string;
  aggregation: Aggregation;
  time_window: AlertWindow;
  predicates: SpanPredicate[];
  group_by: string | null;
  threshold_operator: Operator;
};

export type EvaluationGroup<A extends MeasuredAlert = MeasuredAlert> = {
  projectId: string;
  window: AlertWindow;
  groupBy: string | null;
  source: Source;
  /** The window the query reads (the widget planner's alignment; whole minutes already). */
  rangeStartMs: number;
  rangeEndMs: number;
  alerts: A[];
};

/** The source the widget engine reads for this alert's spec over its window. */
function planFor(alert: MeasuredAlert, windowEndMs: number) {
  const spec = widgetSpec(alert);
  return planWidget(alert.group_by ? 'table' : 'stat', spec, alert.project_id, {
    startMs: windowStart(alert.time_window, windowEndMs),
    endMs: windowEndMs,
  });
}

/** Alerts sharing project, window, filters, group-by and source, each set answered by one query. */
export function groupAlerts<A extends MeasuredAlert>(alerts: A[], windowEndMs: number): EvaluationGroup<A>[] {
  const groups = new Map<string, EvaluationGroup<A>>();
  for (const alert of alerts) {
    const plan = planFor(alert, windowEndMs);
    // A SCORES alert is answered by a query of its own (scoreGroupQuery): its score, aggregation and
    // ranking direction are the query's.
    const key = JSON.stringify(
      plan.source === 'scores'
        ? ['scores', alert.id]
        : [alert.project_id, alert.time_window, alert.predicates, alert.group_by, plan.source],
    );
    let group = groups.get(key);
    if (!group) {
      group = {
        projectId: alert.project_id,
        window: alert.time_window,
        groupBy: alert.group_by,
        source: plan.source,
        rangeStartMs: plan.rangeStartMs,
        rangeEndMs: plan.rangeEndMs,
        alerts: [],
      };
      groups.set(key, group);
    }
    group.alerts.push(alert);
  }
  return [...groups.values()];
}

/**
 * The query of a group. Columns: `n` (rows matched: 0 is a window without data), then per alert i
 * `v<i>`; grouped, `g` first and `r<i>` (the group's rank for alert i) after each value.
 */
export function groupQuery(group: EvaluationGroup, options: { tail?: boolean } = {}): Query {
  const b = paramBuilder({ project: group.projectId });
  const rollup = group.source !== 'spans';
  const time = rollup ? 'bucket' : 'start_time';
  const from = b.param("DateTime64(3, 'UTC')", group.rangeStartMs / 1000);
  const to = b.param("DateTime64(3, 'UTC')", group.rangeEndMs / 1000);
  const predicates = group.alerts[0]!.predicates;
  const where = [
    'project_id = {project:String}',
    `${time} >= ${from}`,
    `${time} < ${to}`,
    ...predicates.map((p) => predicateCondition(p, b)),
  ];
  const n = rollup ? 'toUInt64(sum(spans))' : 'count()';
  const values = group.alerts.map((alert, i) => {
    const spec = widgetSpec(alert);
    return `${rollup ? rollupValue(spec)! : rawSpanValue(spec)} AS v${i}`;
  });
  const table = rollup ? sealedRollup(group.source, options.tail !== false) : group.source;
  const settings = settingsClause(evaluationLimits(group));
  if (!group.groupBy) {
    return {
      query: `SELECT ${n} AS n, ${values.join(', ')}\nFROM ${table}\nWHERE ${where.join('\n  AND ')}\n${settings}`,
      query_params: b.params,
    };
  }
  const g = spanGroup(group.groupBy, b);
  const ranked = group.alerts.map((alert, i) => {
    const direction = alert.threshold_operator === '<' || alert.threshold_operator === '<=' ? 'ASC' : 'DESC';
    return `row_number() OVER (ORDER BY v${i} ${direction} NULLS LAST, g) AS r${i}`;
  });
  const outer = group.alerts.map((_, i) => `v${i}, r${i}`);
  const limit = b.param('UInt32', MAX_GROUPS);
  return {
    query: `SELECT g, n, ${outer.join(', ')}
FROM (
  SELECT g, n, ${group.alerts.map((_, i) => `v${i}`).join(', ')}, ${ranked.join(', ')}
  FROM (
    SELECT ${g} AS g, ${n} AS n, ${values.join(', ')}
    FROM ${table}
    WHERE ${[...where, `${g} != ''`].join('\n      AND ')}
    GROUP BY g
  )
)
WHERE ${group.alerts.map((_, i) => `r${i} <= ${limit}`).join(' OR ')}
${settings}`,
    query_params: b.params,
  };
}

/**
 * The query of a SCORES alert's group (one alert): the widget engine's SCORES plan for its spec over
 * the window (a `stat`, or a `table` of its MAX_GROUPS groups ranked as the alert breaches, '' groups
 * left out). Rows end with `value` and `count`.
 */
export function scoreGroupQuery(group: EvaluationGroup): Query {
  const alert = group.alerts[0]!;
  const ascending = alert.threshold_operator === '<' || alert.threshold_operator === '<=';
  const plan = planScores(
    alert.group_by ? 'table' : 'stat',
    widgetSpec(alert),
    group.projectId,
    { startMs: group.rangeStartMs, endMs: group.rangeEndMs },
    { ascending, skipEmptyGroups: true, limit: MAX_GROUPS },
  );
  return { query: plan.query, query_params: plan.query_params };
}

/** A SCORES group's rows as its alert's answer: no scores in the window (count 0) is no data. */
export function readScoreGroupAnswer(group: EvaluationGroup, rows: unknown[][]): Map<string, AlertAnswer> {
  const alert = group.alerts[0]!;
  const answer: AlertAnswer = new Map();
  for (const row of rows) {
    const offset = group.groupBy ? 1 : 0;
    const value = roundValue(row[offset]);
    if (Number(row[offset + 1]) === 0 || value === null) continue;
    answer.set(group.groupBy ? String(row[0]) : '', value);
  }
  return new Map([[alert.id, answer]]);
}

/** One alert's answer: its value per series ('' when ungrouped); an empty map is a window without data. */
export type AlertAnswer = Map<string, number>;

/**
 * Reads a group's rows (JSONCompactEachRow) into each alert's answer. A series whose value is null
 * (an average over spans without an end, say) measured nothing, like a window without rows.
 */
export function readGroupAnswer(group: EvaluationGroup, rows: unknown[][]): Map<string, AlertAnswer> {
  const answers = new Map<string, AlertAnswer>(group.alerts.map((a) => [a.id, new Map()]));
  for (const row of rows) {
    if (!group.groupBy) {
      if (Number(row[0]) === 0) continue;
      group.alerts.forEach((alert, i) => {
        const v = roundValue(row[1 + i]);
        if (v !== null) answers.get(alert.id)!.set('', v);
      });
      continue;
    }
    const key = String(row[0]);
    group.alerts.forEach((alert, i) => {
      const v = roundValue(row[2 + 2 * i]);
      const rank = Number(row[3 + 2 * i]);
      if (v !== null && rank <= MAX_GROUPS) answers.get(alert.id)!.set(key, v);
    });
  }
  return answers;
}

/** As the widget engine rounds its answers (src/widgets/data.ts), so both print the same number. */
export function roundValue(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  if (!Number.isFinite(n)) return null;
  return Math.round(n * 1e9) / 1e9;
}
