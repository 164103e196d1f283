import { describe, expect, it } from 'vitest';
import { call, PUBLIC, useHarness } from '../support/harness.js';
import { seedDemoAccount, seedDemoTraces } from '../../src/demo/seed.js';
import { runDetectionTick } from '../../src/signals/detection.js';

// Its own embedded Postgres and queue, as `npm start` has: the demo seed runs only on an empty store.
const h = useHarness({ DATABASE_URL: undefined, REDIS_URL: undefined });

describe('the demo project', () => {
  it('has the "Errors" detector, and its first detection pass turns the demo errors into signals', async () => {
    const demo = await seedDemoAccount(h().ctx);
    expect(demo).not.toBeNull();
    if (!demo) return;
    const detectors = await call(h().api, { method: 'GET', url: `${PUBLIC}/detectors`, token: demo.apiKey });
    expect(
      detectors.json().data.map((d: { name: string; type: string; enabled: boolean }) => [d.name, d.type, d.enabled]),
    ).toEqual([['Errors', 'error', true]]);

    await seedDemoTraces(h().ctx, demo.projectId);
    const report = await runDetectionTick(h().ctx, { projectIds: [demo.projectId] });
    expect(report.passes[0]!.findings).toBeGreaterThan(0);
    const errorSpans = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: demo.apiKey,
      payload: { query: "SELECT count() AS n FROM spans WHERE status = 'error'" },
    });
    const signals = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/signals`,
      token: demo.apiKey,
      query: { limit: '200' },
    });
    expect(signals.json().meta.total).toBeGreaterThan(0);
    const hits = signals.json().data.reduce((n: number, s: { hit_count: number }) => n + s.hit_count, 0);
    expect(hits).toBe(errorSpans.json().rows[0][0]);
    for (const s of signals.json().data) expect(s.title).toMatch(/ in /);
  });
});
