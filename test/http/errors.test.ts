import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';

const h = useHarness();

/** A stack frame or a source location, in whatever form a leaked stack would take. */
function expectNoStack(res: LightMyRequestResponse) {
  const body = res.body;
  expect(body).not.toMatch(/\n\s*at /);
  expect(body).not.toMatch(/\bat \S+ \(/); // "at fn (file:line:col)"
  expect(body).not.toMatch(/\bat \S+:\d+:\d+/); // "at /path/file.js:1:2"
  expect(body).not.toContain('.ts:');
  expect(body).not.toContain('.js:');
  expect(body).not.toContain('node_modules');
  expect(body).not.toMatch(/"stack"/);
}

function expectDetailString(res: LightMyRequestResponse, status: number) {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expectNoStack(res);
  return body.detail as string;
}

function expectValidation(res: LightMyRequestResponse, root: 'body' | 'query' | 'path') {
  expect(res.statusCode).toBe(422);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(Array.isArray(body.detail)).toBe(true);
  expect(body.detail.length).toBeGreaterThan(0);
  for (const entry of body.detail) {
    expect(Array.isArray(entry.loc)).toBe(true);
    expect(entry.loc.length).toBeGreaterThan(0);
    for (const part of entry.loc) expect(['string', 'number']).toContain(typeof part);
    expect(typeof entry.msg).toBe('string');
    expect(typeof entry.type).toBe('string');
    if ('ctx' in entry) expect(typeof entry.ctx).toBe('object');
    for (const key of Object.keys(entry)) expect(['loc', 'msg', 'type', 'ctx', 'input']).toContain(key);
  }
  expect(body.detail.map((e: { loc: unknown[] }) => e.loc[0])).toContain(root);
  for (const entry of body.detail) expect(['body', 'query', 'path', 'header']).toContain(entry.loc[0]);
  expectNoStack(res);
  return body.detail as {
    loc: (string | number)[];
    msg: string;
    type: string;
    ctx?: Record<string, unknown>;
    input?: unknown;
  }[];
}

describe('error envelopes', () => {
  it('answers an unknown route with 404 {detail}', async () => {
    const user = await signUp(h(), 'err');
    expectDetailString(await call(h().api, { method: 'GET', url: '/no/such/route' }), 404);
    expectDetailString(await call(h().api, { method: 'GET', url: `${PUBLIC}/no-such-thing`, token: user.token }), 404);
    expectDetailString(
      await call(h().api, { method: 'PUT', url: `${PUBLIC}/projects`, token: user.token, payload: {} }),
      404,
    );
  });

  it('answers a body that is not JSON with 400 {detail}, never 500', async () => {
    const user = await signUp(h(), 'err');
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token: user.token,
      headers: { 'content-type': 'application/json' },
      payload: '{oops',
    });
    expectDetailString(res, 400);
    const members = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${user.workspace.id}/members`,
      token: user.token,
      headers: { 'content-type': 'application/json' },
      payload: '{"email": "a@b.c", "role": ',
    });
    expectDetailString(members, 400);
    // Nothing was created by the refused call.
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: user.token });
    expect(list.json().data).toEqual([]);
  });

  it('answers an empty JSON body with 400 {detail}, and a body that is not a JSON object with 422 at body', async () => {
    const user = await signUp(h(), 'err');
    expectDetailString(
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/workspaces`,
        token: user.token,
        headers: { 'content-type': 'application/json' },
        payload: '',
      }),
      400,
    );
    const text = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: user.token,
      headers: { 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(expectValidation(text, 'body')[0]!.loc).toEqual(['body']);
    const array = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: user.token,
      payload: [{ name: 'x' }],
    });
    expect(expectValidation(array, 'body')[0]!.loc).toEqual(['body']);
    // None of them created a workspace.
    expect(
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token })).json().data,
    ).toHaveLength(1);
  });

  it('answers an oversized body with 413 {detail}', async () => {
    const user = await signUp(h(), 'err');
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: user.token,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }),
    });
    expectDetailString(res, 413);
  });

  it('shapes 422 as {detail: [{loc, msg, type}]} with loc rooted at body, query or path', async () => {
    const { owner, project } = await projectWithKey(h(), 'err');

    const body = expectValidation(
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/projects`,
        token: owner.token,
        payload: { workspace_id: owner.workspace.id, trace_ttl_days: 'soon' },
      }),
      'body',
    );
    expect(body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], type: 'missing' }),
        expect.objectContaining({ loc: ['body', 'trace_ttl_days'], input: 'soon' }),
      ]),
    );

    const query = expectValidation(
      await call(h().api, {
        method: 'DELETE',
        url: `${PUBLIC}/projects/${project.id}`,
        token: owner.token,
        query: { reason: 'no' },
      }),
      'query',
    );
    expect(query[0]).toMatchObject({ loc: ['query', 'reason'], type: 'string_too_short', ctx: { min_length: 3 } });

    const path = expectValidation(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces//members`, token: owner.token }),
      'path',
    );
    expect(path[0]).toMatchObject({ loc: ['path', 'workspace_id'] });

    // The refused delete left the project alive.
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: owner.token });
    expect(list.json().data.map((p: { id: string }) => p.id)).toContain(project.id);
  });

  it('does not echo a rejected password back in a 422', async () => {
    const res = await call(h().web, {
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: 'someone@example.test', password: 'hunter2', name: 'x' },
    });
    expectValidation(res, 'body');
    expect(res.json().detail.map((e: { loc: unknown[] }) => e.loc)).toContainEqual(['body', 'password']);
    expect(res.body).not.toContain('hunter2');
  });

  it('answers credential problems with {detail} and no stack', async () => {
    const { key } = await projectWithKey(h(), 'err');
    expect(expectDetailString(await call(h().api, { method: 'GET', url: `${PUBLIC}/projects` }), 401)).toBeTruthy();
    expectDetailString(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, headers: { authorization: 'Basic abc' } }),
      401,
    );
    expectDetailString(await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: 'sl_not-a-key' }), 401);
    expectDetailString(await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: 'a.b.c' }), 401);
    expect(
      expectDetailString(await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: key.key }), 403),
    ).toBe('this operation requires a user login; API keys are project-scoped');
  });

  it('keeps stack traces out of every answer of the account routes', async () => {
    const user = await signUp(h(), 'err');
    const requests = [
      () =>
        call(h().api, {
          method: 'DELETE',
          url: `${PUBLIC}/workspaces/${user.workspace.id}`,
          token: user.token,
          query: { name: 'wrong', reason: 'abc' },
        }),
      () =>
        call(h().api, {
          method: 'DELETE',
          url: `${PUBLIC}/workspaces/${user.workspace.id}`,
          token: user.token,
          query: { name: user.workspace.name, reason: 'abc' },
        }),
      () =>
        call(h().api, {
          method: 'DELETE',
          url: `${PUBLIC}/workspaces/not-a-uuid`,
          token: user.token,
          query: { name: 'x', reason: 'abc' },
        }),
      () =>
        call(h().api, {
          method: 'DELETE',
          url: `${PUBLIC}/projects/not-a-uuid`,
          token: user.token,
          query: { reason: 'abc' },
        }),
      () =>
        call(h().api, {
          method: 'PATCH',
          url: `${PUBLIC}/workspaces/${user.workspace.id}/members/${user.user.id}`,
          token: user.token,
          payload: { role: 'VIEWER' },
        }),
      () =>
        call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/projects`,
          token: user.token,
          payload: { name: 'x', workspace_id: 'not-a-uuid' },
        }),
      () => call(h().api, { method: 'POST', url: `${PUBLIC}/projects`, token: user.token, payload: [1, 2, 3] }),
      () =>
        call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/projects`,
          token: user.token,
          query: { workspace_id: "'; DROP TABLE projects; --" },
        }),
    ];
    const answers = [];
    for (const request of requests) answers.push(await request());
    expect(answers.map((r) => r.statusCode)).toEqual([400, 409, 404, 404, 409, 404, 422, 200]);
    for (const res of answers) expectNoStack(res);
  });
});

describe('health', () => {
  it('answers /healthz with 200', async () => {
    const res = await call(h().api, { method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 200 when every store answers', async () => {
    const res = await call(h().api, { method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', checks: { clickhouse: 'ok', postgres: 'ok', queue: 'ok' } });
  });
});

describe('metrics', () => {
  it('serves Prometheus text with a request histogram labelled by route pattern', async () => {
    await call(h().api, { method: 'GET', url: '/healthz' });
    const res = await call(h().api, { method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/sightline_http_request_duration_seconds_count\{[^}]*route="\/healthz"[^}]*\} \d+/);
  });
});
