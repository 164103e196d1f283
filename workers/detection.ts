import type { Job } from 'bullmq';
import type { AppContext } from '../src/context.js';
import { workerLog } from './periodic.js';
import { runDetectionTick } from '../src/signals/detection.js';
import { DETECTION_QUEUE, keepDetectionScheduled, type DetectionJob } from '../src/signals/schedule.js';

/**
 * Detection ticks (every 2 s, from a job scheduler: src/signals/schedule.ts): the detectors' passes,
 * then the pending root-cause hints. Ticks run one at a time per process; two worker processes
 * running the same detector count its findings once (a pass commits only against the detector's
 * current pass_seq: src/signals/commit.ts).
 */
/**
 * How long an idle worker waits before looking for jobs again when nothing woke it. On the embedded
 * queue no NOTIFY reaches the worker, so this bounds how late a tick starts (the 10 s target).
 */
const POLL_SECONDS = 1;

export function startDetectionWorkers(ctx: AppContext, options: { schedule?: boolean; projectIds?: string[] } = {}) {
  const log = workerLog(ctx, 'detection');
  // Before the worker exists: on the embedded queue an upsert issued after a queue's workers exist
  // was measured never to answer (src/alerts/evaluation.ts, scheduleTicks).
  // Again after every Redis outage: a Redis that comes back empty has lost the scheduler.
  if (options.schedule ?? true) {
    keepDetectionScheduled(ctx, { projectIds: options.projectIds }, (error: unknown) =>
      log(`could not schedule detection: ${error instanceof Error ? error.message : String(error)}`),
    );
  }
  const ticks = ctx.queue.worker<DetectionJob>(
    DETECTION_QUEUE,
    async (job: Job<DetectionJob>, _token?: string, signal?: AbortSignal) =>
      runDetectionTick(ctx, { projectIds: job.data.project_ids, signal, log }),
    { concurrency: 1, drainDelay: POLL_SECONDS },
  );
  // Closing the worker (shutdown) cancels the running tick, which stops between passes.
  ticks.on('closing', () => ticks.cancelAllJobs('worker closing'));
  // The queue store swallows worker errors; a failed tick must at least leave a line.
  ticks.on('failed', (job, error) => log(`tick ${job?.id ?? '?'} failed: ${error.message}`));
  return [ticks];
}
