import type { Job } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { startPeriodicWorker, workerLog } from './periodic.js';
import { enqueueExport, EXPORTS_QUEUE, type ExportJob } from '../src/exports/service.js';
import { runExport, sweepExports } from '../src/exports/runner.js';
import { runDueSchedules } from '../src/exports/schedules.js';

/** The exports' periodic pass: due schedules, exports to queue again, expired downloads (src/exports/). */
export const EXPORTS_TICK_QUEUE = 'exports-tick';
const TICK_MS = 60_000;

/**
 * Runs exports (src/exports/runner.ts), two at a time per process, and the periodic pass. Closing the
 * worker (shutdown) stops a running export between parts without failing it; the pass queues it again
 * once its lease has run out, and the next run goes on from the first part not done.
 */
export function startExportWorkers(ctx: AppContext, options: { tickMs?: number } = {}) {
  const log = workerLog(ctx, 'exports');
  const tick = startPeriodicWorker(ctx, {
    queue: EXPORTS_TICK_QUEUE,
    everyMs: options.tickMs ?? TICK_MS,
    log,
    what: 'the exports pass',
    pass: async () => {
      await runDueSchedules(ctx);
      await sweepExports(ctx, (id) => enqueueExport(ctx, id));
    },
  });
  const runs = ctx.queue.worker<ExportJob>(
    EXPORTS_QUEUE,
    async (job: Job<ExportJob>, _token?: string, signal?: AbortSignal) =>
      runExport(ctx, job.data.export_id, { signal }),
    { concurrency: 2, drainDelay: 1 },
  );
  runs.on('closing', () => runs.cancelAllJobs('worker closing'));
  runs.on('failed', (job, error) => log(`export job ${job?.id ?? '?'} failed: ${error.message}`));
  return [tick, runs];
}
