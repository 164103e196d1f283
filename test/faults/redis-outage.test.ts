import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from 'bullmq';
import { call, createApiKey, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { privateDatabase, startPrivateRedis, waitFor, type PrivateRedis } from '../support/private-servers.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { startAlertWorkers } from '../../workers/alerts.js';
import { ALERTS_QUEUE, keepTicksScheduled, runTick, TICK_SCHEDULER_ID } from '../../src/alerts/evaluation.js';
import { DETECTION_QUEUE, DETECTION_SCHEDULER_ID, keepDetectionScheduled } from '../../src/signals/schedule.js';
import { NOTIFY_QUEUE, sweepNotifications } from '../../src/alerts/notifications.js';

/**
 * Redis stopped (a server of this test's own): the API keeps serving (rate-limit counters let
 * requests through while their store is away), a job queued while Redis was down runs once it
 * is back, and an alert that fires around the outage notifies exactly once. The server keeps nothing
 * on disk, so a restart is also the harshest case: every job it held is gone.
 */

let redis: PrivateRedis;
/** On a Postgres server, a database of this file's own (privateDatabase: other files' services tick every alert of a shared one). */
let database: Awaited<ReturnType<typeof privateDatabase>>;

// The servers start first; the harness opens on them and closes before they go (hooks unwind in reverse).
beforeAll(async () => {
  redis = await startPrivateRedis();
  database = await privateDatabase();
});
afterAll(async () => {
  await redis?.destroy();
  await database?.drop();
});
/** Stops and starts that remember the state, so a failed test still leaves Redis up for the rest. */
let redisDown = false;
const stopRedis = async () => {
  redisDown = true;
  await redis.stop();
};
const startRedis = async () => {
  if (!redisDown) return;
  await redis.start();
  redisDown = false;
};

const h = useHarness(() => ({
  ...(database ? { DATABASE_URL: database.url } : {}),
  REDIS_URL: redis.url,
  QUEUE_PREFIX: `outage${process.pid}`,
  ALERT_WEBHOOK_ALLOW_PRIVATE: 'true',
  ALERT_WEBHOOK_BACKOFF_MS: '20',
  ALERT_WEBHOOK_TIMEOUT_MS: '3000',
}));

describe('Redis outage', () => {
  it(
    'keeps serving ingest and reads while Redis is down; a job queued meanwhile runs once Redis is back',
    { timeout: 120_000 },
    async () => {
      const { key, owner, project } = await projectWithKey(h(), 'redis-outage');
      await redis.stop();
      for (let i = 0; i < 5; i++) {
        const ingest = await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/traces`,
          token: key.key,
          payload: {
            spans: [{ trace_id: `t${i}`, span_id: `s${i}`, name: 'op', start_time: new Date().toISOString() }],
          },
        });
        expect(ingest.statusCode, ingest.body).toBe(200);
        const list = await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/traces?project_id=${project.id}`,
          token: owner.token,
        });
        expect(list.statusCode, list.body).toBe(200);
      }
      expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key })).json().meta.total).toBe(
        5,
      );

      // Queued while Redis is down (the connection holds it), processed after Redis returns.
      const seen: string[] = [];
      const queued = h()
        .ctx.queue.queue<{ id: string }>('outage-probe')
        .add('probe', { id: 'p1' }, { jobId: 'probe-1' });
      await redis.start();
      await queued;
      const worker = h().ctx.queue.worker<{ id: string }>('outage-probe', async (job) => void seen.push(job.data.id));
      await waitFor(() => seen.length === 1, 'the queued job to run', 60_000);
      await worker.close();
      expect(seen).toEqual(['p1']);
    },
  );

  it(
    "sends an alert's webhook exactly once when Redis stops during the tick, during the delivery, or before a retry",
    { timeout: 300_000 },
    async () => {
      const MIN = 60_000;
      const E = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
      const receiver = await startReceiver();
      const workers = startAlertWorkers(h().ctx, { schedule: false }) as Worker[];
      try {
        const { owner, project } = await projectWithKey(h(), 'redis-alerts');
        const key = (await createApiKey(h(), owner.token, project.id)).key;
        // One span in each of three minutes, so a count alert over `1m` breaches at E, E+1m and E+2m.
        await ingestSpans(
          h(),
          key,
          [0, 1, 2].map((i) => ({
            trace_id: `a${i}`,
            span_id: 's',
            name: 'op',
            start_time: new Date(E + i * MIN - 30_000).toISOString(),
          })),
        );
        const alert = async (path: string) => {
          const res = await call(h().api, {
            method: 'POST',
            url: `${PUBLIC}/alerts`,
            token: owner.token,
            payload: {
              name: `outage ${path}`,
              project_id: project.id,
              view: 'SPANS',
              measure: 'count',
              threshold: 0,
              window: '1m',
              notify: { webhook_url: receiver.url(path) },
            },
          });
          expect(res.statusCode, res.body).toBe(201);
          return res.json().alert.id as string;
        };
        const rows = async (id: string) =>
          (
            await h().ctx.pg.pool.query(
              'SELECT status, attempts, last_status_code FROM alert_notifications WHERE alert_id = $1 ORDER BY window_end',
              [id],
            )
          ).rows;
        // What the next minute's tick does after the outage: evaluate (nothing new is due) and sweep.
        const laterTicks = async (windowEndMs: number) => {
          const token = `tick-${crypto.randomUUID()}`;
          await within(runTick(h().ctx, { token, windowEndMs, projectIds: [project.id] }), 'a later tick');
          await within(sweepNotifications(h().ctx, [project.id]), 'a later sweep');
        };
        const settle = async (id: string) => {
          await waitUntilRows(async () => (await rows(id)).every((r) => r.status !== 'pending'), id);
          // Until the notification queue holds nothing more: any stray second job (a retry, a stalled job
          // run again) has run by then, and its request would be at the receiver.
          await waitFor(async () => {
            const counts = await h()
              .ctx.queue.queue(NOTIFY_QUEUE)
              .getJobCounts('waiting', 'active', 'delayed', 'prioritized');
            return Object.values(counts).every((n) => n === 0);
          }, 'the notification queue to be empty');
        };

        // 1. Redis stops before the tick commits: the transition is committed in Postgres, its enqueue
        //    waits for Redis, and the job (or the sweeper) delivers it once Redis is back.
        const during = await alert('/tick');
        await stopRedis();
        const tick = runTick(h().ctx, {
          token: `tick-${crypto.randomUUID()}`,
          windowEndMs: E,
          projectIds: [project.id],
        });
        await waitUntilRows(async () => (await rows(during)).length === 1, 'the committed notification');
        expect(receiver.on('/tick')).toHaveLength(0);
        await startRedis();
        expect(await within(tick, 'the tick caught by the outage')).toMatchObject({ committed: 1, notifications: 1 });
        await settle(during);
        await laterTicks(E);
        await settle(during);
        expect(receiver.on('/tick')).toHaveLength(1);
        expect(await rows(during)).toEqual([{ status: 'delivered', attempts: 1, last_status_code: 200 }]);

        // 2. Redis stops while the POST is in flight: the receiver has it, the attempt is recorded in
        //    Postgres, and the job Redis lost is not run again by anyone.
        const inflight = await alert('/inflight');
        receiver.onRequest = async (r) => {
          if (r.path === '/inflight') await stopRedis();
        };
        // Not awaited before Redis returns: the tick's own sweep may be caught by the outage too.
        const second = runTick(h().ctx, {
          token: `tick-${crypto.randomUUID()}`,
          windowEndMs: E + MIN,
          projectIds: [project.id],
        });
        await waitUntilRows(
          async () => (await rows(inflight)).some((r) => r.status === 'delivered'),
          'the in-flight delivery recorded',
        );
        receiver.onRequest = undefined;
        await startRedis();
        await within(second, 'the tick whose delivery was caught by the outage');
        await laterTicks(E + MIN);
        await settle(inflight);
        expect(receiver.on('/inflight')).toHaveLength(1);
        expect(await rows(inflight)).toEqual([{ status: 'delivered', attempts: 1, last_status_code: 200 }]);

        // 3. The receiver fails while Redis is down: the retry Redis was to hold is lost with it; the
        //    sweeper sends the notification again, once, and it is delivered on the second attempt.
        const retried = await alert('/retry');
        receiver.script('/retry', [503, 200]);
        receiver.onRequest = async (r, nth) => {
          if (r.path === '/retry' && nth === 1) await stopRedis();
        };
        const third = runTick(h().ctx, {
          token: `tick-${crypto.randomUUID()}`,
          windowEndMs: E + 2 * MIN,
          projectIds: [project.id],
        });
        await waitUntilRows(
          async () => (await rows(retried))[0]?.last_status_code === 503,
          'the failed attempt recorded',
        );
        receiver.onRequest = undefined;
        await startRedis();
        await within(third, 'the tick whose first attempt failed during the outage');
        await waitUntilRows(async () => {
          await sweepNotifications(h().ctx, [project.id]);
          return (await rows(retried))[0]?.status === 'delivered';
        }, 'the retried delivery');
        await laterTicks(E + 2 * MIN);
        await settle(retried);
        expect(receiver.on('/retry').map((r) => r.headers['x-sightline-attempt'])).toEqual(['1', '2']);
        expect(await rows(retried)).toEqual([{ status: 'delivered', attempts: 2, last_status_code: 200 }]);
        // Each alert's one transition, one webhook each, the same delivery id on every attempt.
        expect(new Set(receiver.on('/retry').map((r) => r.headers['x-sightline-delivery'])).size).toBe(1);
      } finally {
        receiver.onRequest = undefined;
        // Workers close only with Redis there to answer.
        await startRedis();
        // Forced: the queue is empty by now, and a close waiting on a stuck job would hide the failure.
        await Promise.allSettled(workers.map((w) => within(w.close(true), `closing the ${w.name} worker`)));
        await within(receiver.close(), 'closing the webhook receiver');
      }
    },
  );
});

describe('Redis that comes back empty', () => {
  // No worker runs here (the alert test's are closed): the schedulers are looked at, never run.
  it(
    'gets the alert and detection schedulers back, so ticks resume without a worker restart',
    { timeout: 120_000 },
    async () => {
      const ctx = h().ctx;
      const errors: unknown[] = [];
      const stops = [
        keepTicksScheduled(ctx, (e) => errors.push(e)),
        keepDetectionScheduled(ctx, { projectIds: [crypto.randomUUID()] }, (e) => errors.push(e)),
      ];
      const alerts = ctx.queue.queue(ALERTS_QUEUE);
      const detection = ctx.queue.queue(DETECTION_QUEUE);
      const scheduled = async () => [
        (await alerts.getJobScheduler(TICK_SCHEDULER_ID))?.key,
        (await detection.getJobScheduler(DETECTION_SCHEDULER_ID))?.key,
      ];
      await startRedis();
      try {
        await waitFor(async () => (await scheduled()).every(Boolean), 'the schedulers');
        await stopRedis();
        await startRedis();
        // The restarted server holds nothing (no persistence) until the schedulers are upserted again.
        await waitFor(async () => (await scheduled()).every(Boolean), 'the schedulers after the restart', 60_000);
        expect(await scheduled()).toEqual([TICK_SCHEDULER_ID, DETECTION_SCHEDULER_ID]);
        expect(errors).toEqual([]);
      } finally {
        await startRedis();
        for (const stop of stops) stop();
        await alerts.removeJobScheduler(TICK_SCHEDULER_ID);
        await detection.removeJobScheduler(DETECTION_SCHEDULER_ID);
      }
    },
  );
});

/** A step that has no bound of its own, bounded: a hang fails as this step, not as the test's time-out. */
async function within<T>(step: Promise<T>, what: string, boundMs = 60_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      step,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish in ${boundMs} ms`)), boundMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitUntilRows(check: () => Promise<boolean>, what: string): Promise<void> {
  await waitFor(check, what, 60_000);
}
