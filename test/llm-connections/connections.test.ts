import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';

const h = useHarness({ LLM_CONNECTION_ALLOW_PRIVATE: 'true', LLM_CONNECTION_TIMEOUT_MS: '1000' });

let judge: FakeJudge;
let owner: SignedUp;
let projectId: string;
beforeAll(async () => {
  judge = await startFakeJudge();
  owner = await signUp(h(), 'conn');
  projectId = (await createProject(h(), owner.token, owner.workspace.id)).id;
});
afterAll(() => judge?.close());

const SECRET = 'sk-test-0123456789abcdefWXYZ';

function create(token: string, body: Record<string, unknown>) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/llm-connections`, token, payload: body });
}

async function connection(extra: Record<string, unknown> = {}) {
  const res = await create(owner.token, {
    project_id: projectId,
    name: `judge-${Math.random().toString(36).slice(2, 8)}`,
    provider: 'openai_compatible',
    base_url: judge.baseUrl,
    api_key: SECRET,
    default_model: 'fake-model',
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Record<string, unknown> & { id: string };
}

function test(id: string, body: Record<string, unknown> = {}) {
  return call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/llm-connections/${id}/test`,
    token: owner.token,
    payload: { project_id: projectId, ...body },
  });
}

describe('LLM connections', () => {
  it('store the key sealed and answer only its last 4 characters', async () => {
    const made = await connection({ extra_headers: { 'X-Org': 'org-secret-value' } });
    expect(made).toMatchObject({
      provider: 'openai_compatible',
      base_url: judge.baseUrl,
      key_preview: 'WXYZ',
      default_model: 'fake-model',
      extra_header_names: ['X-Org'],
    });
    expect(JSON.stringify(made)).not.toContain('0123456789');
    expect(JSON.stringify(made)).not.toContain('org-secret-value');
    const { rows } = await h().ctx.pg.pool.query<{ api_key_sealed: string; extra_headers_sealed: string }>(
      'SELECT api_key_sealed, extra_headers_sealed FROM llm_connections WHERE id = $1',
      [made.id],
    );
    expect(rows[0]!.api_key_sealed).toMatch(/^sb1\./);
    expect(rows[0]!.api_key_sealed).not.toContain('0123456789');
    expect(rows[0]!.extra_headers_sealed).not.toContain('org-secret-value');
    expect(h().ctx.secrets.open(rows[0]!.api_key_sealed)).toBe(SECRET);

    const read = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(made);
    const list = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/llm-connections`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((c: { id: string }) => c.id)).toContain(made.id);
    expect(list.body).not.toContain('0123456789');
  });

  it('never echo the key in a validation error', async () => {
    const res = await create(owner.token, {
      project_id: projectId,
      name: 'x',
      provider: 'nope',
      api_key: SECRET,
      extra_headers: { 'bad name': SECRET },
    });
    expect(res.statusCode).toBe(422);
    expect(res.body).not.toContain('0123456789');
  });

  it('validate the create: names unique (409), openai_compatible needs base_url, bounded headers', async () => {
    const made = await connection();
    const dup = await create(owner.token, {
      project_id: projectId,
      name: made.name,
      provider: 'openai',
      api_key: 'sk-other-key',
    });
    expectDetail(dup, 409);
    expectValidationAt(
      await create(owner.token, { project_id: projectId, name: 'c1', provider: 'openai_compatible', api_key: 'k' }),
      ['body', 'base_url'],
    );
    expectValidationAt(
      await create(owner.token, {
        project_id: projectId,
        name: 'c2',
        provider: 'openai',
        api_key: 'sk-abc',
        base_url: 'ftp://example.com',
      }),
      ['body', 'base_url'],
    );
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, 'v']));
    expect(
      (
        await create(owner.token, {
          project_id: projectId,
          name: 'c3',
          provider: 'openai',
          api_key: 'k',
          extra_headers: many,
        })
      ).statusCode,
    ).toBe(422);
  });

  it('edit: a new key is sealed again and previewed; other fields keep', async () => {
    const made = await connection();
    const res = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: owner.token,
      payload: { project_id: projectId, api_key: 'sk-rotated-key-9876', default_model: null },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ key_preview: '9876', default_model: null, base_url: judge.baseUrl });
  });

  it('test: 200 ok with the model and latency, sending the key to the provider', async () => {
    const made = await connection();
    judge.requests.length = 0;
    const res = await test(made.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true, model: 'fake-model', latency_ms: expect.any(Number) });
    expect(judge.requests).toHaveLength(1);
    expect(judge.requests[0]!.path).toBe('/v1/chat/completions');
    expect(judge.requests[0]!.headers.authorization).toBe(`Bearer ${SECRET}`);
    expect(judge.requests[0]!.body).toMatchObject({ model: 'fake-model', max_tokens: 1 });
  });

  it('test: Anthropic shape with x-api-key', async () => {
    const made = await connection({ provider: 'anthropic', default_model: 'claude-fake' });
    judge.requests.length = 0;
    const res = await test(made.id);
    expect(res.json()).toMatchObject({ ok: true, model: 'claude-fake' });
    expect(judge.requests[0]!.path).toBe('/v1/messages');
    expect(judge.requests[0]!.headers['x-api-key']).toBe(SECRET);
    expect(judge.requests[0]!.headers['anthropic-version']).toBe('2023-06-01');
  });

  it("test: a provider's failure is its status and a fixed sentence, never its body", async () => {
    const made = await connection();
    const cases: [Parameters<FakeJudge['script']>[0], string][] = [
      [{ kind: 'status', status: 401 }, 'HTTP 401: the provider refused the API key'],
      [
        { kind: 'status', status: 404, code: 'model_not_found' },
        'HTTP 404: the provider does not know this model or endpoint',
      ],
      [{ kind: 'status', status: 429 }, 'HTTP 429: the provider is rate limiting this key'],
      [
        { kind: 'status', status: 429, code: 'insufficient_quota' },
        'HTTP 429: the provider account has no credit or no billing set up',
      ],
      [{ kind: 'status', status: 500 }, 'HTTP 500: the provider had an internal error'],
    ];
    for (const [reply, error] of cases) {
      judge.script(reply);
      const res = await test(made.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: false, error });
      expect(res.body).not.toContain('secret provider detail');
    }
  });

  it('test: a slow provider is a timeout sentence', async () => {
    const made = await connection();
    judge.script({ kind: 'hang' });
    const res = await test(made.id);
    judge.release();
    expect(res.json()).toEqual({ ok: false, error: 'the LLM provider host gave no answer within 1000 ms' });
  });

  it('roles and credentials: VIEWER reads, only MEMBER+ writes, API keys are refused', async () => {
    const made = await connection();
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const read = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: viewer.token,
      query: { project_id: projectId },
    });
    expect(read.statusCode).toBe(200);
    expectDetail(
      await create(viewer.token, { project_id: projectId, name: 'v', provider: 'openai', api_key: 'k' }),
      403,
    );
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: viewer.token,
      query: { project_id: projectId },
    });
    expectDetail(del, 403);
    const key = await createApiKey(h(), owner.token, projectId);
    const byKey = await call(h().api, { method: 'GET', url: `${PUBLIC}/llm-connections`, token: key.key });
    expectDetail(byKey, 403);
  });

  it("another project's connection is not found from this one", async () => {
    const made = await connection();
    const other = await signUp(h(), 'other');
    const otherProject = await createProject(h(), other.token, other.workspace.id);
    for (const [method, url] of [
      ['GET', `/llm-connections/${made.id}`],
      ['DELETE', `/llm-connections/${made.id}`],
      ['POST', `/llm-connections/${made.id}/test`],
    ] as const) {
      const res = await call(h().api, {
        method,
        url: `${PUBLIC}${url}`,
        token: other.token,
        query: { project_id: otherProject.id },
        ...(method === 'POST' ? { payload: {} } : {}),
      });
      expectDetail(res, 404, 'LLM connection not found');
    }
    // And from the owner's side with another project's id: still 403, not the connection.
    const foreign = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: other.token,
      query: { project_id: projectId },
    });
    expectDetail(foreign, 403);
  });

  it('delete answers deleted; the id is then not found', async () => {
    const made = await connection();
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/llm-connections/${made.id}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ deleted: true, id: made.id });
    const again = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/llm-connections/${UNKNOWN_ID}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expectDetail(again, 404);
  });
});
