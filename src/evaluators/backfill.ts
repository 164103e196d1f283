import type { AppContext } from '../context.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { isUuid } from '../ids.js';
import { newId } from '../ids.js';
import type { Queryable } from '../stores/postgres.js';
import { withinLimits } from '../query/limits.js';
import { selectTracesQuery } from '../traces/list-query.js';
import { KEYS_LIMITS } from '../traces/read-bounds.js';
import { isSampled } from './identity.js';
import { enrolTargets, targetsOf } from './enrolment.js';
import { EVALUATOR_COLUMNS, type EvaluatorRow } from './record.js';
import { evaluatorRow } from './service.js';

/**
 * Backfills (docs/evaluators.md, "Backfill"): the evaluator run over the traces of a past window.
 * `POST` stores the request (`pending`); the worker's next tick reads the window's matching traces
 * (the trace list's query: filters, no evaluation or judge traces), newest first, at most
 * MAX_BACKFILL_TRACES of them, keeps those in the evaluator's sample, and enrols their targets
 * (`running`, `total` set): a target never scored gets an execution, one already scored is run
 * again (its score replaced, as re-running replaces). `done` counts the backfill's executions that
 * finished; at `done = total` it is `completed`. One unfinished backfill per evaluator (409).
 */

export const MAX_BACKFILL_TRACES = 10_000;
export const MAX_BACKFILL_DAYS = 90;
export const BACKFILL_NOT_FOUND = 'backfill not found';
export const BACKFILL_RUNNING = 'this evaluator has a backfill in progress; wait for it to finish';

type BackfillRow = {
  id: string;
  evaluator_id: string;
  project_id: string;
  start_time: Date;
  end_time: Date;
  status: 'pending' | 'running' | 'completed' | 'cancelled';
  total: number;
  truncated: boolean;
  created_at: Date;
  finished_at: Date | null;
  done: string | number;
};

export type Backfill = {
  backfill_id: string;
  evaluator_id: string;
  status: BackfillRow['status'];
  start_time: string;
  end_time: string;
  total: number;
  done: number;
  truncated: boolean;
  created_at: string;
  finished_at: string | null;
};

const SELECT = `SELECT b.id, b.evaluator_id, b.project_id, b.start_time, b.end_time, b.status, b.total, b.truncated,
       b.created_at, b.finished_at,
       (SELECT count(*) FROM evaluator_executions x
         WHERE x.backfill_id = b.id AND x.status IN ('completed', 'error', 'skipped')) AS done
  FROM evaluator_backfills b`;

function answerOf(r: BackfillRow): Backfill {
  return {
    backfill_id: r.id,
    evaluator_id: r.evaluator_id,
    status: r.status,
    start_time: r.start_time.toISOString(),
    end_time: r.end_time.toISOString(),
    total: r.total,
    done: r.status === 'completed' ? r.total : Math.min(r.total, Number(r.done)),
    truncated: r.truncated,
    created_at: r.created_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  };
}

const windowIssue = (msg: string, field: 'start_time' | 'end_time') =>
  new RequestValidationError([{ loc: ['body', field], msg, type: 'value_error' }]);

export async function createBackfill(
  ctx: AppContext,
  projectId: string,
  evaluatorId: string,
  userId: string | null,
  body: { start_ms: number; end_ms: number },
): Promise<Backfill> {
  const db = ctx.pg.pool;
  const evaluator = await evaluatorRow(db, projectId, evaluatorId);
  const start = body.start_ms;
  const end = body.end_ms;
  if (end <= start) throw windowIssue('end_time must be after start_time', 'end_time');
  if (end - start > MAX_BACKFILL_DAYS * 86_400_000)
    throw windowIssue(`a backfill window is at most ${MAX_BACKFILL_DAYS} days`, 'end_time');
  if (start > Date.now()) throw windowIssue('start_time must not be in the future', 'start_time');
  const id = newId();
  try {
    await db.query(
      `INSERT INTO evaluator_backfills (id, evaluator_id, project_id, start_time, end_time, created_by)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, evaluator.id, projectId, new Date(start), new Date(end), userId],
    );
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new ConflictError(BACKFILL_RUNNING);
    throw error;
  }
  return getBackfill(db, projectId, evaluator.id, id);
}

export async function getBackfill(
  db: Queryable,
  projectId: string,
  evaluatorId: string,
  backfillId: string,
): Promise<Backfill> {
  const evaluator = await evaluatorRow(db, projectId, evaluatorId);
  if (!isUuid(backfillId)) throw new NotFoundError(BACKFILL_NOT_FOUND);
  const { rows } = await db.query<BackfillRow>(
    `${SELECT} WHERE b.id = $1 AND b.evaluator_id = $2 AND b.project_id = $3`,
    [backfillId, evaluator.id, projectId],
  );
  if (!rows[0]) throw new NotFoundError(BACKFILL_NOT_FOUND);
  return answerOf(rows[0]);
}

/** Enrols one pending backfill's window; answers the executions to run. */
async function startBackfill(ctx: AppContext, b: BackfillRow, evaluator: EvaluatorRow): Promise<string[]> {
  const db = ctx.pg.pool;
  const q = selectTracesQuery(
    {
      projectId: b.project_id,
      limit: MAX_BACKFILL_TRACES + 1,
      page: 0,
      startAfter: b.start_time.getTime(),
      endBefore: b.end_time.getTime(),
      includeEvaluations: false,
      includeJudgeTraces: false,
      filters: evaluator.filters,
    },
    { ...KEYS_LIMITS, maxResultRows: MAX_BACKFILL_TRACES + 1 },
  );
  const found = await withinLimits(KEYS_LIMITS, 'narrow the backfill window', () =>
    ctx.ch.rows<{ trace_id: string }>(q),
  );
  const truncated = found.length > MAX_BACKFILL_TRACES;
  const traceIds = found
    .slice(0, MAX_BACKFILL_TRACES)
    .map((r) => r.trace_id)
    .filter((id) => isSampled(id, evaluator.id, evaluator.sampling_rate));
  const targets = await targetsOf(ctx, evaluator, traceIds);
  const fresh = await enrolTargets(db, evaluator, targets, b.id);
  // Targets scored before are run again under this backfill (a running one is left to finish).
  const again = await db.query<{ execution_id: string }>(
    `UPDATE evaluator_executions x
        SET backfill_id = $2, status = 'pending', attempts = 0, error = NULL, finished_at = NULL, started_at = NULL
       FROM jsonb_to_recordset($3::jsonb) AS t(trace_id text, span_id text)
      WHERE x.evaluator_id = $1 AND x.trace_id = t.trace_id AND COALESCE(x.span_id, '') = COALESCE(t.span_id, '')
        AND x.status IN ('completed', 'error', 'skipped') AND (x.backfill_id IS NULL OR x.backfill_id <> $2)
      RETURNING x.execution_id`,
    [evaluator.id, b.id, JSON.stringify(targets)],
  );
  const total = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM evaluator_executions WHERE backfill_id = $1',
    [b.id],
  );
  await db.query(`UPDATE evaluator_backfills SET status = 'running', total = $2, truncated = $3 WHERE id = $1`, [
    b.id,
    total.rows[0]!.n,
    truncated,
  ]);
  return [...fresh, ...again.rows.map((r) => r.execution_id)];
}

/**
 * The worker's backfill step: pending backfills are enrolled (their executions answered, to be
 * queued), running ones whose executions all finished are completed.
 */
export async function advanceBackfills(ctx: AppContext, projectIds?: readonly string[]): Promise<string[]> {
  const db = ctx.pg.pool;
  const { rows } = await db.query<BackfillRow>(
    `${SELECT} WHERE b.status IN ('pending', 'running') AND ($1::uuid[] IS NULL OR b.project_id = ANY($1::uuid[]))
      ORDER BY b.created_at LIMIT 20`,
    [projectIds ? [...projectIds] : null],
  );
  const created: string[] = [];
  for (const b of rows) {
    if (b.status === 'pending') {
      const { rows: evaluators } = await db.query<EvaluatorRow>(
        `SELECT ${EVALUATOR_COLUMNS} FROM evaluators WHERE id = $1`,
        [b.evaluator_id],
      );
      const evaluator = evaluators[0];
      if (!evaluator || !evaluator.enabled) {
        await db.query(`UPDATE evaluator_backfills SET status = 'cancelled', finished_at = now() WHERE id = $1`, [
          b.id,
        ]);
        continue;
      }
      created.push(...(await startBackfill(ctx, b, evaluator)));
    } else if (Number(b.done) >= b.total) {
      await db.query(
        `UPDATE evaluator_backfills SET status = 'completed', finished_at = now() WHERE id = $1 AND status = 'running'`,
        [b.id],
      );
    }
  }
  return created;
}
