import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { DEMO_TRACES, seedDemoTraces } from '../../src/demo/seed.js';

const h = useHarness();

describe('demo traces', () => {
  it('fills a project with a day of agent traces: LLM, tool and retriever spans, some errors', async () => {
    const { key, project, owner } = await projectWithKey(h());
    const now = Date.now();
    const stored = await seedDemoTraces(h().ctx, project.id, now);
    expect(stored).toBeGreaterThan(DEMO_TRACES * 3);
    // Counted as the day's usage like ingest's spans, so the usage page does not say 0.
    const usage = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${project.id}/usage`,
      token: owner.token,
    });
    expect(usage.statusCode, usage.body).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.json().data.find((d: { date: string }) => d.date === today)?.spans).toBe(stored);

    const all = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key.key,
      query: { include_evaluations: 'true', limit: '200' },
    });
    expect(all.json().meta.total).toBe(DEMO_TRACES);
    for (const item of all.json().data) {
      expect(Date.parse(item.trace_start_time)).toBeGreaterThanOrEqual(now - 86_400_000);
      expect(Date.parse(item.trace_start_time)).toBeLessThan(now);
    }
    const withKind = async (field: string, value: string) =>
      (
        await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/traces`,
          token: key.key,
          query: { filters: JSON.stringify([{ field, op: 'in', value: [value] }]) },
        })
      ).json().meta.total;
    expect(await withKind('span_kind', 'llm')).toBeGreaterThan(100);
    expect(await withKind('span_kind', 'tool')).toBeGreaterThan(50);
    expect(await withKind('span_kind', 'retriever')).toBeGreaterThan(10);
    expect(await withKind('status', 'error')).toBeGreaterThan(0);

    // Seeding is a write like any other: a second run stores nothing twice.
    await seedDemoTraces(h().ctx, project.id, now);
    const again = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key.key,
      query: { include_evaluations: 'true', limit: '1' },
    });
    expect(again.json().meta.total).toBe(DEMO_TRACES);
  });
});
