import type { AppContext } from '../context.js';
import { isUuid } from '../ids.js';
import { ConflictError, RequestValidationError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { findRun, type RunRow } from './summary.js';
import { validateResults, type NormalizedResult, type RejectedResult } from './result-input.js';
import { mirrorResults } from './result-mirror.js';
import { recordKey } from '../idempotency/deferred.js';

/**
 * `POST /evaluation-runs/{id}/results` (docs/datasets.md, "Runs and results"): stores each valid result of the run's
 * dataset version, replacing an earlier result of the same test case, and keeps the run's counts and
 * per-name sums exact in the same transaction.
 *
 * Exactness under replacement: one statement reads the replaced rows (their stored contribution
 * flags and scores) and the new ones, and adds `new − old` to the counts and numeric sums. The run
 * row is locked first, so concurrent writes to one run apply one after the other, and a write racing
 * `complete` either counts or is refused (409).
 *
 * The same rows go to ClickHouse for public SQL (`evaluation_results`) before the commit: if that
 * fails nothing is committed (503, retry); the copy is versioned by `revision`, so a retry or a
 * concurrent replacement leaves the newest result there too. Should the commit itself fail after the
 * copy was written, the copy holds a result Postgres doesn't until the caller retries (same
 * revision: the retry's row replaces it). Embedded, the copy's insert runs while the transaction
 * holds PGlite (one transaction at a time), so other requests wait for it too.
 *
 * Bounded by cost (issue 20): the results are applied in chunks of at most CHUNK_BYTES of result
 * text, each chunk one transaction as above. A 64 MiB request so never holds the store (embedded
 * PGlite is one session, and its transaction holds it) for longer than one chunk; others' statements,
 * authentication first, run between chunks. The price: should a later chunk fail (503, or 409 when
 * the run completed meanwhile), the earlier chunks stay stored. Results are keyed by test case and a
 * re-sent one replaces its result exactly, so sending the same request again converges on the same
 * state and counts; the answer's `accepted` counts only a request that wrote every chunk.
 *
 * With an Idempotency-Key (a deferred create, src/idempotency/deferred.ts), the last chunk's
 * transaction records the key with the answer, after its results and before their ClickHouse copy:
 * the key commits with the last chunk. A crash before that leaves earlier chunks that the retry
 * replaces exactly; a duplicate that recorded the key first rolls the last chunk back before its
 * copy is written, and answers the first one's answer. The answer is written here as text, so the
 * recorded bytes are the bytes sent.
 */

export type WriteAnswer = { accepted: number; rejected: RejectedResult[] };

/** The answer of `writeResults` as sent: `{accepted, rejected}` JSON text. */
export async function writeResults(
  ctx: AppContext,
  projectId: string,
  runId: string,
  raw: readonly unknown[],
): Promise<string> {
  const run = await findRun(ctx.pg.pool, projectId, runId);
  refuseUnlessRunning(run);
  const { accepted, rejected } = validateResults(raw);
  const known = await versionCases(ctx.pg.pool, run.dataset_version_id, accepted);
  const valid: NormalizedResult[] = [];
  for (const r of accepted) {
    if (known.has(r.testCaseId)) valid.push(r);
    else
      rejected.push({
        index: r.index,
        test_case_id: r.testCaseId,
        errors: [`test_case_id: not a test case of the run's dataset version ${run.dataset_version_id}`],
      });
  }
  rejected.sort((a, b) => a.index - b.index);
  // Nothing to write: the idempotency plugin records a key of this answer by itself.
  if (valid.length === 0) return answerText({ accepted: 0, rejected });
  const answer = answerText({ accepted: valid.length, rejected });

  // A test case sent twice in one request: the later result replaces the earlier, as across requests.
  const last = new Map<string, NormalizedResult>();
  for (const r of valid) last.set(r.testCaseId, r);
  const rows = [...last.values()];

  const chunks = [...chunkResults(rows)];
  for (const [i, chunk] of chunks.entries()) {
    await withTransaction(ctx.pg.pool, async (tx) => {
      const locked = await findRun(tx, projectId, runId, true);
      refuseUnlessRunning(locked);
      const revisions = await applyResults(tx, locked.id, chunk.texts);
      if (i === chunks.length - 1) await recordKey(tx, { status: 200, contentType: JSON_TYPE, body: answer });
      // A failure here rolls the chunk's transaction back; the route answers 503 so the caller retries.
      await mirrorResults(ctx, locked, chunk.rows, revisions);
    });
  }
  return answer;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function answerText(answer: WriteAnswer): string {
  return JSON.stringify({
    accepted: answer.accepted,
    rejected: answer.rejected.map((r) => ({ index: r.index, test_case_id: r.test_case_id, errors: r.errors })),
  });
}

/** Results per transaction: at most this much result text (a single larger result goes alone). */
export const RESULT_CHUNK_BYTES = 1024 * 1024;
const RESULT_CHUNK_ROWS = 1000;

function* chunkResults(rows: NormalizedResult[]): Generator<{ rows: NormalizedResult[]; texts: string[] }> {
  let chunk: { rows: NormalizedResult[]; texts: string[] } = { rows: [], texts: [] };
  let bytes = 0;
  for (const row of rows) {
    const text = resultJson(row);
    if (chunk.rows.length > 0 && (bytes + text.length > RESULT_CHUNK_BYTES || chunk.rows.length >= RESULT_CHUNK_ROWS)) {
      yield chunk;
      chunk = { rows: [], texts: [] };
      bytes = 0;
    }
    chunk.rows.push(row);
    chunk.texts.push(text);
    bytes += text.length;
  }
  if (chunk.rows.length > 0) yield chunk;
}

function refuseUnlessRunning(run: RunRow): void {
  if (run.status !== 'running')
    throw new ConflictError(`evaluation run is ${run.status}; results can no longer be written`);
}

/** The test case ids among the results that belong to the version (ids that aren't UUIDs can't). */
async function versionCases(db: Queryable, versionId: string, results: NormalizedResult[]): Promise<Set<string>> {
  const ids = [...new Set(results.map((r) => r.testCaseId).filter(isUuid))];
  if (ids.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    'SELECT id FROM dataset_test_cases WHERE version_id = $1 AND id = ANY($2::uuid[])',
    [versionId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** One result as a jsonb array element: `output` spliced as the caller's text, never re-serialised. */
function resultJson(r: NormalizedResult): string {
  const rest = JSON.stringify({
    test_case_id: r.testCaseId,
    trace_id: r.traceId,
    error: r.error,
    scores: r.scores,
    metrics: r.metrics,
    passed: r.passed,
    scored: r.scored,
    task_error: r.taskError,
    scorer_errors: r.scorerErrors,
  });
  return r.output === null ? rest : `{"output":${r.output},${rest.slice(1)}`;
}

/**
 * Upserts the results and applies their contribution minus the replaced results' to the run's counts
 * and per-name aggregates, in one statement (all its parts see the rows as they were before it).
 * Returns each written test case's new revision.
 * $1 run id, $2 jsonb array of resultJson.
 */
const APPLY_SQL = `
WITH incoming AS (
  SELECT (x->>'test_case_id')::uuid AS test_case_id, x->'output' AS output, x->>'trace_id' AS trace_id, x->>'error' AS error,
         x->'scores' AS scores, x->'metrics' AS metrics, (x->>'passed')::boolean AS passed, (x->>'scored')::boolean AS scored,
         (x->>'task_error')::boolean AS task_error, (x->>'scorer_errors')::int AS scorer_errors
    FROM jsonb_array_elements($2::jsonb) AS x
),
old AS (
  SELECT r.test_case_id, r.scores, r.metrics, r.passed, r.scored, r.task_error, r.scorer_errors
    FROM evaluation_results r JOIN incoming i ON i.test_case_id = r.test_case_id
   WHERE r.run_id = $1
),
written AS (
  INSERT INTO evaluation_results AS r (run_id, test_case_id, output, trace_id, error, scores, metrics, passed, scored, task_error, scorer_errors)
  SELECT $1, test_case_id, output, trace_id, error, scores, metrics, passed, scored, task_error, scorer_errors FROM incoming
  ON CONFLICT (run_id, test_case_id) DO UPDATE SET
    output = EXCLUDED.output, trace_id = EXCLUDED.trace_id, error = EXCLUDED.error, scores = EXCLUDED.scores, metrics = EXCLUDED.metrics,
    passed = EXCLUDED.passed, scored = EXCLUDED.scored, task_error = EXCLUDED.task_error, scorer_errors = EXCLUDED.scorer_errors,
    revision = r.revision + 1, updated_at = now()
  RETURNING r.test_case_id, r.revision
),
contributions AS (
  SELECT 1 AS sign, passed, scored, task_error, scorer_errors, scores, metrics FROM incoming
  UNION ALL
  SELECT -1, passed, scored, task_error, scorer_errors, scores, metrics FROM old
),
counted AS (
  UPDATE evaluation_runs AS run SET
    result_count       = run.result_count + d.results,
    scored_count       = run.scored_count + d.scored,
    passed_count       = run.passed_count + d.passed,
    failed_count       = run.failed_count + d.failed,
    errored_count      = run.errored_count + d.errored,
    scorer_error_count = run.scorer_error_count + d.scorer_errors,
    task_error_count   = run.task_error_count + d.task_errors
  FROM (SELECT COALESCE(sum(sign), 0) AS results,
               COALESCE(sum(sign) FILTER (WHERE scored), 0) AS scored,
               COALESCE(sum(sign) FILTER (WHERE passed), 0) AS passed,
               COALESCE(sum(sign) FILTER (WHERE NOT passed), 0) AS failed,
               COALESCE(sum(sign) FILTER (WHERE task_error OR scorer_errors > 0), 0) AS errored,
               COALESCE(sum(sign * scorer_errors), 0) AS scorer_errors,
               COALESCE(sum(sign) FILTER (WHERE task_error), 0) AS task_errors
          FROM contributions) AS d
  WHERE run.id = $1
  RETURNING 1
),
entries AS (
  SELECT c.sign, 'score' AS kind, e FROM contributions c, jsonb_array_elements(c.scores) AS e
  UNION ALL
  SELECT c.sign, 'metric', e FROM contributions c, jsonb_array_elements(c.metrics) AS e
),
valued AS (
  -- Observed: a value (number, or boolean as 1/0) and no scorer error. jsonb numbers cast to numeric exactly.
  SELECT sign, kind, e->>'name' AS name, e->>'direction' AS direction, e->>'unit' AS unit,
         jsonb_typeof(e->'value') IN ('number', 'boolean') AND NOT (e ? 'error') AS observed,
         jsonb_typeof(e->'value') = 'boolean' AS is_boolean,
         CASE jsonb_typeof(e->'value') WHEN 'number' THEN (e->'value')::numeric
                                       WHEN 'boolean' THEN CASE WHEN (e->'value')::boolean THEN 1 ELSE 0 END END AS value
    FROM entries
),
aggregated AS (
  INSERT INTO evaluation_run_aggregates AS a (run_id, kind, name, occurrence_count, observed_count, boolean_count, value_sum, direction, unit)
  SELECT $1, kind, name, sum(sign),
         COALESCE(sum(sign) FILTER (WHERE observed), 0),
         COALESCE(sum(sign) FILTER (WHERE observed AND is_boolean), 0),
         COALESCE(sum(sign * value) FILTER (WHERE observed), 0),
         max(direction) FILTER (WHERE sign = 1), max(unit) FILTER (WHERE sign = 1)
    FROM valued GROUP BY kind, name
  ON CONFLICT (run_id, kind, name) DO UPDATE SET
    occurrence_count = a.occurrence_count + EXCLUDED.occurrence_count,
    observed_count   = a.observed_count + EXCLUDED.observed_count,
    boolean_count    = a.boolean_count + EXCLUDED.boolean_count,
    value_sum        = a.value_sum + EXCLUDED.value_sum,
    direction        = COALESCE(EXCLUDED.direction, a.direction),
    unit             = COALESCE(EXCLUDED.unit, a.unit)
  RETURNING 1
)
SELECT test_case_id, revision FROM written`;

async function applyResults(tx: Queryable, runId: string, texts: string[]): Promise<Map<string, number>> {
  try {
    const { rows: written } = await tx.query<{ test_case_id: string; revision: number }>(APPLY_SQL, [
      runId,
      `[${texts.join(',')}]`,
    ]);
    return new Map(written.map((w) => [w.test_case_id, w.revision]));
  } catch (error) {
    // A value the checks let through but jsonb refuses (a number past numeric's range): the caller's.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('22')) {
      throw new RequestValidationError([
        {
          loc: ['body', 'results'],
          msg: 'a result holds a JSON value the store cannot hold (a number out of range?)',
          type: 'value_error',
        },
      ]);
    }
    throw error;
  }
}
