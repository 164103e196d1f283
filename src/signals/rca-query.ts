import type { Query } from '../query/params.js';
import { elapsedMs, FINAL_SETTINGS, traceHourBefore, traceHourFrom, USER } from '../query/expressions.js';
import { MIB, SCAN_MEMORY_BYTES, settingsClause, type QueryLimits } from '../query/limits.js';
import type { RcaHint } from './service.js';

/**
 * Root-cause hints (issue 11), pure: which attributes are over-represented among a signal's traces
 * compared with the project's other traces of the same window. ONE query over the trace rollup
 * (one merged row per trace): each trace in the window becomes a set of (attribute, value) pairs
 * - model_name, environment, span_name, user_id, every metadata key (`metadata.<key>`: a release,
 *   an app version, a region, ...), and bands of its tokens and its latency - and the pairs are
 *   counted among the signal's traces and among the others. A `__traces` pair every trace has gives
 *   the two totals. The window is the signal's findings' trace starts, padded, at most a week.
 */

export const RCA_LIMITS: QueryLimits = {
  maxExecutionSeconds: 30,
  maxMemoryBytes: SCAN_MEMORY_BYTES,
  maxResultRows: 2000,
  maxResultBytes: 16 * MIB,
};
/** A hint needs at least this many of the signal's traces, and this share of them. */
export const MIN_SUPPORT = 3;
export const MIN_SIGNAL_SHARE = 0.2;
/** And must be this much more common among the signal's traces than among the others. */
export const MIN_LIFT = 1.5;
export const MAX_HINTS = 10;
const PAD_MINUTES = 30;
export const TOTAL_ATTRIBUTE = '__traces';
const TOTAL = TOTAL_ATTRIBUTE;

const TOKEN_BAND =
  "multiIf(total_tokens = 0, '0', total_tokens < 1000, '1-999', total_tokens < 10000, '1k-10k', total_tokens < 100000, '10k-100k', '100k+')";
const LATENCY_BAND = `multiIf(end_time IS NULL, '', duration < 1000, '<1s', duration < 5000, '1-5s', duration < 30000, '5-30s', duration < 120000, '30s-2m', '2m+')`;

/** Rows: attribute, value, s (signal traces with it), b (other traces with it); `__traces` first. */
export function rcaQuery(projectId: string, signalIds: string[]): Query {
  const signal =
    'SELECT trace_id FROM findings WHERE project_id = {project:String} AND signal_id IN {signals:Array(String)}';
  const bound = (agg: 'min' | 'max') =>
    `(SELECT ${agg}(trace_start_time) FROM findings WHERE project_id = {project:String} AND signal_id IN {signals:Array(String)})`;
  return {
    query: `WITH
  ${bound('max')} + INTERVAL ${PAD_MINUTES} MINUTE AS hi,
  greatest(${bound('min')}, ${bound('max')} - INTERVAL 7 DAY) - INTERVAL ${PAD_MINUTES} MINUTE AS lo
SELECT kv.1 AS attribute, kv.2 AS value, countIf(in_signal) AS s, countIf(NOT in_signal) AS b
FROM (
  SELECT trace_id IN (${signal}) AS in_signal,
         if(end_time IS NULL, 0, ${elapsedMs()}) AS duration,
         ${USER} AS uid,
         arrayConcat(
           [('${TOTAL}', '')],
           arrayMap(m -> ('model_name', m), model_names),
           arrayMap(e -> ('environment', e), environments),
           arrayMap(n -> ('span_name', n), span_names),
           if(uid = '', [], [('user_id', uid)]),
           arrayMap(p -> (concat('metadata.', p.1), p.2), metadata_pairs),
           [('tokens', ${TOKEN_BAND})],
           if(end_time IS NULL, [], [('latency', ${LATENCY_BAND})])
         ) AS pairs
  FROM traces FINAL
  WHERE project_id = {project:String}
    AND ${traceHourFrom('lo')}
    AND ${traceHourBefore('hi')}
    AND start_time >= lo AND start_time <= hi
    AND is_evaluation = 0
)
ARRAY JOIN pairs AS kv
GROUP BY attribute, value
HAVING attribute = '${TOTAL}' OR s >= ${MIN_SUPPORT}
ORDER BY attribute = '${TOTAL}' DESC, s DESC, attribute, value
LIMIT ${RCA_LIMITS.maxResultRows}
${settingsClause(RCA_LIMITS, FINAL_SETTINGS)}`,
    query_params: { project: projectId, signals: signalIds },
  };
}

export type RcaRow = { attribute: string; value: string; s: number | string; b: number | string };

/**
 * The hints from the query's rows: pairs seen in at least MIN_SUPPORT of the signal's traces and
 * MIN_SIGNAL_SHARE of them, at least MIN_LIFT times as common there as among the other traces,
 * strongest first. `lift` = signal_share / baseline_share; a value no other trace has counts as if
 * one more baseline trace had it (1 / (others + 1)), so the lift stays finite and honest about how
 * few traces it rests on. `exclude` drops what defines the signal itself (its span name).
 * No other traces in the window: nothing to compare with, no hints.
 */
export function rankHints(rows: RcaRow[], exclude: { attribute: string; value: string }[] = []): RcaHint[] {
  const total = rows.find((r) => r.attribute === TOTAL);
  const signalTotal = Number(total?.s ?? 0);
  const baselineTotal = Number(total?.b ?? 0);
  if (signalTotal === 0 || baselineTotal === 0) return [];
  const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  return rows
    .filter(
      (r) =>
        r.attribute !== TOTAL &&
        r.value !== '' &&
        !exclude.some((e) => e.attribute === r.attribute && e.value === r.value),
    )
    .map((r) => {
      const signalShare = Number(r.s) / signalTotal;
      const baselineShare = Number(r.b) / baselineTotal;
      const lift = signalShare / (Number(r.b) > 0 ? baselineShare : 1 / (baselineTotal + 1));
      return {
        attribute: r.attribute,
        value: r.value,
        s: Number(r.s),
        signal_share: signalShare,
        baseline_share: baselineShare,
        lift,
      };
    })
    .filter((h) => h.s >= MIN_SUPPORT && h.signal_share >= MIN_SIGNAL_SHARE && h.lift >= MIN_LIFT)
    .sort(
      (a, b) =>
        b.lift - a.lift ||
        b.signal_share - a.signal_share ||
        a.attribute.localeCompare(b.attribute) ||
        a.value.localeCompare(b.value),
    )
    .slice(0, MAX_HINTS)
    .map((h) => ({
      attribute: h.attribute,
      value: h.value,
      signal_share: round(h.signal_share, 4),
      baseline_share: round(h.baseline_share, 4),
      lift: round(h.lift, 3),
    }));
}
