import type { AppContext } from '../context.js';
import { BadRequestError } from '../errors.js';
import { cursorKey, invalidCursor, readCursor, signCursor } from '../datasets/cursor.js';
import { aggregatesOf, findRun, type AggregateEntry, type RunRow } from './summary.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { CaseChangeAnswer, MeanDeltaAnswer, RunSideAnswer } from './answers.js';

/**
 * `GET /evaluation-runs/{run_id}/compare?other={run_id}` (issue 12, beyond the seed): two runs of one
 * dataset version side by side. The path's run is the baseline, `other` the candidate; every delta
 * is `other − run`.
 *
 * - `scores` / `metrics`: per name, both means (from the runs' aggregates: no per-case work) and the delta.
 * - `regressions` / `improvements`: the test cases, in version order, that got worse / better from
 *   run to other: passed → failed (failed → passed), or a score that moved against (with) its
 *   direction by more than `threshold`. Only test cases with a result in both runs are compared, and
 *   only scores with a value in both. A score's direction is the candidate's, else the baseline's;
 *   a name whose direction is neither `higher_is_better` nor `lower_is_better` never regresses.
 *   One case can be in both lists (one score down, another up).
 * - Paged: `limit` changed cases per page, `next_cursor` (bound to both runs and the threshold) for more.
 */

export const MAX_COMPARE_LIMIT = 1000;

/** The answer's parts, inferred from its schema (answers.ts). */
type Side = AnswerOf<typeof RunSideAnswer>;
type MeanDelta = AnswerOf<typeof MeanDeltaAnswer>;
type ScoreChange = {
  name: string;
  run_value: number;
  other_value: number;
  delta: number;
  change: 'regressed' | 'improved';
};
type CaseChange = AnswerOf<typeof CaseChangeAnswer>;

const side = (r: RunRow): Side => ({
  evaluation_run_id: r.id,
  run_number: r.run_number,
  candidate_version: r.candidate_version,
  environment: r.environment,
  status: r.status,
});

// A score entry's value as numeric (booleans 1/0), when it was observed (a value and no scorer error).
const num = (x: string) =>
  `CASE jsonb_typeof(${x}->'value') WHEN 'number' THEN (${x}->'value')::numeric WHEN 'boolean' THEN ((${x}->'value')::boolean)::int::numeric END`;
const observed = (x: string) => `(jsonb_typeof(${x}->'value') IN ('number', 'boolean') AND NOT (${x} ? 'error'))`;

/**
 * Changed cases in a range of ordinals, in version order; differences are exact (numeric). A
 * version's ordinals are 1..test_case_count, so a range is a key range of the version's cases and of
 * both runs' results: a page reads only as far as it needs (see changedCases).
 * $1 run, $2 other, $3 version, $4 after ordinal, $5 threshold, $6 directional names,
 * $7 lower_is_better names, $8 limit, $9 last ordinal of the range.
 */
const CHANGED_SQL = `
SELECT p.ordinal, p.test_case_id, p.run_passed, p.other_passed, p.scores FROM (
  SELECT c.ordinal, c.id AS test_case_id, a.passed AS run_passed, b.passed AS other_passed,
         (SELECT COALESCE(jsonb_agg(jsonb_build_object('name', s.name, 'run_value', s.rv, 'other_value', s.ov, 'delta', s.ov - s.rv,
                                                       'change', CASE WHEN s.gain > 0 THEN 'improved' ELSE 'regressed' END) ORDER BY s.name), '[]'::jsonb)
            FROM (SELECT sa->>'name' AS name, ${num('sa')} AS rv, ${num('sb')} AS ov,
                         CASE WHEN sa->>'name' = ANY($7::text[]) THEN ${num('sa')} - ${num('sb')} ELSE ${num('sb')} - ${num('sa')} END AS gain
                    FROM jsonb_array_elements(a.scores) sa JOIN jsonb_array_elements(b.scores) sb ON sb->>'name' = sa->>'name'
                   WHERE sa->>'name' = ANY($6::text[]) AND ${observed('sa')} AND ${observed('sb')}) s
           WHERE abs(s.gain) > $5) AS scores
    FROM dataset_test_cases c
    JOIN evaluation_results a ON a.run_id = $1 AND a.test_case_id = c.id
    JOIN evaluation_results b ON b.run_id = $2 AND b.test_case_id = c.id
   WHERE c.version_id = $3 AND c.ordinal > $4 AND c.ordinal <= $9) p
 WHERE (p.run_passed AND NOT p.other_passed) OR (NOT p.run_passed AND p.other_passed) OR jsonb_array_length(p.scores) > 0
 ORDER BY p.ordinal
 LIMIT $8`;

export async function compareRuns(
  ctx: AppContext,
  projectId: string,
  runId: string,
  otherId: string,
  page: { threshold: number; limit: number; cursor?: string },
) {
  const db = ctx.pg.pool;
  const run = await findRun(db, projectId, runId);
  const other = await findRun(db, projectId, otherId);
  if (run.dataset_version_id !== other.dataset_version_id) {
    throw new BadRequestError(
      'the two runs are of different dataset versions; compare runs of the same dataset version',
    );
  }
  const entries = await aggregatesOf(db, [run.id, other.id]);
  const base = entries.get(run.id)!;
  const cand = entries.get(other.id)!;
  const scores = meansAndDeltas(base.scores, cand.scores);
  const directional = scores.filter((s) => s.direction === 'higher_is_better' || s.direction === 'lower_is_better');

  const key = await cursorKey(ctx.pg);
  const scope = `compare:${run.id}:${other.id}:${page.threshold}`;
  let after = 0;
  if (page.cursor !== undefined) {
    const position = readCursor(key, scope, page.cursor);
    if (position === null) throw invalidCursor(page.cursor);
    after = position;
  }
  const rows = await changedCases(ctx, run, other, after, page.limit + 1, [
    page.threshold,
    directional.map((s) => s.name),
    directional.filter((s) => s.direction === 'lower_is_better').map((s) => s.name),
  ]);
  const more = rows.length > page.limit;
  const changed = more ? rows.slice(0, page.limit) : rows;
  const regressions: CaseChange[] = [];
  const improvements: CaseChange[] = [];
  for (const row of changed) {
    const entry = (kind: ScoreChange['change'], flipped: boolean) => {
      const moved = row.scores.filter((s) => s.change === kind).map(({ change: _, ...s }) => s);
      if (flipped || moved.length > 0)
        (kind === 'regressed' ? regressions : improvements).push({
          test_case_id: row.test_case_id,
          run_passed: row.run_passed,
          other_passed: row.other_passed,
          scores: moved,
        });
    };
    entry('regressed', row.run_passed === true && row.other_passed === false);
    entry('improved', row.run_passed === false && row.other_passed === true);
  }
  return {
    run: side(run),
    other: side(other),
    dataset_version_id: run.dataset_version_id,
    threshold: page.threshold,
    scores,
    metrics: meansAndDeltas(base.metrics, cand.metrics),
    regressions,
    improvements,
    next_cursor: more ? signCursor(key, scope, changed[changed.length - 1]!.ordinal) : null,
  };
}

type ChangedRow = {
  ordinal: number;
  test_case_id: string;
  run_passed: boolean | null;
  other_passed: boolean | null;
  scores: ScoreChange[];
};
const FIRST_RANGE = 2_000;
const MAX_RANGE = 64_000;

/**
 * Up to `wanted` changed cases after `after`, scanning the version in growing ranges of ordinals
 * until enough are found or the version ends: a page of a version with frequent changes reads a
 * few thousand cases, one with rare changes reads on, in a few large steps.
 */
async function changedCases(
  ctx: AppContext,
  run: RunRow,
  other: RunRow,
  after: number,
  wanted: number,
  filters: [number, string[], string[]],
): Promise<ChangedRow[]> {
  const { rows: head } = await ctx.pg.pool.query<{ n: number }>(
    'SELECT test_case_count AS n FROM dataset_versions WHERE id = $1',
    [run.dataset_version_id],
  );
  const count = head[0]?.n ?? 0;
  const found: ChangedRow[] = [];
  let from = after;
  let range = FIRST_RANGE;
  while (found.length < wanted && from < count) {
    const to = Math.min(count, from + range);
    const { rows } = await ctx.pg.pool.query<ChangedRow>(CHANGED_SQL, [
      run.id,
      other.id,
      run.dataset_version_id,
      from,
      ...filters,
      wanted - found.length,
      to,
    ]);
    found.push(...rows);
    from = to;
    range = Math.min(MAX_RANGE, range * 2);
  }
  return found;
}

/** Both runs' means per name (union of names, sorted); delta when both have one. */
function meansAndDeltas(base: AggregateEntry[], cand: AggregateEntry[]): MeanDelta[] {
  const names = [...new Set([...base.map((e) => e.name), ...cand.map((e) => e.name)])].sort();
  return names.map((name) => {
    const b = base.find((e) => e.name === name);
    const c = cand.find((e) => e.name === name);
    const runValue = b?.value ?? null;
    const otherValue = c?.value ?? null;
    const out: MeanDelta = {
      name,
      direction: c?.direction ?? b!.direction,
      run_value: runValue,
      other_value: otherValue,
      delta: runValue !== null && otherValue !== null ? otherValue - runValue : null,
      run_observed_count: b?.observed_count ?? 0,
      other_observed_count: c?.observed_count ?? 0,
    };
    const unit = c?.unit ?? b?.unit;
    if (unit !== undefined) out.unit = unit;
    return out;
  });
}
