import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Worker } from 'bullmq';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { waitUntil } from '../support/wait.js';
import { startDetectionWorkers } from '../../workers/detection.js';
import { DETECTION_EVERY_MS, DETECTION_QUEUE, DETECTION_SCHEDULER_ID } from '../../src/signals/schedule.js';
import { failingTrace } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * The detection worker as `npm start` runs it: a job scheduler ticks every few seconds, the worker
 * runs the ticks (passes, then root-cause hints); a finding and its signal appear after an ingest
 * with nobody calling anything.
 */

// Its own queue prefix: no other test file's worker takes these jobs.
const h = useHarness({ QUEUE_PREFIX: `signals-worker-${crypto.randomBytes(4).toString('hex')}` });

let workers: Worker[] = [];
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await h().ctx.queue.queue(DETECTION_QUEUE).removeJobScheduler(DETECTION_SCHEDULER_ID);
});

describe('the detection worker', () => {
  it('shows a signal, its finding and then its root-cause hints after an ingest, on its own', async () => {
    const { key, project } = await projectWithKey(h());
    // Ticks scoped to this project: the test Postgres is shared with other files' projects.
    workers = startDetectionWorkers(h().ctx, { projectIds: [project.id] }) as Worker[];
    await waitUntil(
      async () => (await h().ctx.queue.queue(DETECTION_QUEUE).getJobSchedulers()).length === 1,
      'the detection job scheduler',
    );
    const [scheduler] = await h().ctx.queue.queue(DETECTION_QUEUE).getJobSchedulers();
    expect(Number(scheduler!.every)).toBe(DETECTION_EVERY_MS);

    const ingestedAt = Date.now();
    await ingestSpans(h(), key.key, failingTrace('TimeoutError', 'tool.search'));
    let signal: { signal_id: string; title: string; hit_count: number } | undefined;
    await waitUntil(async () => {
      const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/signals`, token: key.key });
      signal = list.json().data[0];
      return signal !== undefined;
    }, 'the signal');
    const visibleAfterMs = Date.now() - ingestedAt;
    expect(signal).toMatchObject({ title: 'TimeoutError in tool.search', hit_count: 1 });
    await waitUntil(
      async () =>
        (await call(h().api, { method: 'GET', url: `${PUBLIC}/findings`, token: key.key })).json().meta.total === 1,
      'the finding',
    );
    await waitUntil(
      async () =>
        (await call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${signal!.signal_id}`, token: key.key })).json()
          .rca_state === 'ready',
      'the hints',
    );
    // Reported, not asserted (the bench measures it): the target is 10 s at p95.
    console.log(`detection: signal visible ${visibleAfterMs} ms after the ingest`);
  });
});
