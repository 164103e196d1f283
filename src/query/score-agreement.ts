import { currentScores } from './scores.js';

/**
 * The pairs an evaluator's agreement with people is measured on (docs/evaluators.md, "Agreement with
 * people"): per trace and span ('' = the trace itself), the evaluator's newest live score of its score
 * name written in the window, beside the newest live annotation score of that name about the same
 * trace and span, of the same data type. `evaluatorWhere` and `annotationWhere` are conditions on the
 * scores table (scores.ts `scoreConditions`); the pairs are bounded by `limit`.
 */
export function agreementPairsQuery(
  project: string,
  evaluatorWhere: readonly string[],
  annotationWhere: readonly string[],
  limit: number,
  settings: string,
): string {
  const newest = (where: readonly string[]) => `SELECT trace_id, span_id, data_type,
      argMax(value, updated_at) AS value, argMax(string_value, updated_at) AS label
    FROM ${currentScores(project, where, 'trace_id, span_id, name, data_type, value, string_value, source, evaluator_id, created_at, updated_at, is_deleted')}
    GROUP BY trace_id, span_id, data_type`;
  return `SELECT e.trace_id AS trace_id, e.span_id AS span_id, e.data_type AS data_type,
  e.value AS evaluator_value, e.label AS evaluator_label, a.value AS annotation_value, a.label AS annotation_label
FROM (${newest(evaluatorWhere)}) AS e
INNER JOIN (${newest(annotationWhere)}) AS a
  ON a.trace_id = e.trace_id AND a.span_id = e.span_id AND a.data_type = e.data_type
WHERE e.trace_id != ''
ORDER BY trace_id, span_id
LIMIT ${limit}
${settings}`;
}
