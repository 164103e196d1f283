import type { AppContext } from '../context.js';
import { advanceBackfills } from './backfill.js';
import { enabledEvaluators, enrolEvaluator } from './enrolment.js';
import { runWatchdog } from './watchdog.js';

/**
 * The evaluator worker's tick (docs/evaluators.md, "How traces are scored"; workers/evaluators.ts runs
 * it every EVALUATOR_TICK_MS from a job scheduler): enrolment of every enabled evaluator, the
 * backfills, the watchdog, and a sweep that queues pending executions again whose job was lost (a
 * worker that stopped; queue job ids are the execution ids, so a waiting job is never doubled).
 * Executions run as jobs of EXECUTIONS_QUEUE (execution.ts), never on the request path.
 */

export const EVALUATOR_TICK_QUEUE = 'evaluator-tick';
export const EXECUTIONS_QUEUE = 'evaluator-executions';
export const EVALUATOR_TICK_MS = 2_000;
/** A pending execution this old is queued again by the sweep (its job may have been lost). */
export const SWEEP_AFTER_MS = 60_000;

export type ExecutionJob = { execution_id: string };
export type TickOptions = {
  projectIds?: readonly string[];
  /** Only these evaluators' enrolment (tests sharing a project). */
  evaluatorIds?: readonly string[];
  /** The clock (tests move it past an evaluator's delay). */
  now?: number;
  /** Where new executions go: the queue by default; tests may run them directly. */
  enqueue?: (executionIds: string[]) => Promise<void>;
  watchdog?: boolean;
  /** How recent a stored span may be and still be read (tests: 0, their ingest has answered). */
  latenessMs?: number;
};

export async function enqueueExecutions(ctx: AppContext, executionIds: readonly string[]): Promise<void> {
  if (executionIds.length === 0) return;
  await ctx.queue.queue<ExecutionJob>(EXECUTIONS_QUEUE).addBulk(
    executionIds.map((id) => ({
      name: 'run',
      data: { execution_id: id },
      opts: { jobId: id, removeOnComplete: true, removeOnFail: 100 },
    })),
  );
}

/**
 * The projects' new executions taking turns, one of each in turn: jobs run in queue order and a
 * job waits for a call slot of its own project, so one project's backlog queued whole would keep
 * the worker busy on that project's slots while the others' stay idle.
 */
function alternate(lists: string[][]): string[] {
  const out: string[] = [];
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) for (const list of lists) if (i < list.length) out.push(list[i]!);
  return out;
}

export async function runEvaluatorTick(ctx: AppContext, options: TickOptions = {}): Promise<{ created: string[] }> {
  const now = options.now ?? Date.now();
  const enqueue = options.enqueue ?? ((ids: string[]) => enqueueExecutions(ctx, ids));
  const byProject = new Map<string, string[]>();
  for (const evaluator of await enabledEvaluators(ctx.pg.pool, options.projectIds, options.evaluatorIds)) {
    const ids = await enrolEvaluator(ctx, evaluator, now, options.latenessMs);
    byProject.set(evaluator.project_id, [...(byProject.get(evaluator.project_id) ?? []), ...ids]);
  }
  const created = alternate([...byProject.values()]);
  await enqueue(created);
  const backfilled = await advanceBackfills(ctx, options.projectIds);
  created.push(...backfilled);
  await enqueue(backfilled);
  if (options.enqueue === undefined) {
    const { rows } = await ctx.pg.pool.query<{ execution_id: string }>(
      `SELECT execution_id FROM evaluator_executions
        WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1::double precision / 1000)
          AND ($2::uuid[] IS NULL OR project_id = ANY($2::uuid[]))
        ORDER BY project_id, created_at LIMIT 1000`,
      [SWEEP_AFTER_MS, options.projectIds ? [...options.projectIds] : null],
    );
    await enqueue(rows.map((r) => r.execution_id));
  }
  if (options.watchdog ?? true) await runWatchdog(ctx, { projectIds: options.projectIds });
  return { created };
}
