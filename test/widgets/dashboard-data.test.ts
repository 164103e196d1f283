import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { OVERVIEW_WIDGETS } from '../../src/widgets/spec.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * Dashboard data (docs/dashboards.md, "Dashboard data"):
 * window presets, explicit bounds, retention clamping, the Overview dashboard on data, the 20-widget
 * cap, a broken widget beside good ones, project isolation, credentials, and `POST /widgets/query`.
 */

const h = useHarness();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PRESETS: Record<string, number> = {
  '30m': HOUR / 2,
  '1h': HOUR,
  '3h': 3 * HOUR,
  '6h': 6 * HOUR,
  '1d': DAY,
  '7d': 7 * DAY,
  '14d': 14 * DAY,
  '30d': 30 * DAY,
  '60d': 60 * DAY,
  '90d': 90 * DAY,
};
const SLACK = 15_000; // the server's "now" vs ours
const GOOD_SPEC = { view: 'SPANS', measure: 'count', aggregation: 'count' };

type Project = { id: string; key: string; defaultDashboard: string };
let owner: SignedUp;
let longTtl: Project; // trace_ttl_days 365, no data
let withData: Project; // default ttl (30), generated data
let other: Project & { owner: SignedUp }; // another user's project, a little data
let dataSpans: ReturnType<typeof generateSpans>;

async function newProject(user: SignedUp, ttl?: number): Promise<Project> {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/projects`,
    token: user.token,
    payload: {
      name: `p-${crypto.randomBytes(4).toString('hex')}`,
      workspace_id: user.workspace.id,
      ...(ttl ? { trace_ttl_days: ttl } : {}),
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().id as string;
  const key = (await createApiKey(h(), user.token, id)).key;
  const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/dashboards`, token: key });
  expect(list.statusCode, list.body).toBe(200);
  const overview = (list.json().data as { id: string; is_default: boolean }[]).find((d) => d.is_default);
  expect(overview).toBeDefined();
  return { id, key, defaultDashboard: overview!.id };
}

function data(token: string, dashboardId: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/dashboards/${dashboardId}/data`, token, query });
}

async function dashboardWith(project: Project, widgets: { title: string; type: string; spec: unknown }[]) {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/dashboards`,
    token: owner.token,
    payload: { project_id: project.id, name: 'Many', description: 'test' },
  });
  expect(res.statusCode, res.body).toBe(201);
  const ids: string[] = [];
  for (const w of widgets) {
    const created = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets`,
      token: owner.token,
      payload: { project_id: project.id, dashboard_id: res.json().id, ...w },
    });
    expect(created.statusCode, created.body).toBe(201);
    ids.push(created.json().id);
  }
  return { id: res.json().id as string, widgetIds: ids };
}

function expectWindow(
  window: { range: string | null; start_time: string; end_time: string; clamped: boolean },
  range: string | null,
  lengthMs: number,
  clamped = false,
) {
  expect(window.range).toBe(range);
  expect(window.clamped).toBe(clamped);
  expect(window.start_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  expect(Date.parse(window.end_time) - Date.parse(window.start_time)).toBe(lengthMs);
  expect(Math.abs(Date.parse(window.end_time) - Date.now())).toBeLessThan(SLACK);
}

beforeAll(async () => {
  owner = await signUp(h(), 'owner');
  longTtl = await newProject(owner, 365);
  withData = await newProject(owner);
  const now = Date.now();
  dataSpans = generateSpans({ traces: 120, startMs: now - 22 * HOUR, endMs: now - 2 * HOUR, seed: 7 });
  await ingestSpans(h(), withData.key, dataSpans);
  const otherOwner = await signUp(h(), 'other');
  other = { ...(await newProject(otherOwner)), owner: otherOwner };
  await ingestSpans(h(), other.key, [
    {
      trace_id: 'o-1',
      span_id: 'a',
      name: 'other',
      start_time: new Date(now - HOUR).toISOString(),
      end_time: new Date(now - HOUR + 100).toISOString(),
      cost: 5,
    },
  ]);
});

describe('window', () => {
  for (const [range, length] of Object.entries(PRESETS)) {
    it(`range=${range} answers that preset ending now`, async () => {
      const res = await data(longTtl.key, longTtl.defaultDashboard, { range });
      expect(res.statusCode, res.body).toBe(200);
      expectWindow(res.json().window, range, length);
      expect(res.json().widgets.map((w: { status: string }) => w.status)).toEqual(Array(9).fill('ok'));
    });
  }

  it('no range: the 1d preset', async () => {
    const res = await data(longTtl.key, longTtl.defaultDashboard);
    expect(res.statusCode, res.body).toBe(200);
    expectWindow(res.json().window, '1d', DAY);
  });

  it('explicit bounds: range null, the bounds as given (UTC when no offset)', async () => {
    const start = new Date(Date.now() - 5 * HOUR).toISOString();
    const end = new Date(Date.now() - 2 * HOUR).toISOString();
    const res = await data(longTtl.key, longTtl.defaultDashboard, { start_time: start, end_time: end });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().window).toEqual({ range: null, start_time: start, end_time: end, clamped: false });
    const naive = await data(longTtl.key, longTtl.defaultDashboard, {
      start_time: start.slice(0, 19),
      end_time: end.replace(/Z$/, '+00:00'),
    });
    expect(naive.statusCode, naive.body).toBe(200);
    expect(naive.json().window).toEqual({
      range: null,
      start_time: `${start.slice(0, 19)}.000Z`,
      end_time: end,
      clamped: false,
    });
  });

  it('refuses range with bounds, a single bound, end <= start and unknown presets (422)', async () => {
    const t = (ms: number) => new Date(Date.now() - ms).toISOString();
    const bad: Record<string, string>[] = [
      { range: '1d', start_time: t(2 * HOUR), end_time: t(HOUR) },
      { range: '1d', start_time: t(2 * HOUR) },
      { start_time: t(2 * HOUR) },
      { end_time: t(HOUR) },
      { start_time: t(HOUR), end_time: t(HOUR + 1) },
      { start_time: t(HOUR), end_time: t(HOUR) },
      { range: '2d' },
      { start_time: 'yesterday', end_time: t(HOUR) },
    ];
    for (const query of bad) {
      const res = await data(longTtl.key, longTtl.defaultDashboard, query);
      expect(res.statusCode, `${JSON.stringify(query)}: ${res.body}`).toBe(422);
      expect(Array.isArray(res.json().detail)).toBe(true);
    }
  });

  it('retention: a start older than now − trace_ttl_days is pulled forward and clamped', async () => {
    const short = await newProject(owner, 1);
    const week = await data(short.key, short.defaultDashboard, { range: '7d' });
    expect(week.statusCode, week.body).toBe(200);
    const w = week.json().window;
    expect(w.range).toBe('7d');
    expect(w.clamped).toBe(true);
    expect(Math.abs(Date.parse(w.start_time) - (Date.now() - DAY))).toBeLessThan(SLACK);
    expect(Math.abs(Date.parse(w.end_time) - Date.now())).toBeLessThan(SLACK);
    const day = await data(short.key, short.defaultDashboard, { range: '1d' });
    expectWindow(day.json().window, '1d', DAY, false);
    const explicit = await data(short.key, short.defaultDashboard, {
      start_time: new Date(Date.now() - 3 * DAY).toISOString(),
      end_time: new Date(Date.now() - HOUR).toISOString(),
    });
    expect(explicit.json().window).toMatchObject({ range: null, clamped: true });
    expect(Math.abs(Date.parse(explicit.json().window.start_time) - (Date.now() - DAY))).toBeLessThan(SLACK);
    // The default ttl (30 days): 30d fits, 60d is clamped to 30 days.
    expectWindow(
      (await data(withData.key, withData.defaultDashboard, { range: '30d' })).json().window,
      '30d',
      30 * DAY,
      false,
    );
    const sixty = (await data(withData.key, withData.defaultDashboard, { range: '60d' })).json().window;
    expect(sixty).toMatchObject({ range: '60d', clamped: true });
    expect(Math.abs(Date.parse(sixty.start_time) - (Date.now() - 30 * DAY))).toBeLessThan(SLACK);
  });
});

describe('answers', () => {
  it('the default Overview dashboard answers its 9 widgets on data', async () => {
    const res = await data(withData.key, withData.defaultDashboard);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['dashboard', 'failed', 'queried', 'skipped', 'widgets', 'window']);
    expect(Object.keys(body.dashboard).sort()).toEqual([
      'create_time',
      'creator',
      'description',
      'id',
      'is_default',
      'name',
      'update_time',
    ]);
    expect(body.dashboard).toMatchObject({
      id: withData.defaultDashboard,
      name: 'Overview',
      is_default: true,
      creator: owner.user.name,
    });
    expect(body).toMatchObject({ queried: 9, skipped: 0, failed: 0 });
    expect(body.widgets.map((w: { title: string }) => w.title)).toEqual(OVERVIEW_WIDGETS.map((w) => w.title));
    type Answered = {
      id: string;
      title: string;
      type: string;
      status: string;
      columns: string[];
      rows: [string, number | null][];
      meta: Record<string, unknown>;
      error: string;
      truncated: boolean;
    };
    const all = body.widgets as Answered[];
    // The series; the two bars (cost by model, by user) are checked below.
    const widgets = all.filter((w) => w.type === 'timeseries');
    expect(widgets).toHaveLength(7);
    for (const w of widgets) {
      expect(Object.keys(w).sort()).toEqual([
        'columns',
        'error',
        'id',
        'meta',
        'rows',
        'status',
        'title',
        'truncated',
        'type',
      ]);
      expect(w).toMatchObject({
        type: 'timeseries',
        status: 'ok',
        columns: ['time', 'value'],
        error: '',
        truncated: false,
      });
      expect(w.rows.length).toBeGreaterThanOrEqual(30);
      expect(w.rows.length).toBeLessThanOrEqual(300);
      expect(String(w.meta.source)).toMatch(/^span_rollup/);
      expect(
        w.rows.some((r) => r[1] !== null && r[1] !== 0),
        w.id,
      ).toBe(true);
    }
    const total = (title: string) => all.find((w) => w.title === title)!.rows.reduce((a, r) => a + (r[1] ?? 0), 0);
    const spent = dataSpans.reduce((a, s) => a + (s.cost ?? 0), 0);
    const byModel = all.find((w) => w.title === 'Cost by model')!;
    expect(byModel).toMatchObject({ type: 'bar', status: 'ok', columns: ['model_name', 'value'] });
    const models = new Set(dataSpans.map((s) => s.model_name ?? ''));
    // Every model (at most 10 here) is a bar, so the bars add up to everything spent.
    if (models.size <= 10) expect(total('Cost by model')).toBeCloseTo(spent, 6);
    const byUser = all.find((w) => w.title === 'Cost by user')!;
    expect(byUser).toMatchObject({ type: 'bar', status: 'ok', columns: ['user_id', 'value'] });
    expect(byUser.rows.length).toBeGreaterThan(0);
    expect(total('Cost by user')).toBeLessThanOrEqual(spent + 1e-6);
    expect(total('Volume')).toBe(dataSpans.length);
    expect(total('Cost')).toBeCloseTo(
      dataSpans.reduce((a, s) => a + (s.cost ?? 0), 0),
      6,
    );
    expect(total('Tokens')).toBe(
      dataSpans.reduce((a, s) => a + (s.total_tokens ?? (s.input_tokens ?? 0) + (s.output_tokens ?? 0)), 0),
    );
    const rates = widgets.find((w) => w.title === 'Error rate')!.rows.flatMap((r) => (r[1] === null ? [] : [r[1]]));
    expect(rates.every((r) => r >= 0 && r <= 1)).toBe(true);
    const p50 = widgets.find((w) => w.title === 'Latency p50')!.rows;
    const p99 = widgets.find((w) => w.title === 'Latency p99')!.rows;
    p50.forEach((r, i) => expect(r[1] === null).toBe(p99[i]![1] === null));
  });

  it('answers at most 20 query widgets; markdown is not listed; the rest are skipped', async () => {
    const types = ['timeseries', 'stat', 'table', 'bar'] as const;
    const specs = [
      { ...GOOD_SPEC, interval: '1h' },
      { view: 'SPANS', measure: 'cost', aggregation: 'sum' },
      { view: 'SPANS', measure: 'count', aggregation: 'count', group_by: ['kind'] },
      { view: 'SPANS', measure: 'latency', aggregation: 'p95', group_by: ['model_name'] },
    ];
    const widgets: { title: string; type: string; spec: unknown }[] = Array.from({ length: 22 }, (_, i) => ({
      title: `w${String(i + 1).padStart(2, '0')}`,
      type: types[i % 4]!,
      spec: specs[i % 4],
    }));
    widgets.splice(5, 0, { title: 'notes', type: 'markdown', spec: { text: '# hello' } });
    const dashboard = await dashboardWith(withData, widgets);
    const markdownId = dashboard.widgetIds[5]!;
    const queryIds = dashboard.widgetIds.filter((id) => id !== markdownId);
    const res = await data(withData.key, dashboard.id, { range: '1d' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      queried: 20,
      skipped: 3,
      failed: 0,
      dashboard: { id: dashboard.id, name: 'Many', description: 'test', is_default: false },
    });
    expect(body.widgets).toHaveLength(22);
    expect(body.widgets.map((w: { id: string }) => w.id)).toEqual(queryIds);
    expect(body.widgets.map((w: { status: string }) => w.status)).toEqual([
      ...Array(20).fill('ok'),
      'skipped',
      'skipped',
    ]);
    const columns: Record<string, string[]> = {
      timeseries: ['time', 'value'],
      stat: ['value'],
      table: ['kind', 'value'],
      bar: ['model_name', 'value'],
    };
    for (const w of body.widgets.slice(0, 20)) expect(w.columns).toEqual(columns[w.type]);
    for (const w of body.widgets.slice(20))
      expect(w).toMatchObject({ columns: [], rows: [], error: '', truncated: false });
    const table = body.widgets.find((w: { type: string }) => w.type === 'table');
    const values = table.rows.map((r: unknown[]) => r[1] as number);
    expect(values).toEqual([...values].sort((a, b) => b - a));
  });

  it('a broken widget answers status error beside good ones', async () => {
    const dashboard = await dashboardWith(withData, [
      { title: 'good 1', type: 'stat', spec: GOOD_SPEC },
      { title: 'good 2', type: 'timeseries', spec: { ...GOOD_SPEC, interval: '1h' } },
    ]);
    const brokenId = crypto.randomUUID();
    await h().ctx.pg.pool.query(
      'INSERT INTO widgets (id, dashboard_id, project_id, title, type, spec) VALUES ($1, $2, $3, $4, $5, $6::jsonb)',
      [
        brokenId,
        dashboard.id,
        withData.id,
        'broken',
        'stat',
        JSON.stringify({ view: 'SPANS', measure: 'bogus', aggregation: 'sum' }),
      ],
    );
    const last = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets`,
      token: owner.token,
      payload: {
        project_id: withData.id,
        dashboard_id: dashboard.id,
        title: 'good 3',
        type: 'table',
        spec: { ...GOOD_SPEC, group_by: ['status'] },
      },
    });
    expect(last.statusCode, last.body).toBe(201);
    const res = await data(withData.key, dashboard.id);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ queried: 4, skipped: 0, failed: 1 });
    expect(body.widgets.map((w: { title: string; status: string }) => [w.title, w.status])).toEqual([
      ['good 1', 'ok'],
      ['good 2', 'ok'],
      ['broken', 'error'],
      ['good 3', 'ok'],
    ]);
    const broken = body.widgets[2];
    expect(broken.id).toBe(brokenId);
    expect(typeof broken.error).toBe('string');
    expect(broken.error.length).toBeGreaterThan(0);
    expect(broken.error).toMatch(/measure/);
    expect(broken).toMatchObject({ columns: [], rows: [] });
    expect(body.widgets[0].rows).toEqual([[dataSpans.length]]);
  });
});

describe('access', () => {
  it("keeps projects apart: another project's dashboard is 404 and data comes only from the caller's project", async () => {
    expect((await data(withData.key, other.defaultDashboard)).statusCode).toBe(404);
    expect((await data(other.key, withData.defaultDashboard)).statusCode).toBe(404);
    expect((await data(owner.token, other.defaultDashboard, { project_id: withData.id })).statusCode).toBe(404);
    expect((await data(owner.token, other.defaultDashboard, { project_id: other.id })).statusCode).toBe(403);
    expect((await data(withData.key, '00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await data(withData.key, 'not-a-uuid')).statusCode).toBe(404);
    const volume = async (p: Project) =>
      ((await data(p.key, p.defaultDashboard)).json().widgets[0].rows as [string, number][]).reduce(
        (a, r) => a + r[1],
        0,
      );
    expect(await volume(other)).toBe(1);
    expect(await volume(withData)).toBe(dataSpans.length);
    const cost = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets/query`,
      token: other.key,
      payload: { type: 'stat', spec: { view: 'SPANS', measure: 'cost', aggregation: 'sum' } },
    });
    expect(cost.json().rows).toEqual([[5]]);
  });

  it('API keys read; user credentials need project_id (400 with the exact detail)', async () => {
    expect((await data(withData.key, withData.defaultDashboard)).statusCode).toBe(200);
    const user = await data(owner.token, withData.defaultDashboard, { project_id: withData.id });
    expect(user.statusCode, user.body).toBe(200);
    expect(user.json().widgets).toHaveLength(9);
    const missing = await data(owner.token, withData.defaultDashboard);
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ detail: 'project_id query parameter is required for user credentials' });
    const missingQuery = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets/query`,
      token: owner.token,
      payload: { spec: GOOD_SPEC },
    });
    expect(missingQuery.statusCode).toBe(400);
    expect(missingQuery.json()).toEqual({ detail: 'project_id query parameter is required for user credentials' });
    expect((await data(withData.key, withData.defaultDashboard, { project_id: other.id })).statusCode).toBe(400);
    expect((await data('', withData.defaultDashboard)).statusCode).toBe(401);
  });
});

describe('POST /widgets/query', () => {
  const query = (payload: Record<string, unknown>, token = withData.key) =>
    call(h().api, { method: 'POST', url: `${PUBLIC}/widgets/query`, token, payload });

  it('answers one spec like an answered widget, with its window', async () => {
    const res = await query({ type: 'stat', title: 'n', spec: GOOD_SPEC });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      title: 'n',
      type: 'stat',
      status: 'ok',
      columns: ['value'],
      rows: [[dataSpans.length]],
      error: '',
      truncated: false,
    });
    expectWindow(body.window, '1d', DAY);
    const user = await query(
      { project_id: withData.id, type: 'bar', spec: { ...GOOD_SPEC, group_by: ['kind'] }, range: '7d' },
      owner.token,
    );
    expect(user.statusCode, user.body).toBe(200);
    expect(user.json().columns).toEqual(['kind', 'value']);
    expectWindow(user.json().window, '7d', 7 * DAY);
  });

  it('refuses invalid specs and windows with 422', async () => {
    const t = (ms: number) => new Date(Date.now() - ms).toISOString();
    const bad: Record<string, unknown>[] = [
      { spec: { view: 'SPANS', measure: 'bogus', aggregation: 'sum' } },
      { spec: { view: 'SPANS', measure: 'user_id', aggregation: 'sum' } },
      { spec: { view: 'TRACES', measure: 'count', aggregation: 'count', group_by: ['kind'] } },
      { spec: { ...GOOD_SPEC, extra: 1 } },
      { spec: { ...GOOD_SPEC, interval: '2h' } },
      { type: 'markdown', spec: GOOD_SPEC },
      {},
      { spec: GOOD_SPEC, range: '1d', start_time: t(2 * HOUR), end_time: t(HOUR) },
      { spec: GOOD_SPEC, start_time: t(2 * HOUR) },
      { spec: GOOD_SPEC, end_time: t(HOUR) },
      { spec: GOOD_SPEC, start_time: t(HOUR), end_time: t(2 * HOUR) },
      { spec: GOOD_SPEC, start_time: t(HOUR), end_time: t(HOUR) },
    ];
    for (const payload of bad) {
      const res = await query(payload);
      expect(res.statusCode, `${JSON.stringify(payload)}: ${res.body}`).toBe(422);
      expect(Array.isArray(res.json().detail)).toBe(true);
    }
    const explicit = await query({ spec: GOOD_SPEC, type: 'stat', start_time: t(3 * HOUR), end_time: t(HOUR) });
    expect(explicit.json().window).toMatchObject({ range: null, clamped: false });
  });
});
