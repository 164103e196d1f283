import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Langfuse } from 'langfuse';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { listenOnLoopback, runOnce, spanNamed, type StoredTrace } from './support/read-back.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';

/**
 * The Langfuse SDK v3 (`langfuse` 3.39.2, the pre-OTel SDK) unchanged, its baseUrl pointed at
 * Sightline: ingestion events, scores and prompts over the Langfuse public API at the origin's root
 * (src/protocols/langfuse/), read back through Sightline's own API (docs/integrations/langfuse-api.md).
 */

const h = useHarness();
let origin: string;
let token: string;
let other: string;
let trace: StoredTrace;
const traceId = crypto.randomUUID();
const PROMPT = `folder/support-${crypto.randomBytes(3).toString('hex')}`;

/** Every span whose pieces have come is written (the quiet window passed). */
const settle = () => settleSpanParts(h().ctx, { now: Date.now() + 3_600_000 });

function basic(key: string): Record<string, string> {
  return { authorization: `Basic ${Buffer.from(`pk-lf-anything:${key}`).toString('base64')}` };
}

function sdk(key: string): Langfuse {
  return new Langfuse({
    publicKey: 'pk-lf-anything',
    secretKey: key,
    baseUrl: origin,
    flushAt: 1000,
    flushInterval: 60_000,
    requestTimeout: 10_000,
  });
}

async function readTrace(key: string, id: string): Promise<StoredTrace> {
  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${id}`, token: key });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as StoredTrace;
}

runOnce(async () => {
  origin = await listenOnLoopback(h());
  token = (await projectWithKey(h())).key.key;
  other = (await projectWithKey(h(), 'other')).key.key;
  const langfuse = sdk(token);
  const created = await langfuse.createPrompt({
    name: PROMPT,
    type: 'text',
    prompt: 'Answer {{question}} politely',
    labels: ['staging'],
  });
  expect(created.version).toBe(1);
  const prompt = await langfuse.getPrompt(PROMPT, undefined, { label: 'staging', cacheTtlSeconds: 0 });

  const t = langfuse.trace({
    id: traceId,
    name: 'support-agent',
    userId: 'user-42',
    sessionId: 'sess-7',
    tags: ['beta', 'travel'],
    metadata: { tenant: 'acme', nested: { a: 1 } },
    release: 'v1.2.3',
    version: 'checkout-7',
    input: { question: 'where is my bag?' },
  });
  const lookup = t.span({ name: 'lookup', input: { id: 7 } });
  lookup.end({ output: { found: true } });
  const generation = t.generation({
    name: 'chat',
    model: 'gpt-4o',
    modelParameters: { temperature: 0.2 },
    input: [{ role: 'user', content: 'where is my bag?' }],
    prompt,
  });
  generation.end({
    output: { role: 'assistant', content: 'In Lisbon.' },
    usage: { input: 120, output: 30 },
    costDetails: { input: 0.0012, output: 0.0006 },
  });
  t.event({ name: 'cache-miss', metadata: { key: 'bag-7' } });
  const failing = t.generation({ name: 'retry', model: 'gpt-4o' });
  failing.end({ level: 'ERROR', statusMessage: 'rate limited by the provider' });
  t.update({ output: { answer: 'In Lisbon.' } });
  langfuse.score({ traceId, name: 'helpfulness', value: 0.9, comment: 'clear' });
  langfuse.score({ traceId, observationId: generation.id, name: 'tone', value: 'polite', dataType: 'CATEGORICAL' });
  await langfuse.flushAsync();
  await langfuse.shutdownAsync();
  await settle();
  trace = await readTrace(token, traceId);
});

describe('Langfuse SDK v3 into the Langfuse public API', () => {
  it("makes the trace's root span from trace-create: name, user, session, tags, metadata, input and output", () => {
    expect(trace.name).toBe('support-agent');
    expect(trace).toMatchObject({ user_id: 'user-42', session_id: 'sess-7' });
    expect([...trace.tags].sort()).toEqual(['beta', 'travel']);
    const root = spanNamed(trace, 'support-agent');
    expect(root.parent_span_id).toBeNull();
    // Release and version are the user's metadata `release` and `version` (docs/integrations/langfuse-api.md),
    // in the trace's metadata too; the trace has no convention keys (issue 37).
    expect(root.metadata).toEqual({ tenant: 'acme', nested: '{"a":1}', release: 'v1.2.3', version: 'checkout-7' });
    expect(trace.metadata_map).toEqual({
      tenant: 'acme',
      nested: '{"a":1}',
      release: 'v1.2.3',
      version: 'checkout-7',
      key: 'bag-7',
    });
    expect(JSON.parse(root.input!)).toEqual({ question: 'where is my bag?' });
    // trace.update({output}) came later as another trace-create: joined, not a second span.
    expect(JSON.parse(root.output!)).toEqual({ answer: 'In Lisbon.' });
    expect(trace.spans).toHaveLength(5);
  });

  it('maps observations: kinds, parents, model, usage, cost, prompt link, errors', () => {
    const root = spanNamed(trace, 'support-agent');
    const chat = spanNamed(trace, 'chat');
    expect(chat).toMatchObject({
      kind: 'llm',
      model_name: 'gpt-4o',
      input_tokens: 120,
      output_tokens: 30,
      total_tokens: 150,
      parent_span_id: root.span_id,
      prompt_name: PROMPT,
      prompt_version: 1,
      status: 'unset',
    });
    expect(chat.cost).toBeCloseTo(0.0018, 12);
    expect(chat.attributes['langfuse.model_parameters.temperature']).toBe('0.2');
    expect(chat.metadata).toEqual({});
    expect(JSON.parse(chat.output!)).toEqual({ role: 'assistant', content: 'In Lisbon.' });
    expect(chat.end_time).not.toBeNull();
    expect(spanNamed(trace, 'lookup')).toMatchObject({ kind: 'custom', output: '{"found":true}' });
    const event = spanNamed(trace, 'cache-miss');
    expect(event.end_time).toBe(event.start_time);
    expect(spanNamed(trace, 'retry')).toMatchObject({
      status: 'error',
      error_message: 'rate limited by the provider',
    });
    expect(trace).toMatchObject({ total_input_tokens: 120, total_output_tokens: 30 });
  });

  it('stores langfuse.score() as scores (source api), read back through both APIs', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/scores`, token, query: { trace_id: traceId } });
    expect(res.statusCode, res.body).toBe(200);
    const scores = res.json().data as { name: string; value: number; string_value: string | null; source: string }[];
    expect(scores.map((s) => s.name).sort()).toEqual(['helpfulness', 'tone']);
    expect(scores.find((s) => s.name === 'helpfulness')).toMatchObject({ value: 0.9, source: 'api' });
    expect(scores.find((s) => s.name === 'tone')).toMatchObject({ string_value: 'polite' });
    const lf = await fetch(`${origin}/api/public/scores?traceId=${traceId}`, { headers: basic(token) });
    expect(lf.status).toBe(200);
    const body = (await lf.json()) as { data: { name: string; dataType: string; source: string }[]; meta: unknown };
    expect(body.data.map((s) => [s.name, s.dataType, s.source]).sort()).toEqual([
      ['helpfulness', 'NUMERIC', 'API'],
      ['tone', 'CATEGORICAL', 'API'],
    ]);
    expect(body.meta).toMatchObject({ page: 1, totalItems: 2, totalPages: 1 });
  });

  it("takes POST /api/public/scores (the v4/v5 clients' route), TEXT scores included, and replaces a re-sent id", async () => {
    const id = crypto.randomUUID();
    const post = (value: string) =>
      fetch(`${origin}/api/public/scores`, {
        method: 'POST',
        headers: { ...basic(token), 'content-type': 'application/json' },
        body: JSON.stringify({ id, traceId, name: 'reviewer-note', value, dataType: 'TEXT' }),
      });
    expect((await post('first')).status).toBe(200);
    const again = await post('too terse');
    expect(await again.json()).toEqual({ id });
    const lf = await fetch(`${origin}/api/public/scores?traceId=${traceId}&name=reviewer-note`, {
      headers: basic(token),
    });
    const body = (await lf.json()) as { data: { id: string; dataType: string; stringValue: string }[] };
    expect(body.data).toMatchObject([{ id, dataType: 'TEXT', stringValue: 'too terse' }]);
    const bad = await fetch(`${origin}/api/public/scores`, {
      method: 'POST',
      headers: { ...basic(token), 'content-type': 'application/json' },
      body: JSON.stringify({ traceId, name: 'x', value: 1, dataType: 'BOOLEAN_ISH' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: 'InvalidRequestError',
      message: expect.stringContaining('dataType'),
    });
  });

  it('round-trips prompts through the SDK, a name with / included; a missing one is LangfuseNotFoundError', async () => {
    const langfuse = sdk(token);
    const v2 = await langfuse.createPrompt({
      name: PROMPT,
      type: 'chat',
      prompt: [{ role: 'system', content: 'Be brief about {{topic}}' }],
      labels: ['canary'],
    });
    expect(v2.version).toBe(2);
    const latest = await langfuse.getPrompt(PROMPT, undefined, { label: 'latest', cacheTtlSeconds: 0, type: 'chat' });
    expect(latest.version).toBe(2);
    expect(latest.compile({ topic: 'bags' })).toEqual([{ role: 'system', content: 'Be brief about bags' }]);
    const first = await langfuse.getPrompt(PROMPT, 1, { cacheTtlSeconds: 0 });
    expect(first.compile({ question: 'why' })).toBe('Answer why politely');
    const raw = await fetch(`${origin}/api/public/v2/prompts/${encodeURIComponent(PROMPT)}?label=canary`, {
      headers: basic(token),
    });
    expect(raw.status).toBe(200);
    expect(await raw.json()).toMatchObject({ name: PROMPT, version: 2, labels: ['canary', 'latest'], type: 'chat' });
    const moved = await fetch(`${origin}/api/public/v2/prompts/${encodeURIComponent(PROMPT)}/versions/1`, {
      method: 'PATCH',
      headers: { ...basic(token), 'content-type': 'application/json' },
      body: JSON.stringify({ newLabels: ['canary'] }),
    });
    expect(moved.status).toBe(200);
    expect(((await moved.json()) as { labels: string[] }).labels).toEqual(['canary', 'staging']);
    const missing = await fetch(`${origin}/api/public/v2/prompts/nope`, { headers: basic(token) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'LangfuseNotFoundError' });
    await expect(langfuse.getPrompt('nope', undefined, { cacheTtlSeconds: 0, maxRetries: 0 })).rejects.toThrow(
      /not found/,
    );
    const list = await fetch(`${origin}/api/public/v2/prompts`, { headers: basic(token) });
    expect(((await list.json()) as { data: { name: string }[] }).data.map((p) => p.name)).toContain(PROMPT);
  });

  it('joins an update sent before its create (raw HTTP, separate requests), and a re-sent batch counts once', async () => {
    const id = crypto.randomUUID();
    const gen = crypto.randomUUID();
    const t0 = Date.now() - 5_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const update = {
      id: crypto.randomUUID(),
      type: 'generation-update',
      timestamp: iso(t0 + 2_000),
      body: { id: gen, traceId: id, endTime: iso(t0 + 2_000), output: 'done', usage: {} },
    };
    const creates = [
      {
        id: crypto.randomUUID(),
        type: 'generation-create',
        timestamp: iso(t0 + 1),
        body: {
          id: gen,
          traceId: id,
          name: 'gen',
          startTime: iso(t0 + 1),
          model: 'gpt-4o-mini',
          usageDetails: { input: 10, output: 5 },
        },
      },
      {
        id: crypto.randomUUID(),
        type: 'trace-create',
        timestamp: iso(t0),
        body: { id, name: 'raw', timestamp: iso(t0) },
      },
    ];
    const post = (batch: unknown[]) =>
      fetch(`${origin}/api/public/ingestion`, {
        method: 'POST',
        headers: { ...basic(token), 'content-type': 'application/json' },
        body: JSON.stringify({ batch }),
      });
    const first = await post([update]);
    expect(first.status).toBe(207);
    expect(await first.json()).toEqual({ successes: [{ id: update.id, status: 201 }], errors: [] });
    await settle();
    // Update alone: held, not listed.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${id}`, token })).statusCode).toBe(404);
    expect((await post(creates)).status).toBe(207);
    expect((await post([...creates, update])).status).toBe(207);
    await settle();
    expect((await post([...creates, update])).status).toBe(207);
    await settle();
    const stored = await readTrace(token, id);
    expect(stored.spans).toHaveLength(2);
    expect(spanNamed(stored, 'gen')).toMatchObject({
      output: 'done',
      input_tokens: 10,
      output_tokens: 5,
      model_name: 'gpt-4o-mini',
      end_time: iso(t0 + 2_000),
    });
    expect(stored).toMatchObject({ span_count: 2, total_input_tokens: 10, total_output_tokens: 5 });
  });

  it('answers a malformed event as its own 400 entry, never a 5xx', async () => {
    const good = { id: 'ok-1', type: 'sdk-log', timestamp: new Date().toISOString(), body: { log: 'hi' } };
    const res = await fetch(`${origin}/api/public/ingestion`, {
      method: 'POST',
      headers: { ...basic(token), 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [
          good,
          { id: 'bad-1', type: 'span-create', body: { id: 'x', traceId: 't', startTime: 'yesterday' } },
          { id: 'bad-2', type: 'teleport-create', body: {} },
          { id: 'bad-3', type: 'span-create', body: { traceId: 't' } },
        ],
      }),
    });
    expect(res.status).toBe(207);
    const body = (await res.json()) as {
      successes: unknown[];
      errors: { id: string; status: number; message: string }[];
    };
    expect(body.successes).toEqual([{ id: 'ok-1', status: 201 }]);
    expect(body.errors.map((e) => [e.id, e.status])).toEqual([
      ['bad-1', 400],
      ['bad-2', 400],
      ['bad-3', 400],
    ]);
    expect(body.errors[0]!.message).toContain('startTime');
    const notBatch = await fetch(`${origin}/api/public/ingestion`, {
      method: 'POST',
      headers: { ...basic(token), 'content-type': 'application/json' },
      body: JSON.stringify({ events: [] }),
    });
    expect(notBatch.status).toBe(400);
    expect(await notBatch.json()).toMatchObject({ error: 'InvalidRequestError' });
  });

  it('refuses bad credentials with 401; a Bearer key may send scores only', async () => {
    for (const headers of [
      {},
      basic('sk-lf-not-ours'),
      basic(`sl_${crypto.randomUUID().replaceAll('-', '')}`),
      { authorization: 'Bearer pk-lf-public' },
    ]) {
      const res = await fetch(`${origin}/api/public/ingestion`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ batch: [] }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('UnauthorizedError');
    }
    const res = await fetch(`${origin}/api/public/ingestion`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [
          { id: 's', type: 'score-create', body: { id: crypto.randomUUID(), traceId, name: 'thumbs', value: 1 } },
          { id: 't', type: 'trace-create', body: { id: crypto.randomUUID(), name: 'nope' } },
        ],
      }),
    });
    const body = (await res.json()) as { successes: { id: string }[]; errors: { id: string; status: number }[] };
    expect(body.successes.map((s) => s.id)).toEqual(['s']);
    expect(body.errors).toMatchObject([{ id: 't', status: 403 }]);
  });

  it("keeps projects apart: another project's key reads none of this one's traces, scores or prompts", async () => {
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: other })).statusCode).toBe(
      404,
    );
    const scores = await fetch(`${origin}/api/public/scores?traceId=${traceId}`, { headers: basic(other) });
    expect(((await scores.json()) as { data: unknown[] }).data).toEqual([]);
    const prompt = await fetch(`${origin}/api/public/v2/prompts/${encodeURIComponent(PROMPT)}`, {
      headers: basic(other),
    });
    expect(prompt.status).toBe(404);
    // Writing into "its" trace id lands in its own project, never this one's trace.
    const res = await fetch(`${origin}/api/public/ingestion`, {
      method: 'POST',
      headers: { ...basic(other), 'content-type': 'application/json' },
      body: JSON.stringify({
        batch: [{ id: 'x', type: 'trace-create', body: { id: traceId, name: 'hijack', userId: 'mallory' } }],
      }),
    });
    expect(res.status).toBe(207);
    await settle();
    expect((await readTrace(token, traceId)).name).toBe('support-agent');
  });

  it('answers GET /api/public/health', async () => {
    const res = await fetch(`${origin}/api/public/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'OK' });
  });
});
