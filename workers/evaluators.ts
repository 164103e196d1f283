import type { Job } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { upsertScheduler } from '../src/stores/queue.js';
import { workerLog } from './periodic.js';
import { runExecution } from '../src/evaluators/execution.js';
import {
  EVALUATOR_TICK_MS,
  EVALUATOR_TICK_QUEUE,
  EXECUTIONS_QUEUE,
  runEvaluatorTick,
  type ExecutionJob,
} from '../src/evaluators/runtime.js';

/**
 * Online evaluators (docs/evaluators.md): a tick every 2 s (enrolment, backfills, watchdog, sweep;
 * src/evaluators/runtime.ts) and the executions' jobs. A job's judge calls wait for one of the
 * project's call slots (src/evaluators/caps.ts), so the worker's concurrency is the most calls it
 * has in flight for all projects together, not per project.
 */
export const EXECUTION_WORKER_CONCURRENCY = 32;

type TickJob = { project_ids?: string[] };

export function startEvaluatorWorkers(ctx: AppContext, options: { schedule?: boolean; projectIds?: string[] } = {}) {
  const log = workerLog(ctx, 'evaluators');
  const data: TickJob = options.projectIds ? { project_ids: options.projectIds } : {};
  if (options.schedule ?? true) {
    // Before the workers exist (see startDetectionWorkers), and again after a Redis outage.
    const upsert = () =>
      void upsertScheduler<TickJob>(
        ctx.queue,
        EVALUATOR_TICK_QUEUE,
        `${EVALUATOR_TICK_QUEUE}-tick`,
        { every: EVALUATOR_TICK_MS },
        { name: 'tick', data },
      ).catch((error: unknown) =>
        log(`could not schedule evaluator ticks: ${error instanceof Error ? error.message : String(error)}`),
      );
    upsert();
    ctx.queue.onReconnect(EVALUATOR_TICK_QUEUE, upsert);
  }
  const ticks = ctx.queue.worker<TickJob>(
    EVALUATOR_TICK_QUEUE,
    async (job: Job<TickJob>) => {
      await runEvaluatorTick(ctx, job.data.project_ids ? { projectIds: job.data.project_ids } : {});
    },
    { concurrency: 1, drainDelay: 1 },
  );
  ticks.on('failed', (job, error) => log(`tick ${job?.id ?? '?'} failed: ${error.message}`));
  const executions = ctx.queue.worker<ExecutionJob>(
    EXECUTIONS_QUEUE,
    async (job: Job<ExecutionJob>) => runExecution(ctx, job.data.execution_id),
    { concurrency: EXECUTION_WORKER_CONCURRENCY, drainDelay: 1 },
  );
  executions.on('failed', (job, error) => log(`execution ${job?.id ?? '?'} failed: ${error.message}`));
  return [ticks, executions];
}
