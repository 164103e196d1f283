import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  signUp,
  useHarness,
  type SignedUp,
} from '../support/harness.js';
import { iso } from '../support/ingest.js';

/**
 * `GET /traces` request bounds and read scoping (docs/traces.md "List traces", docs/limits.md,
 * docs/errors.md, docs/authentication.md). A bad `filters` parameter is a 400 `{detail: string}`;
 * any other bad query parameter is a 422 `{detail: [{loc: ['query', ...], msg, type}]}`.
 */

const h = useHarness();

const HOUR = 3_600_000;
const T = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;

function list(token: string | undefined, query: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token, query });
}

const ids = (res: LightMyRequestResponse): string[] => res.json().data.map((t: { trace_id: string }) => t.trace_id);

/** Three single-span traces a minute apart, newest last. */
async function projectWithTraces(label = 'owner') {
  const made = await projectWithKey(h(), label);
  const spans = [0, 1, 2].map((i) => ({
    trace_id: `tr-${i}`,
    span_id: 'root',
    name: `trace ${i}`,
    start_time: iso(T + i * 60_000),
    end_time: iso(T + i * 60_000 + 100),
    cost: i,
  }));
  const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: made.key.key, payload: { spans } });
  expect(res.json()).toMatchObject({ accepted: 3, rejected: [] });
  return made;
}

function expect400(res: LightMyRequestResponse): void {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
}

function expect422(res: LightMyRequestResponse, param: string): void {
  expect(res.statusCode, res.body).toBe(422);
  const body = res.json();
  expect(Array.isArray(body.detail)).toBe(true);
  expect(body.detail.length).toBeGreaterThan(0);
  for (const issue of body.detail) {
    expect(issue).toMatchObject({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
    expect(issue.loc[0]).toBe('query');
  }
  expect(body.detail.map((i: { loc: unknown[] }) => i.loc)).toContainEqual(['query', param]);
}

const s = (n: number, c = 'a') => c.repeat(n);

describe('list traces: limit and page', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithTraces()).key.key;
  });

  it.each(['0', '201', '-1', '1.5', 'ten'])('answers 422 for limit=%s', async (limit) => {
    expect422(await list(token, { limit }), 'limit');
  });

  it('accepts limit=1 and returns one trace', async () => {
    const res = await list(token, { limit: '1' });
    expect(res.statusCode).toBe(200);
    expect(ids(res)).toEqual(['tr-2']);
    expect(res.json().meta).toEqual({ page: 0, limit: 1, total: 3 });
  });

  it('accepts limit=200', async () => {
    const res = await list(token, { limit: '200' });
    expect(res.statusCode).toBe(200);
    expect(ids(res)).toEqual(['tr-2', 'tr-1', 'tr-0']);
    expect(res.json().meta).toEqual({ page: 0, limit: 200, total: 3 });
  });

  it.each(['-1', '10001', 'x'])('answers 422 for page=%s', async (page) => {
    expect422(await list(token, { page }), 'page');
  });

  it('accepts page=10000 (the largest page index)', async () => {
    const res = await list(token, { page: '10000' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], meta: { page: 10000, limit: 50, total: 3 } });
  });
});

describe('list traces: the filters parameter', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithTraces()).key.key;
  });

  const withFilters = (filters: unknown) =>
    list(token, { filters: typeof filters === 'string' ? filters : JSON.stringify(filters) });
  const costGte0 = { field: 'cost', op: 'gte', value: 0 };

  it('accepts 20 predicates', async () => {
    const res = await withFilters(Array.from({ length: 20 }, () => costGte0));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().meta.total).toBe(3);
  });

  it('refuses 21 predicates with 400', async () => {
    expect400(await withFilters(Array.from({ length: 21 }, () => costGte0)));
  });

  const accepted: [string, unknown][] = [
    ['a 1024-char string value', { field: 'trace_id', op: 'eq', value: s(1024) }],
    ['a 1024-char metadata value', { field: 'metadata', op: 'eq', key: 'k', value: s(1024) }],
    ['a 1024-char in item', { field: 'model_name', op: 'in', value: [s(1024)] }],
    ['a 256-char metadata key', { field: 'metadata', op: 'contains', key: s(256, 'k'), value: 'v' }],
    ['cost 0', { field: 'cost', op: 'eq', value: 0 }],
    ['cost 999999999', { field: 'cost', op: 'lt', value: 999_999_999 }],
    ['a fractional cost', { field: 'cost', op: 'gt', value: 0.5 }],
    ['signal_id eq', { field: 'signal_id', op: 'eq', value: 'sig-1' }],
  ];

  it.each(accepted)('accepts %s', async (_label, predicate) => {
    const res = await withFilters([predicate]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ data: expect.any(Array), meta: { total: expect.any(Number) } });
  });

  const refused: [string, unknown][] = [
    ['a 1025-char string value', [{ field: 'trace_id', op: 'contains', value: s(1025) }]],
    ['a 1025-char metadata value', [{ field: 'metadata', op: 'eq', key: 'k', value: s(1025) }]],
    ['an empty string value', [{ field: 'trace_id', op: 'eq', value: '' }]],
    ['a 1025-char in item', [{ field: 'environment', op: 'in', value: ['prod', s(1025)] }]],
    ['an empty in array', [{ field: 'model_name', op: 'in', value: [] }]],
    ['an in value that is not an array', [{ field: 'model_name', op: 'in', value: 'gpt-4o' }]],
    ['a negative cost', [{ field: 'cost', op: 'gte', value: -0.01 }]],
    ['cost 1000000000', [{ field: 'cost', op: 'lte', value: 1_000_000_000 }]],
    ['a cost given as a string', [{ field: 'cost', op: 'eq', value: '1' }]],
    ['a fractional total_tokens', [{ field: 'total_tokens', op: 'eq', value: 1.5 }]],
    ['a negative errors', [{ field: 'errors', op: 'gte', value: -1 }]],
    ['a negative duration_ms', [{ field: 'duration_ms', op: 'lt', value: -1 }]],
    ['an unknown field', [{ field: 'latency', op: 'gt', value: 1 }]],
    ['an extra key in a predicate', [{ field: 'trace_id', op: 'eq', value: 'tr-1', key: 'x' }]],
    ['a missing value', [{ field: 'trace_id', op: 'eq' }]],
    ['a missing op', [{ field: 'cost', value: 1 }]],
    ['a metadata predicate without key', [{ field: 'metadata', op: 'eq', value: 'v' }]],
    ['a metadata key of 257 chars', [{ field: 'metadata', op: 'eq', key: s(257, 'k'), value: 'v' }]],
    ['an empty metadata key', [{ field: 'metadata', op: 'eq', key: '', value: 'v' }]],
    ['cost with contains', [{ field: 'cost', op: 'contains', value: 1 }]],
    ['trace_id with in', [{ field: 'trace_id', op: 'in', value: ['tr-1'] }]],
    ['signal_id with contains', [{ field: 'signal_id', op: 'contains', value: 'sig' }]],
    ['model_name with eq', [{ field: 'model_name', op: 'eq', value: 'gpt-4o' }]],
    ['metadata with gt', [{ field: 'metadata', op: 'gt', key: 'k', value: 'v' }]],
    ['a predicate that is not an object', ['trace_id']],
    ['one bad predicate among good ones', [costGte0, { field: 'cost', op: 'gte', value: -1 }]],
    ['filters that are not JSON', '[{field: cost}'],
    ['filters that are a JSON object, not an array', { field: 'cost', op: 'gt', value: 0 }],
    ['filters that are a JSON string', '"cost"'],
  ];

  it.each(refused)('refuses %s with 400 {detail: string}', async (_label, filters) => {
    expect400(await withFilters(filters));
  });
});

describe('list traces: reads with each credential', () => {
  let owner: SignedUp;
  let project: { id: string };
  let key: string;
  beforeAll(async () => {
    const made = await projectWithTraces();
    owner = made.owner;
    project = made.project;
    key = made.key.key;
  });

  it('with a user credential and no project_id answers 400 with the spec detail', async () => {
    const res = await list(owner.token);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'project_id query parameter is required for user credentials' });
  });

  it('with a user credential and project_id answers what the API key does', async () => {
    const byKey = await list(key);
    expect(byKey.statusCode).toBe(200);
    expect(ids(byKey)).toEqual(['tr-2', 'tr-1', 'tr-0']);
    const bySession = await list(owner.token, { project_id: project.id });
    expect(bySession.statusCode).toBe(200);
    expect(bySession.json()).toEqual(byKey.json());
    const filters = JSON.stringify([{ field: 'cost', op: 'gte', value: 1 }]);
    const filteredByKey = await list(key, { filters });
    expect(ids(filteredByKey)).toEqual(['tr-2', 'tr-1']);
    expect((await list(owner.token, { project_id: project.id, filters })).json()).toEqual(filteredByKey.json());
  });

  it('with a CLI access token and project_id answers what the API key does', async () => {
    const minted = await call(h().web, { method: 'POST', url: '/api/cli/token', token: owner.token });
    expect(minted.statusCode).toBe(200);
    const res = await list(minted.json().accessToken, { project_id: project.id });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual((await list(key)).json());
  });

  it("with an API key and its own project's id answers 200", async () => {
    const res = await list(key, { project_id: project.id });
    expect(res.statusCode).toBe(200);
    expect(res.json().meta.total).toBe(3);
  });

  it('with an API key and a different project_id answers 400, even a project its owner can read', async () => {
    const other = await createProject(h(), owner.token, owner.workspace.id);
    expect400(await list(key, { project_id: other.id }));
  });

  it("keeps each API key to its own project's traces", async () => {
    const other = await createProject(h(), owner.token, owner.workspace.id);
    const otherKey = await createApiKey(h(), owner.token, other.id);
    expect((await list(otherKey.key)).json()).toEqual({ data: [], meta: { page: 0, limit: 50, total: 0 } });
  });

  it("with another user's project_id answers 403", async () => {
    const stranger = await signUp(h(), 'stranger');
    const res = await list(stranger.token, { project_id: project.id });
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
  });

  it('without Authorization answers 401', async () => {
    const res = await list(undefined);
    expect(res.statusCode).toBe(401);
    expect(typeof res.json().detail).toBe('string');
  });

  it('with an unknown credential answers 401', async () => {
    const res = await list('sl_00000000-0000-4000-8000-000000000000');
    expect(res.statusCode).toBe(401);
  });
});
