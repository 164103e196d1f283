import { describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, publicGet, signUp, useHarness } from '../support/harness.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';
import {
  ALERT_STATUSES,
  NO_DATA_MODES,
  OPERATORS,
  RENOTIFY_MODES,
  SEVERITIES,
  WINDOWS,
} from '../../src/alerts/schema.js';
import { AGGREGATIONS } from '../../src/widgets/spec.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { memberWithRole } from '../support/accounts.js';

/** The alert catalog: every route and status code, every enum, the 422 locations, roles and credentials. */

const h = useHarness({ ALERT_WEBHOOK_ALLOW_PRIVATE: 'false' });
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The spec's example body: name, project_id, view, measure, threshold and renotify. */
const example = (projectId: string, extra: Record<string, unknown> = {}) => ({
  name: 'p95 latency',
  project_id: projectId,
  view: 'SPANS',
  measure: 'latency',
  threshold: 2000,
  renotify: { interval_minutes: 30 },
  ...extra,
});

async function owned(label = 'owner') {
  const owner = await signUp(h(), label);
  const project = await createProject(h(), owner.token, owner.workspace.id);
  return { owner, project };
}
const post = (token: string, payload: unknown) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/alerts`, token, payload: payload as Record<string, unknown> });
const get = publicGet(h);
const patch = (token: string, id: string, payload: Record<string, unknown>) =>
  call(h().api, { method: 'PATCH', url: `${PUBLIC}/alerts/${id}`, token, payload });
const del = (token: string, id: string, query: Record<string, string>) =>
  call(h().api, { method: 'DELETE', url: `${PUBLIC}/alerts/${id}`, token, query });
const action = (
  token: string,
  id: string,
  name: 'pause' | 'resume',
  payload?: Record<string, unknown>,
  query: Record<string, string> = {},
) =>
  call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/alerts/${id}/${name}`,
    token,
    query,
    ...(payload ? { payload } : {}),
  });

async function created(token: string, body: Record<string, unknown>) {
  const res = await post(token, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alert;
}

describe('creating an alert', () => {
  it('answers 201 {alert, created: true, webhook_secret} for the spec example, with every default filled in', async () => {
    const { owner, project } = await owned();
    const res = await post(owner.token, example(project.id));
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.created).toBe(true);
    expect(body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(body.alert).toEqual({
      id: expect.any(String),
      project_id: project.id,
      name: 'p95 latency',
      view: 'SPANS',
      score_name: null,
      measure: 'latency',
      aggregation: 'avg',
      threshold: 2000,
      threshold_operator: '>',
      window: '5m',
      filters: [],
      group_by: null,
      no_data_mode: 'HOLD',
      renotify: { mode: 'OFF', interval_minutes: 30 },
      severity: 'warning',
      notify: null,
      status: 'OK',
      creator: owner.user.name,
      create_time: expect.stringMatching(ISO),
      update_time: expect.stringMatching(ISO),
      alerted_at: null,
      severity_changed_at: expect.stringMatching(ISO),
      last_evaluated_at: null,
      last_value: null,
      last_error: null,
      last_error_at: null,
      last_notify_at: null,
      last_notify_status: null,
      last_notify_error: null,
    });
    // The secret is shown once: no read carries it.
    expect((await get(owner.token, `/alerts/${body.alert.id}`, { project_id: project.id })).body).not.toContain(
      body.webhook_secret,
    );
  });

  it('is strict: the same body twice makes two alerts', async () => {
    const { owner, project } = await owned();
    const a = await created(owner.token, example(project.id));
    const b = await created(owner.token, example(project.id));
    expect(a.id).not.toBe(b.id);
    expect((await get(owner.token, '/alerts', { project_id: project.id })).json().meta.total).toBe(2);
  });

  it('accepts every value of every enum', async () => {
    const { owner, project } = await owned();
    const measureFor = (aggregation: string) =>
      aggregation === 'uniq' ? 'user_id' : aggregation === 'count' ? 'count' : 'latency';
    for (const aggregation of AGGREGATIONS)
      expect(
        (await created(owner.token, example(project.id, { measure: measureFor(aggregation), aggregation })))
          .aggregation,
      ).toBe(aggregation);
    for (const op of OPERATORS)
      expect((await created(owner.token, example(project.id, { threshold_operator: op }))).threshold_operator).toBe(op);
    for (const window of Object.keys(WINDOWS))
      expect((await created(owner.token, example(project.id, { window }))).window).toBe(window);
    for (const mode of NO_DATA_MODES)
      expect((await created(owner.token, example(project.id, { no_data_mode: mode }))).no_data_mode).toBe(mode);
    for (const severity of SEVERITIES)
      expect((await created(owner.token, example(project.id, { severity }))).severity).toBe(severity);
    for (const mode of RENOTIFY_MODES)
      expect(
        (await created(owner.token, example(project.id, { renotify: { mode, interval_minutes: 5 } }))).renotify,
      ).toEqual({ mode, interval_minutes: 5 });
  });

  it('takes filters in the spec form and in the widget vocabulary, and echoes them as written', async () => {
    const { owner, project } = await owned();
    const filters = [
      { field: 'model_name', value: 'gpt-4o', key: '' },
      { field: 'environment', op: '!=', value: 'staging' },
      { field: 'span_kind', op: 'in', value: ['llm', 'tool'] },
      { field: 'cost', op: '>=', value: '0.01' },
      { field: 'duration_ms', op: 'gt', value: 100 },
      { field: 'metadata', op: 'contains', value: 'acme', key: 'customer' },
      { field: 'metadata.tier', op: '=', value: 'gold' },
      { field: 'trace_id', op: 'eq', value: 'abc' },
    ];
    const alert = await created(owner.token, example(project.id, { measure: 'cost', filters, group_by: 'user_id' }));
    expect(alert.filters).toEqual(filters.map((f) => ({ op: '=', ...f })));
    expect(alert.group_by).toBe('user_id');
    expect(alert.aggregation).toBe('sum');
  });

  it('answers 422 at the field for every out-of-range value', async () => {
    const { owner, project } = await owned();
    const cases: [Record<string, unknown>, (string | number)[]][] = [
      [{ measure: 'bogus' }, ['body', 'measure']],
      [{ measure: 'span_count' }, ['body', 'measure']], // a TRACES measure, not a SPANS one
      [{ measure: 'user_id', aggregation: 'sum' }, ['body', 'aggregation']],
      [{ aggregation: 'median' }, ['body', 'aggregation']],
      [{ view: 'TRACES' }, ['body', 'view']],
      [{ threshold_operator: '=>' }, ['body', 'threshold_operator']],
      [{ threshold: 'high' }, ['body', 'threshold']],
      [{ window: '3m' }, ['body', 'window']],
      [{ no_data_mode: 'IGNORE' }, ['body', 'no_data_mode']],
      [{ severity: 'fatal' }, ['body', 'severity']],
      [{ renotify: { interval_minutes: 0 } }, ['body', 'renotify', 'interval_minutes']],
      [{ renotify: { interval_minutes: 1.5 } }, ['body', 'renotify', 'interval_minutes']],
      [{ renotify: { mode: 'ALWAYS', interval_minutes: 5 } }, ['body', 'renotify', 'mode']],
      [{ filters: [{ field: 'colour', op: '=', value: 'red' }] }, ['body', 'filters', 0, 'field']],
      [
        {
          filters: [
            { field: 'model_name', op: '=', value: 'a' },
            { field: 'cost', op: 'like', value: '1' },
          ],
        },
        ['body', 'filters', 1, 'op'],
      ],
      [{ filters: [{ field: 'cost', op: '>', value: 'cheap' }] }, ['body', 'filters', 0, 'value']],
      [{ filters: [{ field: 'model_name', op: 'contains', value: 'gpt' }] }, ['body', 'filters', 0, 'op']],
      [{ filters: [{ field: 'metadata', op: '=', value: 'x', key: '' }] }, ['body', 'filters', 0, 'key']],
      [{ group_by: 'colour' }, ['body', 'group_by']],
      [{ notify: { webhook_url: 'ftp://example.com/hook' } }, ['body', 'notify', 'webhook_url']],
      [{ notify: { webhook_url: 'http://127.0.0.1:9/hook' } }, ['body', 'notify', 'webhook_url']],
      [{ notify: { webhook_url: 'http://localhost:9/hook' } }, ['body', 'notify', 'webhook_url']],
      [{ notify: { webhook_url: 'http://[::1]/hook' } }, ['body', 'notify', 'webhook_url']],
      [{ notify: { webhook_url: 'http://10.1.2.3/hook' } }, ['body', 'notify', 'webhook_url']],
      [{ name: '' }, ['body', 'name']],
    ];
    for (const [extra, loc] of cases) expectValidationAt(await post(owner.token, example(project.id, extra)), loc);
    const { name: _n, ...noName } = example(project.id);
    expectValidationAt(await post(owner.token, noName), ['body', 'name']);
    const { threshold: _t, ...noThreshold } = example(project.id);
    expectValidationAt(await post(owner.token, noThreshold), ['body', 'threshold']);
    expect((await get(owner.token, '/alerts', { project_id: project.id })).json().meta.total).toBe(0);
  });

  it('answers 409 beyond 500 alerts in a project', async () => {
    const { owner, project } = await owned();
    // 499 rows written straight to the store: the cap is what is under test, not 499 creates.
    await h().ctx.pg.pool.query(
      `INSERT INTO alerts (id, project_id, name, measure, aggregation, threshold, threshold_operator, time_window, webhook_secret)
       SELECT gen_random_uuid(), $1, 'filler ' || i, 'count', 'count', 0, '>', '5m', 'whsec_filler' FROM generate_series(1, 499) AS i`,
      [project.id],
    );
    expect((await post(owner.token, example(project.id))).statusCode).toBe(201);
    expectDetail(
      await post(owner.token, example(project.id)),
      409,
      'a project holds at most 500 alerts; delete one before creating another',
    );
    expect((await get(owner.token, '/alerts', { project_id: project.id })).json().meta.total).toBe(500);
  });

  it('accepts a public webhook address', async () => {
    const { owner, project } = await owned();
    const alert = await created(
      owner.token,
      example(project.id, { notify: { webhook_url: 'https://hooks.example.com/sightline' } }),
    );
    expect(alert.notify).toEqual({ webhook_url: 'https://hooks.example.com/sightline' });
  });
});

describe('who may read and write alerts', () => {
  it('refuses API keys on every write with the spec detail, and answers reads with one', async () => {
    const { owner, project } = await owned();
    const key = (await createApiKey(h(), owner.token, project.id)).key;
    const alert = await created(owner.token, example(project.id));
    expectDetail(await post(key, example(project.id)), 403, USER_LOGIN_REQUIRED_DETAIL);
    expectDetail(await patch(key, alert.id, { project_id: project.id, name: 'x' }), 403, USER_LOGIN_REQUIRED_DETAIL);
    expectDetail(await del(key, alert.id, { project_id: project.id }), 403, USER_LOGIN_REQUIRED_DETAIL);
    expectDetail(await action(key, alert.id, 'pause', { project_id: project.id }), 403, USER_LOGIN_REQUIRED_DETAIL);
    expectDetail(await action(key, alert.id, 'resume', { project_id: project.id }), 403, USER_LOGIN_REQUIRED_DETAIL);
    expect((await get(key, '/alerts')).json().data.map((a: { id: string }) => a.id)).toEqual([alert.id]);
    expect((await get(key, `/alerts/${alert.id}`)).json().id).toBe(alert.id);
    expect((await get(key, `/alerts/${alert.id}/evaluations`)).json()).toEqual({
      data: [],
      meta: { page: 0, limit: 50, total: 0 },
    });
    const other = await owned('other');
    expectDetail(await get(key, '/alerts', { project_id: other.project.id }), 400);
  });

  it('lets a VIEWER read and refuses their writes; needs project_id for user reads; 401 without a credential', async () => {
    const { owner, project } = await owned();
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const alert = await created(member.token, example(project.id));
    expect(alert.creator).toBe(member.user.name);
    expect((await get(viewer.token, `/alerts/${alert.id}`, { project_id: project.id })).statusCode).toBe(200);
    expectDetail(await post(viewer.token, example(project.id)), 403);
    expectDetail(await patch(viewer.token, alert.id, { project_id: project.id, name: 'x' }), 403);
    expectDetail(await action(viewer.token, alert.id, 'pause', { project_id: project.id }), 403);
    expectDetail(await del(viewer.token, alert.id, { project_id: project.id }), 403);
    expectDetail(await get(viewer.token, '/alerts'), 400, PROJECT_ID_REQUIRED_DETAIL);
    const stranger = await signUp(h(), 'stranger');
    expectDetail(await get(stranger.token, '/alerts', { project_id: project.id }), 403);
    expectDetail(await post(stranger.token, example(project.id)), 403);
    expect(
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/alerts`, query: { project_id: project.id } })).statusCode,
    ).toBe(401);
    expectDetail(await post(owner.token, example(UNKNOWN_ID)), 404);
  });
});

describe('reading alerts', () => {
  it('lists a project’s alerts in creation order with meta, pages and a status filter', async () => {
    const { owner, project } = await owned();
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await created(owner.token, example(project.id, { name: `a${i}` }))).id);
    await action(owner.token, ids[1]!, 'pause', { project_id: project.id });
    await action(owner.token, ids[3]!, 'pause', { project_id: project.id });
    const all = (await get(owner.token, '/alerts', { project_id: project.id })).json();
    expect(all.data.map((a: { id: string }) => a.id)).toEqual(ids);
    expect(all.meta).toEqual({ page: 0, limit: 50, total: 5 });
    const page = (await get(owner.token, '/alerts', { project_id: project.id, limit: '2', page: '1' })).json();
    expect(page.data.map((a: { id: string }) => a.id)).toEqual(ids.slice(2, 4));
    expect(page.meta).toEqual({ page: 1, limit: 2, total: 5 });
    expect((await get(owner.token, '/alerts', { project_id: project.id, limit: '2', page: '9' })).json()).toEqual({
      data: [],
      meta: { page: 9, limit: 2, total: 5 },
    });
    const paused = (await get(owner.token, '/alerts', { project_id: project.id, status: 'PAUSED' })).json();
    expect(paused.data.map((a: { id: string }) => a.id)).toEqual([ids[1], ids[3]]);
    for (const status of ALERT_STATUSES)
      expect((await get(owner.token, '/alerts', { project_id: project.id, status })).statusCode).toBe(200);
    expectValidationAt(await get(owner.token, '/alerts', { project_id: project.id, status: 'FIRING' }), [
      'query',
      'status',
    ]);
    expectValidationAt(await get(owner.token, '/alerts', { project_id: project.id, limit: '0' }), ['query', 'limit']);
    expectValidationAt(await get(owner.token, '/alerts', { project_id: project.id, limit: '201' }), ['query', 'limit']);
    expectValidationAt(await get(owner.token, '/alerts', { project_id: project.id, page: '-1' }), ['query', 'page']);
  });

  it('answers 404 for an unknown id, a malformed id and another project’s alert', async () => {
    const { owner, project } = await owned();
    const other = await owned('other');
    const theirs = await created(other.owner.token, example(other.project.id));
    for (const id of [UNKNOWN_ID, 'not-a-uuid', theirs.id]) {
      expectDetail(await get(owner.token, `/alerts/${id}`, { project_id: project.id }), 404, 'alert not found');
      expectDetail(
        await get(owner.token, `/alerts/${id}/evaluations`, { project_id: project.id }),
        404,
        'alert not found',
      );
      expectDetail(await patch(owner.token, id, { project_id: project.id, name: 'x' }), 404, 'alert not found');
      expectDetail(await del(owner.token, id, { project_id: project.id }), 404, 'alert not found');
      expectDetail(await action(owner.token, id, 'pause', { project_id: project.id }), 404, 'alert not found');
    }
  });
});

describe('editing, pausing and deleting', () => {
  it('edits fields; a change of what is measured resets the state to OK, other edits keep it', async () => {
    const { owner, project } = await owned();
    const alert = await created(
      owner.token,
      example(project.id, {
        filters: [
          { field: 'metadata.tier', op: '!=', value: 'free' },
          { field: 'cost', op: '>', value: 0.5 },
        ],
      }),
    );
    const setAlerting = () =>
      h().ctx.pg.pool.query("UPDATE alerts SET status = 'ALERTING', last_value = 3000 WHERE id = $1", [alert.id]);
    await setAlerting();
    const renamed = await patch(owner.token, alert.id, {
      project_id: project.id,
      name: 'renamed',
      threshold: 2500,
      severity: 'critical',
      notify: { webhook_url: 'https://hooks.example.com/x' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({
      name: 'renamed',
      threshold: 2500,
      severity: 'critical',
      status: 'ALERTING',
      last_value: 3000,
      notify: { webhook_url: 'https://hooks.example.com/x' },
    });
    expect(Date.parse(renamed.json().severity_changed_at)).toBeGreaterThan(Date.parse(alert.severity_changed_at));
    expect(Date.parse(renamed.json().update_time)).toBeGreaterThan(Date.parse(alert.update_time));
    // The same filters written again measure the same thing.
    await setAlerting();
    expect((await patch(owner.token, alert.id, { project_id: project.id, filters: alert.filters })).json().status).toBe(
      'ALERTING',
    );
    for (const change of [
      { measure: 'cost' },
      { aggregation: 'p99' },
      { window: '1h' },
      { filters: [{ field: 'model_name', op: '=', value: 'gpt-4o' }] },
      { group_by: 'model_name' },
    ]) {
      await setAlerting();
      const res = await patch(owner.token, alert.id, { project_id: project.id, ...change });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ ...change, status: 'OK', last_value: null });
    }
    // A new measure without an aggregation takes that measure's default.
    expect(
      (await patch(owner.token, alert.id, { project_id: project.id, measure: 'user_id' })).json().aggregation,
    ).toBe('uniq');
    const removed = await patch(owner.token, alert.id, { project_id: project.id, notify: null, group_by: null });
    expect(removed.json()).toMatchObject({ notify: null, group_by: null });
  });

  it('checks the merged definition and answers 422 at the body field', async () => {
    const { owner, project } = await owned();
    const alert = await created(owner.token, example(project.id, { measure: 'user_id' }));
    expectValidationAt(await patch(owner.token, alert.id, { project_id: project.id, aggregation: 'sum' }), [
      'body',
      'aggregation',
    ]);
    expectValidationAt(await patch(owner.token, alert.id, { project_id: project.id, measure: 'nope' }), [
      'body',
      'measure',
    ]);
    expectValidationAt(
      await patch(owner.token, alert.id, { project_id: project.id, filters: [{ field: 'x', op: '=', value: 'y' }] }),
      ['body', 'filters', 0, 'field'],
    );
    expectValidationAt(
      await patch(owner.token, alert.id, { project_id: project.id, renotify: { interval_minutes: 0 } }),
      ['body', 'renotify', 'interval_minutes'],
    );
    expectValidationAt(await patch(owner.token, alert.id, { name: 'no project' }), ['body', 'project_id']);
    expectValidationAt(
      await patch(owner.token, alert.id, { project_id: project.id, notify: { webhook_url: 'http://192.168.1.1/' } }),
      ['body', 'notify', 'webhook_url'],
    );
  });

  it('pauses and resumes (both idempotent), with the project in the body or the query', async () => {
    const { owner, project } = await owned();
    const alert = await created(owner.token, example(project.id));
    const paused = await action(owner.token, alert.id, 'pause', { project_id: project.id });
    expect(paused.statusCode, paused.body).toBe(200);
    expect(paused.json().status).toBe('PAUSED');
    expect((await action(owner.token, alert.id, 'pause', undefined, { project_id: project.id })).json().status).toBe(
      'PAUSED',
    );
    // An edit that changes the measure keeps a paused alert paused.
    expect((await patch(owner.token, alert.id, { project_id: project.id, measure: 'cost' })).json().status).toBe(
      'PAUSED',
    );
    const resumed = await action(owner.token, alert.id, 'resume', { project_id: project.id });
    expect(resumed.json().status).toBe('OK');
    expect((await action(owner.token, alert.id, 'resume', { project_id: project.id })).json().status).toBe('OK');
    expectValidationAt(await action(owner.token, alert.id, 'pause'), ['body', 'project_id']);
  });

  it('deletes an alert with the project in the query; then it is gone', async () => {
    const { owner, project } = await owned();
    const alert = await created(owner.token, example(project.id));
    expectValidationAt(await del(owner.token, alert.id, {}), ['query', 'project_id']);
    const res = await del(owner.token, alert.id, { project_id: project.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true, id: alert.id });
    expectDetail(await get(owner.token, `/alerts/${alert.id}`, { project_id: project.id }), 404);
    expectDetail(await del(owner.token, alert.id, { project_id: project.id }), 404);
  });
});
