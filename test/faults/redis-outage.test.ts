import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { startPrivateRedis, waitFor, type PrivateRedis } from '../support/private-servers.js';

/**
 * Redis stopped (a server of this test's own): the API keeps serving (rate-limit counters let
 * requests through while their store is away), and a job queued while Redis was down runs once it
 * is back.
 */

let redis: PrivateRedis;

// The server starts first; the harness opens on it and closes before it is destroyed (hooks unwind in reverse).
beforeAll(async () => {
  redis = await startPrivateRedis();
});
afterAll(async () => {
  await redis?.destroy();
});
const h = useHarness(() => ({ REDIS_URL: redis.url, QUEUE_PREFIX: `outage${process.pid}` }));

describe('Redis outage', () => {
  it('keeps serving ingest and reads while Redis is down; a job queued meanwhile runs once Redis is back', { timeout: 120_000 }, async () => {
    const { key, owner, project } = await projectWithKey(h(), 'redis-outage');
    await redis.stop();
    for (let i = 0; i < 5; i++) {
      const ingest = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key.key, payload: { spans: [{ trace_id: `t${i}`, span_id: `s${i}`, name: 'op', start_time: new Date().toISOString() }] } });
      expect(ingest.statusCode, ingest.body).toBe(200);
      const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces?project_id=${project.id}`, token: owner.token });
      expect(list.statusCode, list.body).toBe(200);
    }
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key })).json().meta.total).toBe(5);

    // Queued while Redis is down (the connection holds it), processed after Redis returns.
    const seen: string[] = [];
    const queued = h().ctx.queue.queue<{ id: string }>('outage-probe').add('probe', { id: 'p1' }, { jobId: 'probe-1' });
    await redis.start();
    await queued;
    const worker = h().ctx.queue.worker<{ id: string }>('outage-probe', async (job) => void seen.push(job.data.id));
    await waitFor(() => seen.length === 1, 'the queued job to run', 60_000);
    await worker.close();
    expect(seen).toEqual(['p1']);
  });
});
