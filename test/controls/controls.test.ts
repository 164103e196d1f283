import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * Producer controls over HTTP (quality.md §6; docs/producer-controls.md): masking and quota settings
 * (user credential, reads VIEWER+, writes ADMIN), masking applied at ingest on every route so nothing
 * unmasked is reachable by detail, list, search or SQL, quotas answered 429, and usage per day.
 */
const h = useHarness();
type Owner = Awaited<ReturnType<typeof projectWithKey>>;
let a: Owner;
let b: Owner;
const EMAIL = 'ann.lee@example.com';
const CARD = '4111 1111 1111 1111';

const setting = (o: Owner, name: string, token: string, payload?: unknown) =>
  call(h().api, {
    method: payload === undefined ? 'GET' : 'PUT',
    url: `${PUBLIC}/projects/${o.project.id}/${name}`,
    token,
    payload: payload as never,
  });

beforeAll(async () => {
  a = await projectWithKey(h(), 'controls-a');
  b = await projectWithKey(h(), 'controls-b');
});

describe('masking settings', () => {
  it('answer the default, are replaced whole by an ADMIN, and refused to others', async () => {
    expect((await setting(a, 'masking', a.owner.token)).json()).toEqual({
      detectors: [],
      patterns: [],
      action: 'mask',
    });
    const member = await memberWithRole(h(), a.owner, a.owner.workspace.id, 'MEMBER');
    const viewer = await memberWithRole(h(), a.owner, a.owner.workspace.id, 'VIEWER');
    const body = { detectors: ['email'], patterns: [], action: 'mask' };
    expect((await setting(a, 'masking', member.token, body)).statusCode).toBe(403);
    expect((await setting(a, 'masking', a.key.key, body)).statusCode).toBe(403);
    expect((await setting(a, 'masking', b.owner.token, body)).statusCode).toBe(403);
    expect((await setting(a, 'masking', b.owner.token)).statusCode).toBe(403);
    expect((await setting(a, 'masking', viewer.token)).statusCode).toBe(200);
    const bad = await setting(a, 'masking', a.owner.token, {
      detectors: ['email'],
      patterns: [{ name: 'evil', pattern: '(a+)\\1' }],
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.body).toContain('linear-time engine');
    expect((await setting(a, 'masking', a.owner.token, { detectors: ['ssn'] })).statusCode).toBe(422);
    // Nothing half-written: the refused PUTs left the default.
    expect((await setting(a, 'masking', a.owner.token)).json().detectors).toEqual([]);
  });

  it('mask every route, and nothing unmasked is reachable by detail, list, search or SQL', async () => {
    const put = await setting(a, 'masking', a.owner.token, {
      detectors: ['email', 'payment_card'],
      patterns: [{ name: 'order', pattern: 'ORD-[0-9]{5}' }],
      action: 'mask',
    });
    expect(put.statusCode, put.body).toBe(200);
    const at = Date.now() - 60_000;
    await ingestSpans(h(), a.key.key, [
      {
        trace_id: 'masked-native',
        span_id: 'root',
        name: 'chat',
        kind: 'llm',
        start_time: iso(at),
        end_time: iso(at + 10),
        status: 'error',
        error_message: `could not reach ${EMAIL}`,
        input: { messages: [{ role: 'user', content: `I am\n${EMAIL}, card ${CARD}, order ORD-12345` }] },
        output: `Thanks ${EMAIL}`,
        metadata: { customer: EMAIL, plan: 'pro' },
      },
    ]);
    const otlp = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces`,
      token: a.key.key,
      headers: { 'content-type': 'application/json' },
      payload: {
        resourceSpans: [
          {
            resource: { attributes: [] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: '0af7651916cd43dd8448eb211c80319c',
                    spanId: 'b7ad6b7169203331',
                    name: 'otel-chat',
                    startTimeUnixNano: String(BigInt(at) * 1_000_000n),
                    endTimeUnixNano: String(BigInt(at + 5) * 1_000_000n),
                    attributes: [
                      { key: 'gen_ai.prompt', value: { stringValue: `mail ${EMAIL}` } },
                      { key: 'input.value', value: { stringValue: `mail ${EMAIL}` } },
                      { key: 'tenant', value: { stringValue: EMAIL } },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    expect(otlp.statusCode, otlp.body).toBe(200);

    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/masked-native`, token: a.key.key });
    expect(detail.statusCode).toBe(200);
    expect(detail.body).not.toContain(EMAIL);
    expect(detail.body).not.toContain('4111');
    expect(detail.body).not.toContain('ORD-12345');
    const span = detail.json().spans[0];
    expect(JSON.parse(span.input).messages[0].content).toBe('I am\n[EMAIL], card [CARD], order [PATTERN:order]');
    expect(span.error_message).toBe('could not reach [EMAIL]');
    expect(span.metadata).toMatchObject({ customer: '[EMAIL]', plan: 'pro' });

    const otel = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces/0af7651916cd43dd8448eb211c80319c`,
      token: a.key.key,
    });
    expect(otel.statusCode).toBe(200);
    expect(otel.body).not.toContain(EMAIL);
    expect(otel.body).toContain('[EMAIL]');

    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: a.key.key });
    expect(list.body).not.toContain(EMAIL);
    const search = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: a.key.key,
      query: { text_query: 'ann.lee' },
    });
    expect(search.statusCode).toBe(200);
    expect(search.json().data).toEqual([]);
    const sql = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: a.key.key,
      payload: {
        query:
          "SELECT count() AS n FROM spans WHERE input LIKE '%example.com%' OR toString(metadata) LIKE '%example.com%'",
      },
    });
    expect(sql.statusCode, sql.body).toBe(200);
    expect(Number(sql.json().rows[0][0])).toBe(0);

    // Another project's spans are not masked by A's setting.
    await ingestSpans(h(), b.key.key, [
      { trace_id: 'plain-b', span_id: 's', name: 'x', start_time: iso(at), end_time: iso(at + 1), input: EMAIL },
    ]);
    const plain = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/plain-b`, token: b.key.key });
    expect(plain.body).toContain(EMAIL);
  });
});

describe('quotas', () => {
  it('answer 429 naming the quota, with a Retry-After until it resets, and reset', async () => {
    const owner = await signUp(h(), 'quota');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const key = (await createApiKey(h(), owner.token, project.id)).key;
    const o = { project, owner } as unknown as Owner;
    expect((await setting(o, 'quotas', owner.token)).json()).toEqual({});
    expect((await setting(o, 'quotas', owner.token, { spans_per_day: 0 })).statusCode).toBe(422);
    expect((await setting(o, 'quotas', owner.token, { spans_per_hour: 3 })).statusCode).toBe(422);
    const put = await setting(o, 'quotas', owner.token, { ingest_requests_per_minute: 2 });
    expect(put.json()).toEqual({ ingest_requests_per_minute: 2 });
    const span = (id: string) => ({ trace_id: id, span_id: id, name: 'q', start_time: iso(Date.now() - 1000) });
    const send = (id: string) =>
      call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans: [span(id)] } });
    // The minute may turn between requests: a fresh minute gives a fresh count, so at most 2 + 2 pass.
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await send(`rq-${i}`));
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.json().detail).toBe(
      "the project's quota of 2 ingest requests per minute is used up; it resets at the next minute",
    );
    const retry = Number(refused[0]!.headers['retry-after']);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);

    // Spans per day: the quota counts accepted spans; past it, ingest is refused until 00:00 UTC.
    await setting(o, 'quotas', owner.token, { spans_per_day: 3 });
    const batch = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key,
      payload: { spans: [span('d-1'), span('d-2'), span('d-3')] },
    });
    expect(batch.statusCode, batch.body).toBe(200);
    const over = await send('d-4');
    expect(over.statusCode).toBe(429);
    expect(over.json().detail).toBe("the project's quota of 3 spans per day is used up; it resets at 00:00 UTC");
    const untilMidnight = Math.ceil((Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000 - Date.now()) / 1000);
    expect(Math.abs(Number(over.headers['retry-after']) - untilMidnight)).toBeLessThanOrEqual(5);
    // Lifting the quota applies at once on this process.
    await setting(o, 'quotas', owner.token, {});
    expect((await send('d-5')).statusCode).toBe(200);

    // The request quota resets: refused in one minute, taken again in the next (waited for, at most a minute).
    await setting(o, 'quotas', owner.token, { ingest_requests_per_minute: 1 });
    let last = await send('m-0');
    for (let i = 1; i < 4 && last.statusCode !== 429; i++) last = await send(`m-${i}`);
    expect(last.statusCode).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 250));
    expect((await send('m-next-minute')).statusCode).toBe(200);
  }, 180_000);
});

describe('usage', () => {
  it('counts a span once when its batch is sent again (a retry after a lost answer), native and OTLP alike', async () => {
    const c = await projectWithKey(h(), 'controls-retry');
    const spans = ['s1', 's2', 's3'].map((span_id) => ({
      trace_id: 'retried',
      span_id,
      name: 'step',
      start_time: iso(Date.now() - 60_000),
      end_time: iso(Date.now() - 59_000),
    }));
    // Accepted both times (the answer is the same); stored once.
    await ingestSpans(h(), c.key.key, spans);
    await ingestSpans(h(), c.key.key, spans);
    const nanos = String(BigInt(Date.now() - 60_000) * 1_000_000n);
    const otlp = {
      resourceSpans: [
        {
          resource: { attributes: [] },
          scopeSpans: [
            {
              scope: { name: 'retry' },
              spans: [
                {
                  traceId: 'ef'.repeat(16),
                  spanId: 'ab'.repeat(8),
                  name: 'otlp-step',
                  kind: 1,
                  startTimeUnixNano: nanos,
                  endTimeUnixNano: nanos,
                },
              ],
            },
          ],
        },
      ],
    };
    for (let i = 0; i < 2; i++) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/otel/v1/traces`,
        token: c.key.key,
        payload: otlp,
      });
      expect(res.statusCode, res.body).toBe(200);
    }
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${c.project.id}/usage`,
      token: c.owner.token,
      query: { start_time: iso(Date.now() - 86_400_000), end_time: iso(Date.now() + 1000) },
    });
    expect(res.statusCode, res.body).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(res.json().data.find((d: { date: string }) => d.date === today).spans).toBe(4);
  });

  it('answers per day what was ingested, masked and scored, for the project and its workspace', async () => {
    const scored = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/scores`,
      token: a.key.key,
      payload: { scores: [{ trace_id: 'masked-native', name: 'helpfulness', value: 1 }] },
    });
    expect(scored.json().accepted).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${a.project.id}/usage`,
      token: a.owner.token,
      query: { start_time: iso(Date.now() - 2 * 86_400_000), end_time: iso(Date.now() + 1000) },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data.map((d: { date: string }) => d.date)).toHaveLength(3);
    const day = body.data.find((d: { date: string }) => d.date === today);
    expect(day).toMatchObject({ spans: 2, traces: 2, scores: 1, sampled_out_spans: 0, judge_calls: 0, judge_cost: 0 });
    expect(day.masked_values).toBeGreaterThanOrEqual(7);
    expect(day.bytes).toBeGreaterThan(0);
    expect(body.storage_bytes).toBeGreaterThanOrEqual(0);

    const ws = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/workspaces/${a.owner.workspace.id}/usage`,
      token: a.owner.token,
    });
    expect(ws.statusCode, ws.body).toBe(200);
    expect(ws.json().projects.map((p: { project_id: string }) => p.project_id)).toEqual([a.project.id]);
    expect(ws.json().data.find((d: { date: string }) => d.date === today).spans).toBe(2);

    // Bounds and isolation.
    const long = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${a.project.id}/usage`,
      token: a.owner.token,
      query: { start_time: iso(Date.now() - 401 * 86_400_000), end_time: iso(Date.now()) },
    });
    expect(long.statusCode).toBe(400);
    const other = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${a.project.id}/usage`,
      token: b.owner.token,
    });
    expect(other.statusCode).toBe(403);
    const otherWs = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/workspaces/${a.owner.workspace.id}/usage`,
      token: b.owner.token,
    });
    expect(otherWs.statusCode).toBe(403);
  });
});
