import { describe, expect, it } from 'vitest';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  signUp,
  useHarness,
  type Harness,
  type SignedUp,
} from '../support/harness.js';
import { PRICES_AS_OF, DEFAULT_PRICES } from '../../src/model-prices/default-prices.js';
import { MAX_OVERRIDES_PER_PROJECT } from '../../src/model-prices/service.js';
import { PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';
import { iso } from '../support/ingest.js';

const h = useHarness();

type Res = Awaited<ReturnType<typeof call>>;
const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

const list = (token: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/model-prices`, token, query });
const post = (token: string, payload: Record<string, unknown>) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/model-prices`, token, payload });
const patch = (token: string, id: string, payload: Record<string, unknown>) =>
  call(h().api, { method: 'PATCH', url: `${PUBLIC}/model-prices/${id}`, token, payload });
const remove = (token: string, id: string, query: Record<string, string>) =>
  call(h().api, { method: 'DELETE', url: `${PUBLIC}/model-prices/${id}`, token, query });

async function memberWithRole(harness: Harness, admin: SignedUp, workspaceId: string, role: 'VIEWER' | 'MEMBER') {
  const user = await signUp(harness, role.toLowerCase());
  const res = await call(harness.api, {
    method: 'POST',
    url: `${PUBLIC}/workspaces/${workspaceId}/members`,
    token: admin.token,
    payload: { email: user.user.email, role },
  });
  expect(res.statusCode).toBe(201);
  return user;
}

function expectValidationAt(res: Res, loc: (string | number)[]) {
  expect(res.statusCode, res.body).toBe(422);
  const detail = res.json().detail as { loc: unknown[] }[];
  expect(
    detail.some((d) => JSON.stringify(d.loc) === JSON.stringify(loc)),
    res.body,
  ).toBe(true);
}

/** Ingests one span with an API key and answers the span as GET /traces/{id} reads it back. */
async function ingestAndRead(key: string, span: Record<string, unknown>) {
  const traceId = `t-${Math.random().toString(16).slice(2)}`;
  const t0 = Date.now() - 60_000;
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/traces`,
    token: key,
    payload: {
      spans: [
        {
          trace_id: traceId,
          span_id: 's1',
          name: 'chat',
          kind: 'llm',
          start_time: iso(t0),
          end_time: iso(t0 + 500),
          ...span,
        },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ accepted: 1, rejected: [] });
  const read = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key });
  expect(read.statusCode, read.body).toBe(200);
  return { trace: read.json(), span: read.json().spans[0] };
}

describe('GET /model-prices', () => {
  it('lists the default table with its date and sources, for an API key and for a member with project_id', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const byKey = await list(key.key);
    expect(byKey.statusCode, byKey.body).toBe(200);
    const body = byKey.json();
    expect(body.as_of).toBe(PRICES_AS_OF);
    expect(body.sources.map((s: { provider: string }) => s.provider)).toEqual(
      expect.arrayContaining(['openai', 'anthropic', 'google', 'mistral', 'bedrock']),
    );
    expect(body.data).toHaveLength(DEFAULT_PRICES.length);
    expect(body.data.find((p: { model_pattern: string }) => p.model_pattern === 'gpt-4o')).toEqual({
      id: null,
      model_pattern: 'gpt-4o',
      provider: 'openai',
      input_per_million: 2.5,
      output_per_million: 10,
      cached_input_per_million: 1.25,
      cache_write_per_million: null,
      reasoning_per_million: null,
      currency: 'USD',
      source: 'default',
      created_at: null,
      updated_at: null,
    });
    const byUser = await list(owner.token, { project_id: project.id });
    expect(byUser.statusCode).toBe(200);
    expect(byUser.json()).toEqual(body);
    expect((await list(owner.token)).json()).toEqual({ detail: PROJECT_ID_REQUIRED_DETAIL });
    expect(body).not.toHaveProperty('match');
    // `model` names the price a span of that model gets.
    const bedrock = (await list(key.key, { model: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0' })).json();
    expect(bedrock.match).toMatchObject({
      id: null,
      model_pattern: 'claude-3-5-sonnet',
      provider: 'anthropic',
      source: 'default',
      input_per_million: 3,
    });
    expect((await list(key.key, { model: 'in-house-llm' })).json().match).toBeNull();
    expectValidationAt(await list(key.key, { model: '' }), ['query', 'model']);
    const stranger = await signUp(h(), 'stranger');
    expect((await list(stranger.token, { project_id: project.id })).statusCode).toBe(403);
  });
});

describe('writing overrides', () => {
  it('creates, edits and deletes an override; the list shows it first, as the project’s', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const created = await post(owner.token, {
      project_id: project.id,
      model_pattern: 'gpt-4o',
      input_per_million: 2,
      output_per_million: 8,
      cached_input_per_million: 1,
    });
    expect(created.statusCode, created.body).toBe(201);
    const item = created.json();
    expect(item).toMatchObject({
      model_pattern: 'gpt-4o',
      provider: null,
      input_per_million: 2,
      output_per_million: 8,
      cached_input_per_million: 1,
      cache_write_per_million: null,
      reasoning_per_million: null,
      currency: 'USD',
      source: 'project',
    });
    expect(item.id).toMatch(/^[0-9a-f-]{36}$/);

    const listed = (await list(key.key)).json();
    expect(listed.data[0]).toEqual(item);
    expect((await list(key.key, { model: 'openai/gpt-4o-2024-11-20' })).json().match).toEqual(item);
    expect((await list(key.key, { model: 'gpt-4o-mini' })).json().match).toMatchObject({
      source: 'default',
      model_pattern: 'gpt-4o-mini',
    });
    expect(listed.data).toHaveLength(DEFAULT_PRICES.length + 1);

    const edited = await patch(owner.token, item.id, {
      project_id: project.id,
      output_per_million: 9,
      cached_input_per_million: null,
      reasoning_per_million: 12,
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json()).toMatchObject({
      id: item.id,
      model_pattern: 'gpt-4o',
      input_per_million: 2,
      output_per_million: 9,
      cached_input_per_million: null,
      reasoning_per_million: 12,
    });
    expect(Date.parse(edited.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(item.updated_at));

    const gone = await remove(owner.token, item.id, { project_id: project.id });
    expect(gone.statusCode).toBe(200);
    expect(gone.json()).toEqual({ deleted: true, id: item.id });
    expect((await list(key.key)).json().data).toHaveLength(DEFAULT_PRICES.length);
    expect((await remove(owner.token, item.id, { project_id: project.id })).statusCode).toBe(404);
  });

  it('answers 409 for a second pattern matching the same models, 404 for unknown or another project’s ids', async () => {
    const { owner, project } = await projectWithKey(h());
    const other = await createProject(h(), owner.token, owner.workspace.id);
    const first = (
      await post(owner.token, {
        project_id: project.id,
        model_pattern: 'claude-3-5-sonnet',
        input_per_million: 2,
        output_per_million: 10,
      })
    ).json();
    for (const twin of ['Claude-3.5-Sonnet', 'anthropic/claude-3-5-sonnet', 'claude-3-5-sonnet']) {
      const res = await post(owner.token, {
        project_id: project.id,
        model_pattern: twin,
        input_per_million: 1,
        output_per_million: 1,
      });
      expect(res.statusCode, twin).toBe(409);
      expect(res.json().detail).toContain("'claude-3-5-sonnet'");
    }
    // The same pattern in another project is another project's business.
    expect(
      (
        await post(owner.token, {
          project_id: other.id,
          model_pattern: 'claude-3-5-sonnet',
          input_per_million: 1,
          output_per_million: 1,
        })
      ).statusCode,
    ).toBe(201);
    const second = (
      await post(owner.token, {
        project_id: project.id,
        model_pattern: 'claude-3-5-haiku',
        input_per_million: 1,
        output_per_million: 1,
      })
    ).json();
    expect(
      (await patch(owner.token, second.id, { project_id: project.id, model_pattern: 'CLAUDE-3-5-SONNET' })).statusCode,
    ).toBe(409);
    // Renaming an override to its own canonical spelling is no conflict.
    expect(
      (await patch(owner.token, first.id, { project_id: project.id, model_pattern: 'claude-3.5-sonnet' })).statusCode,
    ).toBe(200);

    expect((await patch(owner.token, UNKNOWN_ID, { project_id: project.id, input_per_million: 1 })).statusCode).toBe(
      404,
    );
    expect((await patch(owner.token, 'not-a-uuid', { project_id: project.id, input_per_million: 1 })).statusCode).toBe(
      404,
    );
    expect((await patch(owner.token, first.id, { project_id: other.id, input_per_million: 1 })).statusCode).toBe(404);
    expect((await remove(owner.token, first.id, { project_id: other.id })).statusCode).toBe(404);
  });

  it('validates at the edge (422) and refuses API keys and viewers (403)', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const base = { project_id: project.id, model_pattern: 'm', input_per_million: 1, output_per_million: 1 };
    expectValidationAt(await post(owner.token, { ...base, input_per_million: -1 }), ['body', 'input_per_million']);
    expectValidationAt(await post(owner.token, { ...base, output_per_million: undefined }), [
      'body',
      'output_per_million',
    ]);
    expectValidationAt(await post(owner.token, { ...base, cached_input_per_million: 'cheap' }), [
      'body',
      'cached_input_per_million',
    ]);
    expectValidationAt(await post(owner.token, { ...base, model_pattern: '   ' }), ['body', 'model_pattern']);
    expectValidationAt(await post(owner.token, { ...base, model_pattern: 'openai/' }), ['body', 'model_pattern']);
    expectValidationAt(await post(owner.token, { ...base, currency: 'EUR' }), ['body', 'currency']);
    expectValidationAt(await post(owner.token, { ...base, project_id: undefined }), ['body', 'project_id']);
    expectValidationAt(await patch(owner.token, UNKNOWN_ID, { project_id: project.id, input_per_million: null }), [
      'body',
      'input_per_million',
    ]);
    expectValidationAt(await remove(owner.token, UNKNOWN_ID, {}), ['query', 'project_id']);
    expect((await post(key.key, base)).statusCode).toBe(403);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expect((await post(viewer.token, base)).statusCode).toBe(403);
    expect((await list(viewer.token, { project_id: project.id })).statusCode).toBe(200);
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    expect((await post(member.token, { ...base, currency: 'USD' })).statusCode).toBe(201);
    expect((await post(owner.token, { ...base, project_id: UNKNOWN_ID })).statusCode).toBe(404);
    // Nothing half-written: only the member's override exists.
    const { rows } = await h().ctx.pg.pool.query('SELECT model_pattern FROM model_prices WHERE project_id = $1', [
      project.id,
    ]);
    expect(rows).toEqual([{ model_pattern: 'm' }]);
  });

  it(`holds at most ${MAX_OVERRIDES_PER_PROJECT} overrides per project (409 past it)`, async () => {
    const { owner, project } = await projectWithKey(h());
    // Filled in SQL: the bound is what is tested, not 500 requests.
    await h().ctx.pg.pool.query(
      `INSERT INTO model_prices (id, project_id, model_pattern, input_per_million, output_per_million)
       SELECT gen_random_uuid(), $1, 'model-' || n, 1, 1 FROM generate_series(1, $2::int) AS n`,
      [project.id, MAX_OVERRIDES_PER_PROJECT],
    );
    const res = await post(owner.token, {
      project_id: project.id,
      model_pattern: 'one-more',
      input_per_million: 1,
      output_per_million: 1,
    });
    expect(res.statusCode).toBe(409);
  });
});

describe('cost at ingest', () => {
  it('prices a gpt-4o span from the default table, a project override once written, and the default again once deleted', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const usage = { model_name: 'gpt-4o-2024-08-06', input_tokens: 1_000_000, output_tokens: 1_000_000 };
    const first = await ingestAndRead(key.key, usage);
    expect(first.span.cost).toBeCloseTo(12.5, 9);
    expect(first.trace.total_cost).toBeCloseTo(12.5, 9);

    const override = (
      await post(owner.token, {
        project_id: project.id,
        model_pattern: 'gpt-4o',
        input_per_million: 1,
        output_per_million: 2,
      })
    ).json();
    // Written through this process: the next span is priced with it at once.
    expect((await ingestAndRead(key.key, usage)).span.cost).toBeCloseTo(3, 9);
    // Cached input at the input price (the override has none), reasoning at the output price:
    // 600k × 1 + 400k × 1 + 200k × 2 + 800k × 2 per million = 3.0
    expect(
      (await ingestAndRead(key.key, { ...usage, cache_read_tokens: 400_000, reasoning_tokens: 800_000 })).span.cost,
    ).toBeCloseTo(3, 9);
    // A sent cost wins, a zero one too.
    expect((await ingestAndRead(key.key, { ...usage, cost: 0.5 })).span.cost).toBe(0.5);
    expect((await ingestAndRead(key.key, { ...usage, cost: 0 })).span.cost).toBe(0);
    expect((await remove(owner.token, override.id, { project_id: project.id })).statusCode).toBe(200);
    expect((await ingestAndRead(key.key, usage)).span.cost).toBeCloseTo(12.5, 9);
    // Unknown models and spans without tokens stay at 0.
    expect((await ingestAndRead(key.key, { model_name: 'in-house-llm', input_tokens: 10 })).span.cost).toBe(0);
    expect((await ingestAndRead(key.key, { model_name: 'gpt-4o' })).span.cost).toBe(0);
    // Spans stored before stay as they were priced.
    const again = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces/${first.trace.trace_id}`,
      token: key.key,
    });
    expect(again.json().spans[0].cost).toBeCloseTo(12.5, 9);
  });

  it('prices OTLP GenAI spans the same way', async () => {
    const { key } = await projectWithKey(h());
    const traceId = '5b8efff798038103d269b633813fc60c';
    const nowNs = BigInt(Date.now() - 60_000) * 1_000_000n;
    const attr = (k: string, v: string | number) => ({
      key: k,
      value: typeof v === 'string' ? { stringValue: v } : { intValue: v },
    });
    const body = {
      resourceSpans: [
        {
          resource: { attributes: [attr('service.name', 'bot')] },
          scopeSpans: [
            {
              scope: { name: 'test' },
              spans: [
                {
                  traceId,
                  spanId: 'eee19b7ec3c1b174',
                  name: 'chat claude',
                  kind: 3,
                  startTimeUnixNano: String(nowNs),
                  endTimeUnixNano: String(nowNs + 500_000_000n),
                  attributes: [
                    attr('gen_ai.operation.name', 'chat'),
                    attr('gen_ai.request.model', 'claude-3-5-haiku-20241022'),
                    attr('gen_ai.usage.input_tokens', 1_000_000),
                    attr('gen_ai.usage.output_tokens', 100_000),
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/otel/v1/traces`, token: key.key, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    const read = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key.key });
    expect(read.statusCode, read.body).toBe(200);
    // 1M × 0.80 + 100k × 4.00 per million = 1.20
    expect(read.json().spans[0].cost).toBeCloseTo(1.2, 9);
  });

  it('a hard-deleted project takes its overrides along (workspace deletion cascades)', async () => {
    const owner = await signUp(h(), 'leaver');
    const ws = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: owner.token,
      payload: { name: `ws-${Date.now()}` },
    });
    expect(ws.statusCode, ws.body).toBe(201);
    const workspace = ws.json();
    const project = await createProject(h(), owner.token, workspace.id);
    await createApiKey(h(), owner.token, project.id);
    expect(
      (
        await post(owner.token, {
          project_id: project.id,
          model_pattern: 'gpt-4o',
          input_per_million: 1,
          output_per_million: 1,
        })
      ).statusCode,
    ).toBe(201);
    const res = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/workspaces/${workspace.id}`,
      token: owner.token,
      query: { name: workspace.name, reason: 'done here' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM model_prices WHERE project_id = $1', [
      project.id,
    ]);
    expect(rows[0].n).toBe(0);
  });
});
