import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { findVersion } from '../datasets/version-read.js';
import { aggregatesOf, findRun, RUN_SELECT, summaryOf, type RunRow, type RunSummary } from './summary.js';
import type { RunStatus } from './answers.js';

/**
 * Evaluations and their runs (docs/datasets.md). Reads take a project resolved by the route; run
 * writes take an API key's project. Another project's evaluation or run is a 404.
 */

export const EVALUATION_NOT_FOUND = 'evaluation not found';

export type EvaluationRecord = {
  id: string;
  evaluation_id: string;
  name: string;
  evaluation_key: string | null;
  run_count: number;
  created_at: string;
  updated_at: string;
};

type EvaluationRow = {
  id: string;
  name: string;
  key: string | null;
  run_count: number;
  created_at: Date;
  updated_at: Date;
};
const EVALUATION_COLUMNS = 'id, name, key, run_count, created_at, updated_at';

function evaluationRecord(row: EvaluationRow): EvaluationRecord {
  return {
    id: row.id,
    evaluation_id: row.id,
    name: row.name,
    evaluation_key: row.key,
    run_count: row.run_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** Most recently run first, paged like the trace list. */
export async function listEvaluations(db: Queryable, projectId: string, limit: number, page: number) {
  const [items, total] = await Promise.all([
    db.query<EvaluationRow>(
      `SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE project_id = $1 ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [projectId, limit, limit * page],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM evaluations WHERE project_id = $1', [projectId]),
  ]);
  return { data: items.rows.map(evaluationRecord), meta: { page, limit, total: total.rows[0]!.n } };
}

/** One evaluation with a page of its runs (summaries), newest first; `run_count` counts them all. */
export async function getEvaluation(
  ctx: AppContext,
  projectId: string,
  evaluationId: string,
  limit: number,
  page: number,
): Promise<EvaluationRecord & { runs: RunSummary[] }> {
  if (!isUuid(evaluationId)) throw new NotFoundError(EVALUATION_NOT_FOUND);
  const db = ctx.pg.pool;
  const { rows } = await db.query<EvaluationRow>(
    `SELECT ${EVALUATION_COLUMNS} FROM evaluations WHERE id = $1 AND project_id = $2`,
    [evaluationId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(EVALUATION_NOT_FOUND);
  const runs = await db.query<RunRow>(
    `${RUN_SELECT} WHERE r.evaluation_id = $1 ORDER BY r.run_number DESC LIMIT $2 OFFSET $3`,
    [evaluationId, limit, limit * page],
  );
  const entries = await aggregatesOf(
    db,
    runs.rows.map((r) => r.id),
  );
  return { ...evaluationRecord(rows[0]), runs: runs.rows.map((r) => summaryOf(ctx.config, r, entries.get(r.id)!)) };
}

export type CreateRunInput = {
  evaluation_name: string;
  evaluation_key?: string | null;
  dataset_version_id: string;
  candidate_version: string;
  environment: string;
};

/**
 * `POST /evaluation-runs`: the evaluation is found by key, else by name, else created (docs/datasets.md); the run
 * gets the evaluation's next number. By name: with a key, only an evaluation without a key of its own
 * is found, and it adopts the key; without a key, the oldest of that name. The project row lock
 * serialises concurrent find-or-creates of one project (two first runs never make two evaluations);
 * the evaluation row's UPDATE hands out run numbers 1..N without gaps or duplicates.
 */
export async function createRun(ctx: AppContext, projectId: string, input: CreateRunInput): Promise<RunSummary> {
  await findVersion(ctx.pg.pool, projectId, input.dataset_version_id);
  const runId = await withTransaction(ctx.pg.pool, async (tx) => {
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [projectId]);
    const evaluationId = await findOrCreateEvaluation(
      tx,
      projectId,
      input.evaluation_name,
      input.evaluation_key ?? null,
    );
    const bumped = await tx.query<{ run_count: number }>(
      'UPDATE evaluations SET run_count = run_count + 1, updated_at = now() WHERE id = $1 RETURNING run_count',
      [evaluationId],
    );
    const id = newId();
    await tx.query(
      `INSERT INTO evaluation_runs (id, evaluation_id, project_id, dataset_version_id, run_number, candidate_version, environment)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        id,
        evaluationId,
        projectId,
        input.dataset_version_id.toLowerCase(),
        bumped.rows[0]!.run_count,
        input.candidate_version,
        input.environment,
      ],
    );
    return id;
  });
  const row = await findRun(ctx.pg.pool, projectId, runId);
  return summaryOf(ctx.config, row, { scores: [], metrics: [] });
}

async function findOrCreateEvaluation(
  tx: Queryable,
  projectId: string,
  name: string,
  key: string | null,
): Promise<string> {
  if (key !== null) {
    const byKey = await tx.query<{ id: string }>('SELECT id FROM evaluations WHERE project_id = $1 AND key = $2', [
      projectId,
      key,
    ]);
    if (byKey.rows[0]) return byKey.rows[0].id;
  }
  const byName = await tx.query<{ id: string }>(
    `SELECT id FROM evaluations WHERE project_id = $1 AND name = $2 AND ($3::text IS NULL OR key IS NULL) ORDER BY created_at, id LIMIT 1`,
    [projectId, name, key],
  );
  if (byName.rows[0]) {
    if (key !== null) await tx.query('UPDATE evaluations SET key = $2 WHERE id = $1', [byName.rows[0].id, key]);
    return byName.rows[0].id;
  }
  const id = newId();
  await tx.query('INSERT INTO evaluations (id, project_id, name, key) VALUES ($1, $2, $3, $4)', [
    id,
    projectId,
    name,
    key,
  ]);
  return id;
}

/** What `complete` may be asked for; `completed` asks for the computed final status. */
export const REQUESTED_STATUSES = ['completed', 'failed', 'cancelled', 'incomplete'] as const;
export type RequestedStatus = (typeof REQUESTED_STATUSES)[number];

/**
 * `POST /evaluation-runs/{id}/complete` (docs/datasets.md): `completed`, or `completed_with_errors` when any result
 * or scorer errored, unless `failed`, `cancelled` or `incomplete` is given. A run is final once: a
 * repeat that asks for the status it already has answers the summary again (a retried request), any
 * other change is a 409. The run row lock orders it against result writes: a result write either
 * lands before (and counts) or after (and is refused).
 */
export async function completeRun(
  ctx: AppContext,
  projectId: string,
  runId: string,
  requested: RequestedStatus | undefined,
): Promise<RunSummary> {
  await withTransaction(ctx.pg.pool, async (tx) => {
    const row = await findRun(tx, projectId, runId, true);
    const computed: RunStatus =
      requested !== undefined && requested !== 'completed'
        ? requested
        : Number(row.errored_count) > 0
          ? 'completed_with_errors'
          : 'completed';
    if (row.status !== 'running') {
      if (row.status === computed) return;
      throw new ConflictError(`evaluation run is already ${row.status}; it cannot become ${computed}`);
    }
    await tx.query('UPDATE evaluation_runs SET status = $2, completed_at = now() WHERE id = $1', [row.id, computed]);
  });
  const row = await findRun(ctx.pg.pool, projectId, runId);
  return summaryOf(ctx.config, row, (await aggregatesOf(ctx.pg.pool, [row.id])).get(row.id)!);
}
