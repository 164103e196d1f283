import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, expect, it } from 'vitest';
import { inSample, sweepSampling } from '../../src/controls/sampling.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

/**
 * After the decision window (docs/producer-controls.md, "Sampling") held spans are gone: a keep match
 * arriving later keeps the trace from then on, but the spans held before it are not stored. A
 * one-second window here.
 */
const h = useHarness({ SAMPLING_DECISION_WINDOW_SECONDS: '1' });
let o: Awaited<ReturnType<typeof projectWithKey>>;

beforeAll(async () => {
  o = await projectWithKey(h(), 'sampling-window');
  const put = await call(h().api, {
    method: 'PUT',
    url: `${PUBLIC}/projects/${o.project.id}/sampling`,
    token: o.owner.token,
    payload: { rate: 0, keep: [{ field: 'environment', op: 'in', value: ['production'] }] },
  });
  expect(put.statusCode, put.body).toBe(200);
});

const send = async (spans: unknown[]) => {
  const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: o.key.key, payload: { spans } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

it('drops held spans when the window ends; a later keep match stores only what comes from then on', async () => {
  // Rate 0: every trace is out by hash.
  expect(inSample(o.project.id, 'expiring', 0)).toBe(false);
  const at = Date.now() - 60_000;
  const span = (id: string, extra: Record<string, unknown> = {}) => ({
    trace_id: 'expiring',
    span_id: id,
    name: id,
    start_time: iso(at),
    end_time: iso(at + 5),
    ...extra,
  });
  expect(await send([span('early')])).toEqual({ accepted: 1, sampled_out: 1, rejected: [] });
  await sleep(2_000);
  expect(await send([span('late', { environment: 'production' })])).toEqual({
    accepted: 1,
    sampled_out: 0,
    rejected: [],
  });
  const swept = await sweepSampling(h().ctx, h().ctx.spanWriter, [o.project.id]);
  // The held span expired: not taken out (the process's own sweep may have deleted it already).
  expect(swept.promoted).toBe(0);
  const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/expiring`, token: o.key.key });
  expect(detail.statusCode).toBe(200);
  expect(detail.json().spans.map((s: { span_id: string }) => s.span_id)).toEqual(['late']);
  const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sampling_held WHERE project_id = $1', [
    o.project.id,
  ]);
  expect(rows[0].n).toBe(0);
});
