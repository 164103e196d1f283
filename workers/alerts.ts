import type { Job } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { workerLog } from './periodic.js';
import { ALERTS_QUEUE, keepTicksScheduled, runTick, type TickJob } from '../src/alerts/evaluation.js';
import { deliverNotification, NOTIFY_QUEUE, type NotifyJob } from '../src/alerts/notifications.js';

/**
 * How long an idle worker waits before looking for jobs again when nothing woke it. On the embedded
 * queue (BullMQ's Postgres backend on PGlite) no NOTIFY reaches the worker, so this bounds how late a
 * webhook leaves; BullMQ's 5 s default would add up to 5 s per hop. On Redis it only shortens a block.
 */
const POLL_SECONDS = 1;

/**
 * Alert evaluation ticks (every minute, from a job scheduler) and webhook deliveries. Ticks run one
 * at a time per process; a second worker process shares the alerts through claims (src/alerts/claims.ts).
 * A tick stops between query groups when its job is cancelled (`worker.cancelAllJobs()` on shutdown).
 */
export function startAlertWorkers(ctx: AppContext, options: { schedule?: boolean } = {}) {
  const log = workerLog(ctx, 'alerts');
  // Before the workers exist: on the embedded queue an upsert issued after them never answered.
  // Again after every Redis outage: a Redis that comes back empty has lost the scheduler.
  if (options.schedule ?? true) {
    keepTicksScheduled(ctx, (error: unknown) =>
      log(`could not schedule the evaluation tick: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
  const ticks = ctx.queue.worker<TickJob>(
    ALERTS_QUEUE,
    async (job: Job<TickJob>, _token?: string, signal?: AbortSignal) => {
      const report = await runTick(ctx, {
        token: job.id ?? job.name,
        windowEndMs: job.data.window_end,
        projectIds: job.data.project_ids,
        signal,
      });
      // A stopped tick is a failed job, so it shows; the next tick evaluates the next window for every alert.
      if (report.aborted)
        throw new Error(`tick for ${report.windowEnd} stopped after ${report.committed} of ${report.claimed} alerts`);
      return report;
    },
    { concurrency: 1, drainDelay: POLL_SECONDS },
  );
  // Closing the worker (shutdown) cancels the running tick, which stops between query groups.
  ticks.on('closing', () => ticks.cancelAllJobs('worker closing'));
  const deliveries = ctx.queue.worker<NotifyJob>(
    NOTIFY_QUEUE,
    async (job: Job<NotifyJob>) => deliverNotification(ctx, job.data.notification_id),
    {
      concurrency: 4,
      drainDelay: POLL_SECONDS,
    },
  );
  // The queue store swallows worker errors; a failed tick or delivery must at least leave a line.
  for (const worker of [ticks, deliveries]) {
    worker.on('failed', (job, error) => log(`${worker.name} job ${job?.id ?? '?'} failed: ${error.message}`));
  }
  return [ticks, deliveries];
}
