import type { AppContext } from '../context.js';
import type { NormalizedResult } from './result-input.js';
import type { RunRow } from './summary.js';

/**
 * The ClickHouse copy of results that public SQL reads as `evaluation_results`
 * (clickhouse/0004_evaluations.sql). Each row carries the Postgres revision of its result, which the
 * replacing engine keeps the highest of. Only observed score values go into `scores` (a scorer error
 * or a missing value has no number); booleans are 1/0.
 */
export async function mirrorResults(
  ctx: AppContext,
  run: RunRow,
  results: NormalizedResult[],
  revisions: Map<string, number>,
): Promise<void> {
  const values = results.map((r) => ({
    project_id: run.project_id,
    evaluation_run_id: run.id,
    evaluation_id: run.evaluation_id,
    dataset_version_id: run.dataset_version_id,
    test_case_id: r.testCaseId,
    trace_id: r.traceId,
    output: r.output,
    error: r.error,
    scores: Object.fromEntries(
      r.scores.filter((s) => s.error === undefined && s.value !== null).map((s) => [s.name, Number(s.value)]),
    ),
    metrics: Object.fromEntries(r.metrics.map((m) => [m.name, m.value])),
    passed: r.passed === null ? null : Number(r.passed),
    revision: revisions.get(r.testCaseId) ?? 1,
  }));
  // Settings stay out of the call: the embedded engine would keep them on its connection (docs/design.md, "Known traps").
  await ctx.ch.client.insert({ table: 'evaluation_results', values, format: 'JSONEachRow' });
}
