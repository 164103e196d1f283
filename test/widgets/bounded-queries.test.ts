import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { MAX_SERIES_CELLS, MAX_SERIES_GROUPS, MAX_SERIES_POINTS } from '../../src/query/series-steps.js';
import { WINDOW_END_SKEW_MS } from '../../src/widgets/data.js';

/**
 * Widget answers are bounded before their work starts (issue 9, part 2): the request that used to kill
 * the process answers with a bounded body, windows end by now (+ skew), fine fixed intervals are
 * coarsened (and say so), grouped series are capped, and a query stopped by its ClickHouse limits is a
 * 400 (`POST /widgets/query`) or that widget's error (dashboard data), never a 500.
 */

const h = useHarness();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const COUNT = { view: 'SPANS', measure: 'count', aggregation: 'count' };

let owner: SignedUp;
let project: { id: string; key: string };
const SPANS = 12;

beforeAll(async () => {
  owner = await signUp(h(), 'bounds');
  const created = await createProject(h(), owner.token, owner.workspace.id);
  project = { id: created.id, key: (await createApiKey(h(), owner.token, created.id)).key };
  const now = Date.now();
  await ingestSpans(
    h(),
    project.key,
    Array.from({ length: SPANS }, (_, i) => ({
      trace_id: `t${i}`,
      span_id: 'root',
      name: 'op',
      model_name: `m${i % 3}`,
      start_time: iso(now - (i + 1) * HOUR),
      end_time: iso(now - (i + 1) * HOUR + 50),
    })),
  );
});

function query(payload: Record<string, unknown>, key = project.key) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/widgets/query`, token: key, payload });
}

describe('POST /widgets/query', () => {
  it('answers the crash request of issue 9 with a bounded series over a window that ends by now', async () => {
    const res = await query({
      spec: { ...COUNT, interval: '1m' },
      start_time: '1970-01-01T00:00:00Z',
      end_time: '2100-01-01T00:00:00Z',
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ok');
    expect(body.rows.length).toBeLessThanOrEqual(MAX_SERIES_POINTS);
    expect(body.meta).toMatchObject({ interval_requested: '1m', interval_coarsened: true });
    expect(body.meta.interval_seconds).toBeGreaterThan(60);
    expect(Date.parse(body.window.end_time)).toBeLessThanOrEqual(Date.now() + WINDOW_END_SKEW_MS);
    expect(body.window).toMatchObject({ range: null, clamped: true });
    expect(body.rows.reduce((a: number, r: [string, number]) => a + r[1], 0)).toBe(SPANS);
  });

  it('refuses a window that lies entirely in the future with 422 at body.start_time', async () => {
    const res = await query({ spec: COUNT, start_time: iso(Date.now() + DAY), end_time: iso(Date.now() + 2 * DAY) });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().detail).toEqual([expect.objectContaining({ loc: ['body', 'start_time'] })]);
  });

  it('keeps a fixed interval that fits, and says it was not coarsened', async () => {
    const res = await query({ spec: { ...COUNT, interval: '1h' }, range: '1d' });
    expect(res.json().meta).toMatchObject({
      interval_seconds: 3600,
      interval_requested: '1h',
      interval_coarsened: false,
    });
  });

  it('caps a grouped series at MAX_SERIES_GROUPS groups and MAX_SERIES_CELLS cells whatever its limit', async () => {
    const res = await query({
      spec: { ...COUNT, interval: '1m', group_by: ['model_name'], limit: 1000 },
      range: '90d',
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const body = res.json();
    expect(body.meta.group_limit).toBe(MAX_SERIES_GROUPS);
    expect(body.rows.length).toBeLessThanOrEqual(MAX_SERIES_CELLS);
    expect(new Set(body.rows.map((r: unknown[]) => r[1])).size).toBe(3);
  });

  it('answers a series whose repeated group values would be too large with 400 {detail}', async () => {
    const { key } = await freshProject();
    const long = (c: string) => c.repeat(32_768);
    await ingestSpans(
      h(),
      key,
      ['a', 'b', 'c'].map((c, i) => ({
        trace_id: `g${i}`,
        span_id: 'root',
        name: 'op',
        start_time: iso(Date.now() - HOUR),
        metadata: { blob: long(c) },
      })),
    );
    const res = await query({ spec: { ...COUNT, interval: '1m', group_by: ['metadata.blob'] }, range: '1d' }, key);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.json().detail).toMatch(/narrow the window/);
  });

  it("turns ClickHouse's answer-size limit into 400 {detail} here, and into the widget's error on a dashboard", async () => {
    // 600 groups of 32 KiB values: about 19 MiB of answer, past the 16 MiB a widget query may return.
    const { id, key } = await freshProject();
    const spans = Array.from({ length: 600 }, (_, i) => ({
      trace_id: `v${i}`,
      span_id: 'root',
      name: 'op',
      start_time: iso(Date.now() - HOUR),
      metadata: { blob: `${i}`.padEnd(32_768, 'x') },
    }));
    await ingestSpans(h(), key, spans, 200);
    const spec = { ...COUNT, group_by: ['metadata.blob'], limit: 1000 };
    const res = await query({ type: 'table', spec, range: '1d' }, key);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(Object.keys(res.json())).toEqual(['detail']);
    expect(res.json().detail).toMatch(/^the answer would exceed its limit of 1000 rows and 16 MiB; narrow the window/);

    const dashboard = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/dashboards`,
      token: owner.token,
      payload: { project_id: id, name: 'big', description: '' },
    });
    for (const [title, type, s] of [
      ['ok', 'stat', COUNT],
      ['huge', 'table', spec],
    ] as const) {
      const w = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/widgets`,
        token: owner.token,
        payload: { project_id: id, dashboard_id: dashboard.json().id, title, type, spec: s },
      });
      expect(w.statusCode, w.body).toBe(201);
    }
    const data = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/dashboards/${dashboard.json().id}/data`,
      token: key,
    });
    expect(data.statusCode, data.body.slice(0, 300)).toBe(200);
    expect(data.json()).toMatchObject({ queried: 2, failed: 1 });
    const [ok, huge] = data.json().widgets;
    expect(ok).toMatchObject({ status: 'ok', rows: [[600]] });
    expect(huge).toMatchObject({ status: 'error', rows: [] });
    expect(huge.error).toMatch(/exceed its limit/);
  });
});

describe('dashboard data', () => {
  it('answers a stored "1m" widget over 90 days, coarsened, instead of failing or building 129,600 buckets', async () => {
    const dashboard = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/dashboards`,
      token: owner.token,
      payload: { project_id: project.id, name: 'fine', description: '' },
    });
    const w = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets`,
      token: owner.token,
      payload: {
        project_id: project.id,
        dashboard_id: dashboard.json().id,
        title: 'per minute',
        type: 'timeseries',
        spec: { ...COUNT, interval: '1m' },
      },
    });
    expect(w.statusCode, w.body).toBe(201);
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/dashboards/${dashboard.json().id}/data`,
      token: project.key,
      query: { range: '90d' },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const [widget] = res.json().widgets;
    expect(widget.status).toBe('ok');
    expect(widget.rows.length).toBeLessThanOrEqual(MAX_SERIES_POINTS);
    expect(widget.meta).toMatchObject({ interval_requested: '1m', interval_coarsened: true });
  });

  it('pulls an explicit end in the future back to now + skew and reports the answered window', async () => {
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/dashboards`, token: project.key });
    const overview = list.json().data.find((d: { is_default: boolean }) => d.is_default).id;
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/dashboards/${overview}/data`,
      token: project.key,
      query: { start_time: iso(Date.now() - DAY), end_time: '2999-01-01T00:00:00Z' },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(Date.parse(res.json().window.end_time)).toBeLessThanOrEqual(Date.now() + WINDOW_END_SKEW_MS);
    for (const widget of res.json().widgets) expect(widget.rows.length).toBeLessThanOrEqual(301);
  });

  it('refuses a widget spec larger than 64 KiB of JSON with 422 at body.spec', async () => {
    const dashboard = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/dashboards`,
      token: owner.token,
      payload: { project_id: project.id, name: 'notes', description: '' },
    });
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets`,
      token: owner.token,
      payload: {
        project_id: project.id,
        dashboard_id: dashboard.json().id,
        title: 'notes',
        type: 'markdown',
        spec: { text: 'x'.repeat(70_000) },
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'spec']);
  });
});

async function freshProject() {
  const created = await createProject(
    h(),
    owner.token,
    owner.workspace.id,
    `p-${crypto.randomBytes(4).toString('hex')}`,
  );
  return { id: created.id, key: (await createApiKey(h(), owner.token, created.id)).key };
}
