import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';

/** The detector catalog (docs/signals.md, "Detectors"): routes, roles, the config contract, the default "Errors" detector. */

const h = useHarness({ QUEUE_PREFIX: `signals-detectors-${crypto.randomBytes(4).toString('hex')}` });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FIELDS = ['config', 'created_at', 'enabled', 'id', 'name', 'type', 'update_time'];

const list = (token: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/detectors`, token, query });
const get = (token: string, id: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/detectors/${id}`, token, query });
const post = (token: string, payload: Record<string, unknown>) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/detectors`, token, payload });
const patch = (token: string, id: string, payload: Record<string, unknown>) =>
  call(h().api, { method: 'PATCH', url: `${PUBLIC}/detectors/${id}`, token, payload });
const del = (token: string, id: string, query: Record<string, string>) =>
  call(h().api, { method: 'DELETE', url: `${PUBLIC}/detectors/${id}`, token, query });

describe('the default "Errors" detector', () => {
  it('comes with every new project, enabled, over every error span, and reads with either credential', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const byKey = await list(key.key);
    expect(byKey.statusCode, byKey.body).toBe(200);
    expect(byKey.json().data).toHaveLength(1);
    const errors = byKey.json().data[0];
    expect(Object.keys(errors).sort()).toEqual(FIELDS);
    expect(errors).toMatchObject({ name: 'Errors', type: 'error', config: {}, enabled: true });
    expect(errors.created_at).toMatch(ISO);
    expect(errors.update_time).toMatch(ISO);

    const byUser = await list(owner.token, { project_id: project.id });
    expect(byUser.json()).toEqual(byKey.json());
    expect((await get(key.key, errors.id)).json()).toEqual(errors);
    expect((await get(owner.token, errors.id, { project_id: project.id })).json()).toEqual(errors);
  });

  it('cannot be deleted (409) but can be switched off', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const errors = (await list(key.key)).json().data[0];
    expectDetail(await del(owner.token, errors.id, { project_id: project.id }), 409);
    const off = await patch(owner.token, errors.id, { project_id: project.id, enabled: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json()).toMatchObject({ id: errors.id, enabled: false, name: 'Errors' });
  });
});

describe('reads', () => {
  it('need project_id with a user credential (400 with the spec detail) and access to the project (403)', async () => {
    const { owner, project } = await projectWithKey(h());
    expectDetail(await list(owner.token), 400, PROJECT_ID_REQUIRED_DETAIL);
    const stranger = await signUp(h(), 'stranger');
    expectDetail(await list(stranger.token, { project_id: project.id }), 403);
    expect((await list(owner.token, { project_id: project.id })).statusCode).toBe(200);
  });

  it("answer 404 for an unknown id or another project's detector", async () => {
    const a = await projectWithKey(h());
    const b = await projectWithKey(h());
    const theirs = (await list(b.key.key)).json().data[0];
    expectDetail(await get(a.key.key, theirs.id), 404, 'detector not found');
    expectDetail(await get(a.key.key, UNKNOWN_ID), 404, 'detector not found');
    expectDetail(await get(a.key.key, 'not-a-uuid'), 404, 'detector not found');
  });
});

describe('writes', () => {
  it('create each type (201) with its config as stored; sql gets its default interval', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const error = await post(owner.token, {
      project_id: project.id,
      name: 'Tool errors',
      type: 'error',
      config: { filters: [{ field: 'span_kind', op: 'in', value: ['tool'] }] },
    });
    expect(error.statusCode, error.body).toBe(201);
    expect(Object.keys(error.json()).sort()).toEqual(FIELDS);
    expect(error.json()).toMatchObject({
      name: 'Tool errors',
      type: 'error',
      enabled: true,
      config: { filters: [{ field: 'span_kind', op: 'in', value: ['tool'] }] },
    });

    const threshold = await post(owner.token, {
      project_id: project.id,
      name: 'Slow LLM',
      type: 'threshold',
      config: { measure: 'latency', operator: '>', value: 5000, filters: [{ field: 'kind', value: 'llm' }] },
    });
    expect(threshold.statusCode, threshold.body).toBe(201);
    expect(threshold.json().config).toMatchObject({ measure: 'latency', operator: '>', value: 5000 });

    const sql = await post(owner.token, {
      project_id: project.id,
      name: 'Costly traces',
      type: 'sql',
      enabled: false,
      config: { query: 'SELECT trace_id FROM traces WHERE total_cost > 1' },
    });
    expect(sql.statusCode, sql.body).toBe(201);
    expect(sql.json()).toMatchObject({
      type: 'sql',
      enabled: false,
      config: { query: 'SELECT trace_id FROM traces WHERE total_cost > 1', interval_minutes: 5 },
    });

    const all = (await list(key.key)).json().data.map((d: { name: string }) => d.name);
    expect(all).toEqual(['Errors', 'Tool errors', 'Slow LLM', 'Costly traces']);
  });

  it('refuse a config its type does not take: 422 located inside body.config', async () => {
    const { owner, project } = await projectWithKey(h());
    const create = (type: string, config: unknown) =>
      post(owner.token, { project_id: project.id, name: 'x', type, config });
    expectValidationAt(await create('threshold', { operator: '>', value: 1 }), ['body', 'config', 'measure']);
    expectValidationAt(await create('threshold', { measure: 'error_rate', operator: '>', value: 1 }), [
      'body',
      'config',
      'measure',
    ]);
    expectValidationAt(await create('threshold', { measure: 'cost', operator: '~', value: 1 }), [
      'body',
      'config',
      'operator',
    ]);
    expectValidationAt(await create('threshold', { measure: 'cost', operator: '>', value: 'a lot' }), [
      'body',
      'config',
      'value',
    ]);
    expectValidationAt(await create('error', { everything: true }), ['body', 'config']);
    expectValidationAt(await create('error', { filters: [{ field: 'colour', op: '=', value: 'red' }] }), [
      'body',
      'config',
      'filters',
      0,
      'field',
    ]);
    expectValidationAt(await create('error', { filters: [{ field: 'cost', op: 'in', value: ['1'] }] }), [
      'body',
      'config',
      'filters',
      0,
      'op',
    ]);
    expectValidationAt(await create('sql', {}), ['body', 'config', 'query']);
    expectValidationAt(await create('sql', { query: 'SELECT trace_id FROM traces', interval_minutes: 0 }), [
      'body',
      'config',
      'interval_minutes',
    ]);
    expectValidationAt(await create('sql', { query: 'DELETE FROM spans' }), ['body', 'config', 'query']);
    expectValidationAt(await create('sql', { query: 'SELECT * FROM system.tables' }), ['body', 'config', 'query']);
    // The query must answer a trace_id column (checked against the engine, before anything is stored).
    const noTrace = expectValidationAt(
      await create('sql', { query: 'SELECT name, count() AS n FROM spans GROUP BY name' }),
      ['body', 'config', 'query'],
    );
    expect(noTrace.msg).toContain('trace_id');
    expectValidationAt(await create('sql', { query: 'SELECT no_such_column AS trace_id FROM spans' }), [
      'body',
      'config',
      'query',
    ]);
    expectValidationAt(await create('anomaly', {}), ['body', 'type']);
    expectValidationAt(await post(owner.token, { project_id: project.id, type: 'error', config: {} }), [
      'body',
      'name',
    ]);
    expectValidationAt(await post(owner.token, { name: 'x', type: 'error', config: {} }), ['body', 'project_id']);
  });

  it('refuse API keys (403 with the spec detail) and VIEWERs (403); MEMBERs may write', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const body = { project_id: project.id, name: 'Errors again', type: 'error', config: {} };
    expectDetail(await post(key.key, body), 403, USER_LOGIN_REQUIRED_DETAIL);
    const errors = (await list(key.key)).json().data[0];
    expectDetail(
      await patch(key.key, errors.id, { project_id: project.id, name: 'x' }),
      403,
      USER_LOGIN_REQUIRED_DETAIL,
    );
    expectDetail(await del(key.key, errors.id, { project_id: project.id }), 403, USER_LOGIN_REQUIRED_DETAIL);

    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expectDetail(
      await post(viewer.token, body),
      403,
      'this operation requires the MEMBER role or higher in the workspace',
    );
    expect((await list(viewer.token, { project_id: project.id })).statusCode).toBe(200);
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const created = await post(member.token, body);
    expect(created.statusCode, created.body).toBe(201);
    expectDetail(await del(viewer.token, created.json().id, { project_id: project.id }), 403);
    expect((await del(member.token, created.json().id, { project_id: project.id })).json()).toEqual({
      deleted: true,
      id: created.json().id,
    });
  });

  it('edit name, config and enabled; a type change needs a config for the new type; update_time moves', async () => {
    const { owner, project } = await projectWithKey(h());
    const created = (
      await post(owner.token, {
        project_id: project.id,
        name: 'Slow',
        type: 'threshold',
        config: { measure: 'cost', operator: '>', value: 1 },
      })
    ).json();
    const renamed = await patch(owner.token, created.id, {
      project_id: project.id,
      name: 'Expensive spans',
      config: { measure: 'cost', operator: '>=', value: 2 },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({
      id: created.id,
      name: 'Expensive spans',
      type: 'threshold',
      config: { measure: 'cost', operator: '>=', value: 2 },
      enabled: true,
    });
    expect(Date.parse(renamed.json().update_time)).toBeGreaterThanOrEqual(Date.parse(created.update_time));
    expect(renamed.json().created_at).toBe(created.created_at);

    expectValidationAt(await patch(owner.token, created.id, { project_id: project.id, config: { measure: 'cost' } }), [
      'body',
      'config',
      'operator',
    ]);
    expectValidationAt(await patch(owner.token, created.id, { project_id: project.id, type: 'sql' }), [
      'body',
      'config',
      'query',
    ]);
    const asError = await patch(owner.token, created.id, { project_id: project.id, type: 'error', config: {} });
    expect(asError.json()).toMatchObject({ type: 'error', config: {} });
    expectDetail(
      await patch(owner.token, UNKNOWN_ID, { project_id: project.id, name: 'x' }),
      404,
      'detector not found',
    );
    expectValidationAt(await patch(owner.token, created.id, { name: 'x' }), ['body', 'project_id']);
  });

  it('delete with project_id in the query; another project of the same user cannot reach it', async () => {
    const { owner, project } = await projectWithKey(h());
    const other = await createProject(h(), owner.token, owner.workspace.id);
    await createApiKey(h(), owner.token, other.id);
    const created = (
      await post(owner.token, { project_id: project.id, name: 'Temp', type: 'error', config: {} })
    ).json();
    expectValidationAt(await del(owner.token, created.id, {}), ['query', 'project_id']);
    expectDetail(await del(owner.token, created.id, { project_id: other.id }), 404, 'detector not found');
    const deleted = await del(owner.token, created.id, { project_id: project.id });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ deleted: true, id: created.id });
    expectDetail(await get(owner.token, created.id, { project_id: project.id }), 404, 'detector not found');
    expectDetail(await del(owner.token, created.id, { project_id: project.id }), 404, 'detector not found');
  });
});
