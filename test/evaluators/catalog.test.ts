import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';

const h = useHarness();

let owner: SignedUp;
let projectId: string;
let connectionId: string;
beforeAll(async () => {
  owner = await signUp(h(), 'evals');
  projectId = (await createProject(h(), owner.token, owner.workspace.id)).id;
  connectionId = await connectionIn(owner.token, projectId);
});

async function connectionIn(token: string, project: string): Promise<string> {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/llm-connections`,
    token,
    payload: {
      project_id: project,
      name: 'openai',
      provider: 'openai',
      api_key: 'sk-test-abcdefgh1234',
      default_model: 'gpt-4o-mini',
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

const judgeScorer = (connection: string, over: Record<string, unknown> = {}) => ({
  type: 'llm_judge',
  connection_id: connection,
  prompt: 'Question: {{Q}}\nAnswer: {{A}}\nIs the answer helpful?',
  variables: { Q: 'input.messages[-1].content', A: 'output' },
  output: { data_type: 'numeric', min_value: 0, max_value: 1 },
  ...over,
});

const body = (over: Record<string, unknown> = {}) => ({
  project_id: projectId,
  name: `helpfulness-${crypto.randomBytes(3).toString('hex')}`,
  target: 'trace',
  filters: [{ field: 'environment', op: 'in', value: ['production'] }],
  sampling_rate: 0.5,
  scorer: judgeScorer(connectionId),
  score_name: 'helpfulness',
  ...over,
});

function create(payload: Record<string, unknown>, token = owner.token) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/evaluators`, token, payload });
}
function patch(id: string, payload: Record<string, unknown>, token = owner.token) {
  return call(h().api, {
    method: 'PATCH',
    url: `${PUBLIC}/evaluators/${id}`,
    token,
    payload: { project_id: projectId, ...payload },
  });
}
function get(path: string, token = owner.token, query: Record<string, string> = { project_id: projectId }) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}${path}`, token, query });
}

const ZERO = { executions: 0, completed: 0, errors: 0, skipped: 0, input_tokens: 0, output_tokens: 0, cost: 0 };

describe('evaluators', () => {
  it('create with defaults, and read back with zero stats', async () => {
    const res = await create(body());
    expect(res.statusCode, res.body).toBe(201);
    const made = res.json();
    expect(made).toMatchObject({
      project_id: projectId,
      target: 'trace',
      span_filter: null,
      sampling_rate: 0.5,
      delay_seconds: 30,
      enabled: true,
      paused_reason: null,
      version: 1,
      score_name: 'helpfulness',
      score_config_id: null,
      stats: { last_24h: ZERO, all_time: ZERO },
    });
    expect(made.scorer).toEqual(judgeScorer(connectionId));
    expect(made.filters).toEqual([{ field: 'environment', op: 'in', value: ['production'] }]);
    const read = await get(`/evaluators/${made.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(made);
    const list = await get('/evaluators');
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(made.id);
  });

  it('a check scorer and a span target with span_filter', async () => {
    const res = await create(
      body({
        target: 'span',
        span_filter: { kind: ['llm'] },
        scorer: { type: 'check', check: 'regex', params: { pattern: '^\\{', field: 'output' } },
        score_name: 'json-ish',
        delay_seconds: 0,
      }),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      target: 'span',
      span_filter: { kind: ['llm'] },
      score_config_id: null,
      delay_seconds: 0,
    });
  });

  it('refuse what the spec refuses, at the field', async () => {
    expectValidationAt(await create(body({ sampling_rate: 0 })), ['body', 'sampling_rate']);
    expectValidationAt(await create(body({ delay_seconds: 90_000 })), ['body', 'delay_seconds']);
    expectValidationAt(await create(body({ span_filter: { kind: ['llm'] } })), ['body', 'span_filter']);
    expectValidationAt(await create(body({ name: 'x'.repeat(129) })), ['body', 'name']);
    expectValidationAt(
      await create(
        body({ filters: Array.from({ length: 21 }, () => ({ field: 'model_name', op: 'in', value: ['m'] })) }),
      ),
      ['body', 'filters'],
    );
    expectValidationAt(
      await create(body({ scorer: { type: 'check', check: 'regex', params: { pattern: '(a)\\1' } } })),
      ['body', 'scorer', 'params', 'pattern'],
    );
    expectValidationAt(await create(body({ scorer: judgeScorer(connectionId, { prompt: 'uses {{MISSING}}' }) })), [
      'body',
      'scorer',
      'prompt',
    ]);
    expectValidationAt(await create(body({ scorer: judgeScorer(UNKNOWN_ID) })), ['body', 'scorer', 'connection_id']);
  });

  it('names are unique in a project (409)', async () => {
    const first = await create(body());
    expect(first.statusCode).toBe(201);
    expectDetail(
      await create(body({ name: first.json().name })),
      409,
      'an evaluator of this project already has that name',
    );
    const other = await create(body());
    expectDetail(await patch(other.json().id, { name: first.json().name }), 409);
  });

  it('a change of the scorer makes a new version; other edits do not', async () => {
    const made = (await create(body())).json();
    const renamed = await patch(made.id, { sampling_rate: 1, delay_seconds: 60, name: `${made.name}-x` });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ version: 1, sampling_rate: 1, delay_seconds: 60 });
    // The same scorer sent again (keys in another order) is not a change.
    const same = await patch(made.id, {
      scorer: { ...judgeScorer(connectionId), output: { max_value: 1, min_value: 0, data_type: 'numeric' } },
    });
    expect(same.json().version).toBe(1);
    const prompt = await patch(made.id, { scorer: judgeScorer(connectionId, { prompt: 'Rate {{A}}' }) });
    expect(prompt.json().version).toBe(2);
    const output = await patch(made.id, {
      scorer: judgeScorer(connectionId, { prompt: 'Rate {{A}}', output: { data_type: 'boolean' } }),
    });
    expect(output.json()).toMatchObject({ version: 3, scorer: { output: { data_type: 'boolean' } } });
  });

  it('disabling stops pending executions; enabling clears paused_reason', async () => {
    const made = (await create(body())).json();
    const pool = h().ctx.pg.pool;
    await pool.query(
      `INSERT INTO evaluator_executions (execution_id, evaluator_id, project_id, trace_id, status)
       VALUES ($1, $2, $3, 't-pending', 'pending'), ($4, $2, $3, 't-done', 'completed')`,
      [crypto.randomUUID(), made.id, projectId, crypto.randomUUID()],
    );
    await pool.query("UPDATE evaluators SET enabled = false, paused_reason = 'x' WHERE id = $1", [made.id]);
    await pool.query('UPDATE evaluators SET enabled = true WHERE id = $1', [made.id]);
    const off = await patch(made.id, { enabled: false });
    expect(off.json()).toMatchObject({ enabled: false, paused_reason: 'x' });
    const skipped = await get(`/evaluators/${made.id}/executions`, owner.token, {
      project_id: projectId,
      status: 'skipped',
    });
    expect(skipped.statusCode).toBe(200);
    expect(skipped.json().data).toEqual([
      expect.objectContaining({
        trace_id: 't-pending',
        status: 'skipped',
        error: 'the evaluator was disabled before this execution ran',
      }),
    ]);
    const on = await patch(made.id, { enabled: true });
    expect(on.json()).toMatchObject({ enabled: true, paused_reason: null });
  });

  it('stats count executions of the last 24 h and all time', async () => {
    const made = (await create(body())).json();
    const pool = h().ctx.pg.pool;
    const row = (trace: string, status: string, hoursAgo: number, tokens: [number, number], cost: number) =>
      pool.query(
        `INSERT INTO evaluator_executions (execution_id, evaluator_id, project_id, trace_id, status, input_tokens, output_tokens, cost, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now() - make_interval(hours => $9))`,
        [crypto.randomUUID(), made.id, projectId, trace, status, tokens[0], tokens[1], cost, hoursAgo],
      );
    await row('a', 'completed', 1, [100, 20], 0.5);
    await row('b', 'error', 2, [0, 0], 0);
    await row('c', 'completed', 48, [300, 40], 1.25);
    await row('d', 'skipped', 30, [0, 0], 0);
    const res = await get(`/evaluators/${made.id}`);
    expect(res.json().stats).toEqual({
      last_24h: { executions: 2, completed: 1, errors: 1, skipped: 0, input_tokens: 100, output_tokens: 20, cost: 0.5 },
      all_time: {
        executions: 4,
        completed: 2,
        errors: 1,
        skipped: 1,
        input_tokens: 400,
        output_tokens: 60,
        cost: 1.75,
      },
    });
    const all = await get(`/evaluators/${made.id}/executions`);
    expect(all.json().meta.total).toBe(4);
    expect(all.json().data[0]).toMatchObject({ trace_id: 'a', span_id: null, attempts: 0, finished_at: null });
  });

  it('roles: VIEWER reads, MEMBER+ writes; an API key of the project writes too', async () => {
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expect((await get('/evaluators', viewer.token)).statusCode).toBe(200);
    expectDetail(await create(body(), viewer.token), 403);
    const key = await createApiKey(h(), owner.token, projectId);
    const { project_id: _ignored, ...withoutProject } = body();
    const byKey = await create(withoutProject, key.key);
    expect(byKey.statusCode, byKey.body).toBe(201);
  });

  it("another project never reads, edits or uses this project's evaluators and connections", async () => {
    const made = (await create(body())).json();
    const other = await signUp(h(), 'other');
    const otherProject = (await createProject(h(), other.token, other.workspace.id)).id;
    const q = { project_id: otherProject };
    expectDetail(await get(`/evaluators/${made.id}`, other.token, q), 404, 'evaluator not found');
    expectDetail(await get(`/evaluators/${made.id}/executions`, other.token, q), 404);
    expect((await get('/evaluators', other.token, q)).json().data).toEqual([]);
    const edit = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/evaluators/${made.id}`,
      token: other.token,
      payload: { project_id: otherProject, enabled: false },
    });
    expectDetail(edit, 404);
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/evaluators/${made.id}`,
      token: other.token,
      query: q,
    });
    expectDetail(del, 404);
    // B's evaluator can't name A's connection: it is not one of B's.
    const borrowed = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/evaluators`,
      token: other.token,
      payload: { ...body({ project_id: otherProject }) },
    });
    expectValidationAt(borrowed, ['body', 'scorer', 'connection_id']);
    // Nor switch an evaluator of its own to it.
    const ownConnection = await connectionIn(other.token, otherProject);
    const own = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/evaluators`,
      token: other.token,
      payload: body({ project_id: otherProject, scorer: judgeScorer(ownConnection) }),
    });
    expect(own.statusCode, own.body).toBe(201);
    const switched = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/evaluators/${own.json().id}`,
      token: other.token,
      payload: { project_id: otherProject, scorer: judgeScorer(connectionId) },
    });
    expectValidationAt(switched, ['body', 'scorer', 'connection_id']);
    // A's evaluator is untouched.
    expect((await get(`/evaluators/${made.id}`)).json()).toMatchObject({ enabled: true, version: 1 });
  });

  it('delete: gone with its executions; a connection in use cannot be deleted (409)', async () => {
    const made = (await create(body())).json();
    const inUse = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/llm-connections/${connectionId}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expectDetail(inUse, 409);
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/evaluators/${made.id}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expect(del.json()).toEqual({ deleted: true, id: made.id });
    expectDetail(await get(`/evaluators/${made.id}`), 404);
  });
});
