import type { AppContext } from '../context.js';

/**
 * When detection runs: a BullMQ job scheduler adds a tick every DETECTION_EVERY_MS, and the worker
 * (workers/detection.ts) runs it (src/signals/detection.ts). The target is a finding and its signal
 * visible within 10 s (p95) of the ingest that caused it: a tick waits at most 2 s to start, the
 * worker picks it up within its 1 s poll on the embedded queue, and a pass over the new spans takes
 * tens of milliseconds (bench: "detection latency"). A tick that finds nothing new costs one
 * ClickHouse query (which projects stored spans) and two Postgres reads.
 */

export const DETECTION_QUEUE = 'detection';
export const DETECTION_SCHEDULER_ID = 'detection-tick';
export const DETECTION_EVERY_MS = 2_000;

export type DetectionJob = { project_ids?: string[] };

/** How long one attempt to upsert the scheduler may take before it is tried again. */
const ATTEMPT_TIMEOUT_MS = 10_000;

/** Schedules detection now and again whenever Redis returns from an outage (as keepTicksScheduled in src/alerts/evaluation.ts). */
export function keepDetectionScheduled(
  ctx: AppContext,
  options: { projectIds?: string[] },
  onError: (error: unknown) => void,
): () => void {
  const schedule = () => void scheduleDetection(ctx, options).catch(onError);
  schedule();
  return ctx.queue.onReconnect(DETECTION_QUEUE, schedule);
}

/**
 * The ticks' job scheduler; upserting is idempotent, so every worker process may call it. Without
 * it nothing is ever detected, so each attempt has a deadline and failures are retried: on the
 * embedded queue (one PGlite session behind every BullMQ connection, whose protocol messages
 * interleave) an upsert may fail while the workers' connections are being set up ("portal does not
 * exist"), or never answer (measured on `npm start`: no tick was ever scheduled).
 * `projectIds` narrows every tick to those projects (tests sharing one Postgres).
 */
export async function scheduleDetection(
  ctx: AppContext,
  options: { everyMs?: number; projectIds?: string[] } = {},
  attempts = 8,
): Promise<void> {
  const data: DetectionJob = options.projectIds ? { project_ids: options.projectIds } : {};
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    try {
      const upsert = ctx.queue
        .queue<DetectionJob>(DETECTION_QUEUE)
        .upsertJobScheduler(
          DETECTION_SCHEDULER_ID,
          { every: options.everyMs ?? DETECTION_EVERY_MS },
          { name: 'tick', data, opts: { removeOnComplete: 100, removeOnFail: 100 } },
        );
      upsert.catch(() => {});
      await Promise.race([
        upsert,
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error('the queue did not answer in time')), ATTEMPT_TIMEOUT_MS)),
        ),
      ]);
      return;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 10_000)));
    } finally {
      clearTimeout(timer);
    }
  }
}
