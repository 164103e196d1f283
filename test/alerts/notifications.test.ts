import crypto from 'node:crypto';
import os from 'node:os';
import dns from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from 'bullmq';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { waitUntil } from '../support/wait.js';
import { startAlertWorkers } from '../../workers/alerts.js';
import { ALERTS_QUEUE, measureGroup, runTick } from '../../src/alerts/evaluation.js';
import { claimAlerts } from '../../src/alerts/claims.js';
import { commitGroup } from '../../src/alerts/commit.js';
import { groupAlerts } from '../../src/alerts/queries.js';
import { deliverNotification, enqueueNotifications, NOTIFY_QUEUE } from '../../src/alerts/notifications.js';
import { deliver, signBody } from '../../src/alerts/webhook.js';
import { withTransaction } from '../../src/stores/postgres.js';

/**
 * Webhooks end to end on real stores and real workers (BullMQ on this file's own queue prefix), with a
 * receiver on 127.0.0.1: signed bodies, retries with every attempt recorded, give-ups, and the
 * idempotency rules: a tick or delivery job run twice, two workers, and a worker stopped mid-tick
 * then restarted never send a second webhook for one transition.
 */

const h = useHarness({
  ALERT_WEBHOOK_ALLOW_PRIVATE: 'true',
  ALERT_WEBHOOK_BACKOFF_MS: '20',
  ALERT_WEBHOOK_ATTEMPTS: '4',
  ALERT_WEBHOOK_TIMEOUT_MS: '3000',
  // Jobs of this file stay in this file, whatever else shares the Redis.
  QUEUE_PREFIX: `alerts-test-${crypto.randomBytes(4).toString('hex')}`,
});
const MIN = 60_000;
const E = Math.floor(Date.now() / MIN) * MIN - 10 * MIN;
let receiver: Receiver;
let workers: Worker[];
let token: string;
let workspaceId: string;

beforeAll(async () => {
  receiver = await startReceiver();
  workers = startAlertWorkers(h().ctx, { schedule: false }) as Worker[];
  const owner = await signUp(h(), 'hooks');
  token = owner.token;
  workspaceId = owner.workspace.id;
});
afterAll(async () => {
  await receiver.close();
});

/** A project with one span at E - 30 s (a 1 ms latency), so count and latency alerts over the last minute breach. */
async function projectWithSpan(spans = 1) {
  const project = (await createProject(h(), token, workspaceId)).id;
  const key = (await createApiKey(h(), token, project)).key;
  await ingestSpans(
    h(),
    key,
    Array.from({ length: spans }, (_, i) => ({
      trace_id: `t${i}`,
      span_id: 's',
      name: 'op',
      model_name: i % 2 ? 'gpt-4o' : 'claude',
      start_time: new Date(E - 30_000).toISOString(),
      end_time: new Date(E - 29_999).toISOString(),
    })),
  );
  return project;
}
async function createAlert(project: string, path: string, body: Record<string, unknown> = {}) {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/alerts`,
    token,
    payload: {
      name: `hook ${path}`,
      project_id: project,
      view: 'SPANS',
      measure: 'count',
      threshold: 0,
      window: '1m',
      notify: { webhook_url: receiver.url(path) },
      ...body,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { alert: { id: string }; webhook_secret: string };
}
const readAlert = async (project: string, id: string) =>
  (await call(h().api, { method: 'GET', url: `${PUBLIC}/alerts/${id}`, token, query: { project_id: project } })).json();

/** Runs a tick through the queue, as the scheduler would, and waits for its job to finish. */
async function tickJob(project: string, windowEndMs = E, jobId = `tick-${crypto.randomUUID()}`) {
  const queue = h().ctx.queue.queue(ALERTS_QUEUE);
  await queue.add('tick', { window_end: windowEndMs, project_ids: [project] }, { jobId });
  await waitUntil(
    async () => ['completed', 'failed'].includes(await (await queue.getJob(jobId))!.getState()),
    `tick ${jobId}`,
  );
  return (await queue.getJob(jobId))!;
}
/** Every delivery job has run to the end (none waiting, active or delayed for a retry). */
async function deliveriesSettled() {
  await waitUntil(async () => {
    const counts = await h().ctx.queue.queue(NOTIFY_QUEUE).getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    return Object.values(counts).every((n) => n === 0);
  }, 'the notification queue to drain');
}
const notificationRows = async (alertId: string) =>
  (
    await h().ctx.pg.pool.query(
      'SELECT id, group_key, status, attempts, last_status_code, last_error FROM alert_notifications WHERE alert_id = $1 ORDER BY window_end, group_key',
      [alertId],
    )
  ).rows;

describe('a webhook', () => {
  it('is a signed JSON POST the receiver can verify, recorded on the alert', async () => {
    const project = await projectWithSpan();
    const { alert, webhook_secret } = await createAlert(project, '/signed', { severity: 'critical' });
    const job = await tickJob(project);
    expect(job.returnvalue).toMatchObject({ committed: 1, notifications: 1 });
    await waitUntil(() => receiver.on('/signed').length === 1, 'the webhook');
    await deliveriesSettled();
    const [hook] = receiver.on('/signed');
    expect(hook!.headers['content-type']).toBe('application/json');
    expect(hook!.headers['x-sightline-signature']).toBe(
      crypto.createHmac('sha256', webhook_secret).update(hook!.body).digest('hex'),
    );
    expect(hook!.headers['x-sightline-signature']).toBe(signBody(webhook_secret, hook!.body));
    const body = JSON.parse(hook!.body);
    expect(body).toEqual({
      id: hook!.headers['x-sightline-delivery'],
      alert_id: alert.id,
      alert_name: 'hook /signed',
      project_id: project,
      state: 'ALERTING',
      previous_state: 'OK',
      value: 1,
      threshold: 0,
      threshold_operator: '>',
      measure: 'count',
      aggregation: 'count',
      window: '1m',
      window_start: new Date(E - MIN).toISOString(),
      window_end: new Date(E).toISOString(),
      severity: 'critical',
      group: null,
      reason: 'OK → ALERTING: 1 > 0',
      url: `http://web.test/projects/${project}/alerts/${alert.id}`,
    });
    expect(await readAlert(project, alert.id)).toMatchObject({
      status: 'ALERTING',
      last_notify_status: 'delivered',
      last_notify_error: null,
      last_notify_at: expect.any(String),
    });
    expect((await notificationRows(alert.id)).map((n) => [n.status, n.attempts, n.last_status_code])).toEqual([
      ['delivered', 1, 200],
    ]);
    const history = (
      await call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/alerts/${alert.id}/evaluations`,
        token,
        query: { project_id: project },
      })
    ).json();
    expect(history.data[0]).toMatchObject({ state: 'ALERTING', notified: true });
  });

  it('is retried with backoff when the receiver fails twice, delivered once, every attempt recorded', async () => {
    const project = await projectWithSpan();
    receiver.script('/flaky', [503, 503, 200]);
    const { alert } = await createAlert(project, '/flaky');
    const seen: unknown[] = [];
    receiver.onRequest = async (r, nth) => {
      if (r.path !== '/flaky' || nth === 1) return;
      // Between attempts the alert shows the previous attempt's failure.
      const { rows } = await h().ctx.pg.pool.query(
        'SELECT last_notify_status, last_notify_error FROM alerts WHERE id = $1',
        [alert.id],
      );
      seen.push(rows[0]);
    };
    await tickJob(project);
    await waitUntil(() => receiver.on('/flaky').length === 3, 'three attempts');
    await deliveriesSettled();
    receiver.onRequest = undefined;
    const attempts = receiver.on('/flaky');
    expect(attempts.map((a) => a.headers['x-sightline-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(attempts.map((a) => a.body)).size).toBe(1);
    expect(new Set(attempts.map((a) => a.headers['x-sightline-signature'])).size).toBe(1);
    expect(seen).toEqual([
      { last_notify_status: 'retrying', last_notify_error: 'HTTP 503' },
      { last_notify_status: 'retrying', last_notify_error: 'HTTP 503' },
    ]);
    expect(await readAlert(project, alert.id)).toMatchObject({
      last_notify_status: 'delivered',
      last_notify_error: null,
    });
    expect((await notificationRows(alert.id)).map((n) => [n.status, n.attempts, n.last_status_code])).toEqual([
      ['delivered', 3, 200],
    ]);
  });

  it('gives up after the configured attempts, or at once on a 4xx no retry can fix', async () => {
    const project = await projectWithSpan();
    receiver.script('/down', [500]);
    receiver.script('/gone', [404]);
    const down = await createAlert(project, '/down');
    const gone = await createAlert(project, '/gone', { measure: 'latency' });
    await tickJob(project);
    await waitUntil(() => receiver.on('/down').length === 4 && receiver.on('/gone').length === 1, 'every attempt');
    await deliveriesSettled();
    expect(await readAlert(project, down.alert.id)).toMatchObject({
      last_notify_status: 'failed',
      last_notify_error: 'HTTP 500',
    });
    expect(await readAlert(project, gone.alert.id)).toMatchObject({
      last_notify_status: 'failed',
      last_notify_error: 'HTTP 404',
    });
    expect((await notificationRows(down.alert.id)).map((n) => [n.status, n.attempts])).toEqual([['failed', 4]]);
    expect((await notificationRows(gone.alert.id)).map((n) => [n.status, n.attempts])).toEqual([['failed', 1]]);
  });

  it('names the group of a grouped alert, one webhook per group that changes, and renotifies on the interval', async () => {
    const project = await projectWithSpan(4);
    const { alert } = await createAlert(project, '/groups', {
      group_by: 'model_name',
      renotify: { mode: 'INTERVAL', interval_minutes: 2 },
      window: '5m',
    });
    for (let i = 0; i <= 4; i++) await tickJob(project, E + i * MIN);
    // One webhook per delivery id: a delivery whose answer was late (a loaded machine) is sent again
    // under the same id (at least once, as webhooks are), so requests are counted by id.
    const deliveries = () => [
      ...new Map(receiver.on('/groups').map((r) => [r.headers['x-sightline-delivery'], r])).values(),
    ];
    await waitUntil(() => deliveries().length >= 6, 'three rounds of two groups');
    await deliveriesSettled();
    const hooks = deliveries().map((r) => JSON.parse(r.body));
    const byWindow = hooks.map((b) => [b.window_end, b.group.value, b.state, b.previous_state, b.value]).sort();
    expect(byWindow).toEqual(
      [0, 2, 4]
        .flatMap((i) =>
          ['claude', 'gpt-4o'].map((g) => [
            new Date(E + i * MIN).toISOString(),
            g,
            'ALERTING',
            i === 0 ? 'OK' : 'ALERTING',
            2,
          ]),
        )
        .sort(),
    );
    expect(hooks.every((b) => b.group.field === 'model_name')).toBe(true);
    const detail = await readAlert(project, alert.id);
    expect(detail.status).toBe('ALERTING');
    expect(
      detail.groups.map((g: { group: string; status: string; value: number }) => [g.group, g.status, g.value]),
    ).toEqual([
      ['claude', 'ALERTING', 2],
      ['gpt-4o', 'ALERTING', 2],
    ]);
  });

  it('is refused for loopback and private addresses unless allowed, checked after resolving the name', async () => {
    const before = receiver.requests.length;
    const send = (url: string) => deliver({ url, body: '{}', headers: {}, timeoutMs: 2000, allowPrivate: false });
    for (const url of [
      receiver.url('/private'),
      receiver.url('/private').replace('127.0.0.1', 'localhost'),
      receiver.url('/private').replace('127.0.0.1', '[::1]'),
    ]) {
      expect(await send(url)).toMatchObject({
        ok: false,
        statusCode: null,
        retry: false,
        error: expect.stringMatching(/loopback or private/),
      });
    }
    // A name that is not an address literal: refused once resolved (this machine's name maps to a private address).
    const resolved = await dns.lookup(os.hostname(), { all: true });
    expect(resolved.length).toBeGreaterThan(0);
    const named = await send(receiver.url('/private').replace('127.0.0.1', os.hostname()));
    expect(named).toMatchObject({
      ok: false,
      retry: false,
      error: expect.stringMatching(/resolves to .*loopback or private/),
    });
    expect(receiver.requests.length).toBe(before);
    expect(
      await deliver({ url: receiver.url('/private'), body: '{}', headers: {}, timeoutMs: 2000, allowPrivate: true }),
    ).toEqual({ ok: true, statusCode: 200 });
  });
});

describe('never twice for one transition', () => {
  it('a tick job run twice, a delivery job run twice, and a notification enqueued twice make one webhook', async () => {
    const project = await projectWithSpan();
    const { alert } = await createAlert(project, '/twice');
    await tickJob(project);
    await tickJob(project);
    await waitUntil(() => receiver.on('/twice').length === 1, 'the webhook');
    const [row] = await notificationRows(alert.id);
    expect(await deliverNotification(h().ctx, row.id)).toBe('skipped');
    await enqueueNotifications(h().ctx, [row.id]);
    await h().ctx.queue.queue(NOTIFY_QUEUE).add('deliver', { notification_id: row.id });
    await deliveriesSettled();
    expect(receiver.on('/twice')).toHaveLength(1);
    expect(
      (await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM alert_evaluations WHERE alert_id = $1', [alert.id]))
        .rows[0].n,
    ).toBe(1);
  });

  it('two workers ticking the same window at once evaluate and notify each alert once', async () => {
    const project = await projectWithSpan();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(
        (
          await createAlert(project, `/pair-${i}`, {
            window: (['1m', '5m', '10m'] as const)[i % 3],
            measure: i < 3 ? 'count' : 'latency',
          })
        ).alert.id,
      );
    const [a, b] = await Promise.all(
      [0, 1].map(() =>
        runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [project], batchSize: 2 }),
      ),
    );
    expect(a!.committed + b!.committed).toBe(6);
    await waitUntil(() => ids.every((_, i) => receiver.on(`/pair-${i}`).length >= 1), 'six webhooks');
    await deliveriesSettled();
    expect(ids.map((_, i) => receiver.on(`/pair-${i}`).length)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('a worker stopped mid-tick, then restarted, finishes the window without a duplicate', async () => {
    const project = await projectWithSpan();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(
        (await createAlert(project, `/crash-${i}`, { window: (['1m', '5m', '10m', '30m'] as const)[i] })).alert.id,
      );
    const jobToken = `tick-${crypto.randomUUID()}`;
    // The worker dies after claiming the window's alerts and committing the first group, before
    // enqueueing that group's notification: its claims and a pending notification are left behind.
    const claimed = await claimAlerts(h().ctx.pg.pool, {
      windowEndMs: E,
      token: jobToken,
      limit: 100,
      exclude: [],
      projectIds: [project],
    });
    expect(claimed).toHaveLength(4);
    const [first] = groupAlerts(claimed, E);
    const outcome = await measureGroup(h().ctx, first!);
    const committed = await withTransaction(h().ctx.pg.pool, (tx) =>
      commitGroup(tx, first!.alerts, E, outcome, 'http://web.test'),
    );
    expect(committed.notifications).toHaveLength(1);
    // Another worker's tick for the same window finds the rest leased: nothing to do, nothing sent twice.
    expect(await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [project] })).toMatchObject(
      { claimed: 0 },
    );
    // Restart: the workers come back and the interrupted job runs again under its id.
    await Promise.all(workers.map((w) => w.close()));
    workers = startAlertWorkers(h().ctx, { schedule: false }) as Worker[];
    const rerun = await tickJob(project, E, jobToken);
    expect(rerun.returnvalue).toMatchObject({ claimed: 3, committed: 3, notifications: 3 });
    await waitUntil(() => ids.every((_, i) => receiver.on(`/crash-${i}`).length >= 1), 'four webhooks');
    await tickJob(project, E);
    await deliveriesSettled();
    expect(ids.map((_, i) => receiver.on(`/crash-${i}`).length)).toEqual([1, 1, 1, 1]);
  });

  it('a tick cancelled between query groups gives back its claims; the next run of the window does the rest', async () => {
    const project = await projectWithSpan();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await createAlert(project, `/cancel-${i}`, { window: (['1m', '5m', '10m'] as const)[i] })).alert.id);
    // Cancelled once the first batch (one alert) is done: the signal reads "aborted" from its third look.
    let looks = 0;
    const signal = {
      get aborted() {
        return ++looks > 2;
      },
    } as AbortSignal;
    const stopped = await runTick(h().ctx, {
      token: crypto.randomUUID(),
      windowEndMs: E,
      projectIds: [project],
      batchSize: 1,
      signal,
    });
    expect(stopped).toMatchObject({ aborted: true, committed: 1 });
    const rest = await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [project] });
    expect(rest).toMatchObject({ claimed: 2, committed: 2 });
    await waitUntil(() => ids.every((_, i) => receiver.on(`/cancel-${i}`).length >= 1), 'three webhooks');
    await deliveriesSettled();
    expect(ids.map((_, i) => receiver.on(`/cancel-${i}`).length)).toEqual([1, 1, 1]);
  });
});
