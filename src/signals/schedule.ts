import type { AppContext } from '../context.js';
import { upsertScheduler } from '../stores/queue.js';

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
 * The ticks' job scheduler (upsertScheduler: deadline and retries). Without it nothing is ever
 * detected. `projectIds` narrows every tick to those projects (tests sharing one Postgres).
 */
export function scheduleDetection(
  ctx: AppContext,
  options: { everyMs?: number; projectIds?: string[] } = {},
  attempts = 8,
): Promise<void> {
  const data: DetectionJob = options.projectIds ? { project_ids: options.projectIds } : {};
  return upsertScheduler<DetectionJob>(
    ctx.queue,
    DETECTION_QUEUE,
    DETECTION_SCHEDULER_ID,
    { every: options.everyMs ?? DETECTION_EVERY_MS },
    { name: 'tick', data },
    attempts,
  );
}
