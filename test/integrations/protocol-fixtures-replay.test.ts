import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness, type Harness } from '../support/harness.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';
import { LANGSMITH_PREFIX } from '../../src/protocols/langsmith/routes.js';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import type { ProtocolFixture, RecordedRequest } from '../fixtures/protocols/record.js';
import type { StoredTrace } from './support/read-back.js';

/**
 * What the real SDKs sent (test/fixtures/protocols/, recorded by its record.ts against a loopback
 * stub): the Langfuse v3 SDK's ingestion batch (events out of order, as it sends them), those of
 * langfuse-langchain (LangChain 0.3) and langfuse-vercel (AI SDK 6), and the LangSmith SDK's gzip
 * multipart bodies (runs, then feedback), replayed as sent, times moved to a minute ago, into a
 * project; then re-sent whole, which changes nothing.
 */

const h = useHarness();
const DIR = path.join(ROOT_DIR, 'test', 'fixtures', 'protocols');
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g;

function load(file: string): ProtocolFixture {
  return JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as ProtocolFixture;
}

/** The request bodies as text (gzip inflated), their times moved so the first is a minute ago. */
function shifted(requests: RecordedRequest[]): { request: RecordedRequest; text: string }[] {
  const texts = requests.map((r) =>
    r.body !== undefined
      ? JSON.stringify(r.body)
      : zlib.gunzipSync(Buffer.from(r.body_base64!, 'base64')).toString('utf8'),
  );
  const times = texts.flatMap((t) => [...t.matchAll(ISO)].map((m) => Date.parse(m[0])));
  const delta = Date.now() - 60_000 - Math.min(...times);
  return requests.map((request, i) => ({
    request,
    text: texts[i]!.replace(ISO, (iso) => new Date(Date.parse(iso) + delta).toISOString()).replace(
      /"end_time":(\d{13})/g,
      (_all, ms: string) => `"end_time":${Number(ms) + delta}`,
    ),
  }));
}

async function replay(hh: Harness, fixture: ProtocolFixture, key: string): Promise<void> {
  for (const { request, text } of shifted(fixture.requests)) {
    const langsmith = !request.path.startsWith('/api/public');
    const res = await hh.api.inject({
      method: request.method as 'POST',
      url: langsmith ? `${LANGSMITH_PREFIX}${request.path}` : request.path,
      payload: request.body !== undefined ? text : zlib.gzipSync(Buffer.from(text)),
      headers: {
        ...request.headers,
        ...(langsmith
          ? { 'x-api-key': key }
          : { authorization: `Basic ${Buffer.from(`pk-lf-fixture:${key}`).toString('base64')}` }),
      },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    if (res.statusCode === 207) expect(res.json().errors).toEqual([]);
    if (langsmith) expect(res.json().rejected).toEqual([]);
  }
}

async function readBack(hh: Harness, key: string, projectId: string, traceId: string) {
  await settleSpanParts(hh.ctx, { now: Date.now() + 60_000, projectId });
  const trace = await call(hh.api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key });
  expect(trace.statusCode, trace.body).toBe(200);
  const scores = await call(hh.api, {
    method: 'GET',
    url: `${PUBLIC}/scores`,
    token: key,
    query: { trace_id: traceId },
  });
  return { trace: trace.json() as StoredTrace, scores: scores.json().data as { name: string; value: number }[] };
}

describe('recorded Langfuse and LangSmith fixtures', () => {
  it('langfuse-v3.json: one trace with kinds, model, tokens, cost, an error and the score; re-sent, the same', async () => {
    const fixture = load('langfuse-v3.json');
    const { project, key } = await projectWithKey(h());
    await replay(h(), fixture, key.key);
    const first = await readBack(h(), key.key, project.id, fixture.trace_id);
    const chat = first.trace.spans.find((s) => s.name === 'chat')!;
    expect(chat).toMatchObject({ kind: 'llm', model_name: 'gpt-4o', input_tokens: 120, output_tokens: 30 });
    expect(chat.cost).toBeCloseTo(0.0018, 10);
    expect(first.trace.spans.find((s) => s.name === 'retry')).toMatchObject({ status: 'error' });
    expect(first.trace).toMatchObject({ user_id: 'user-fixture', session_id: 'session-fixture' });
    expect(first.scores.map((s) => [s.name, s.value])).toEqual([['helpfulness', 0.9]]);

    await replay(h(), fixture, key.key);
    const again = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(again.trace.spans).toHaveLength(first.trace.spans.length);
    expect(again.trace.total_cost).toBeCloseTo(first.trace.total_cost, 12);
    expect(again.scores).toHaveLength(1);
  });

  it('langfuse-langchain.json: the root run, llm calls with model, tokens and cost, the tool run, the error; re-sent, the same', async () => {
    const fixture = load('langfuse-langchain.json');
    const { project, key } = await projectWithKey(h());
    await replay(h(), fixture, key.key);
    const first = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(first.trace).toMatchObject({ name: 'travel-agent', user_id: 'user-42', session_id: 'sess-7' });
    expect(first.trace.spans.map((s) => s.kind).sort()).toEqual(['custom', 'llm', 'llm', 'llm', 'tool']);
    const answered = first.trace.spans.filter((s) => s.name === 'ScriptedChatModel');
    for (const llm of answered) {
      expect(llm).toMatchObject({ model_name: 'gpt-4o-2024-08-06', input_tokens: 120, output_tokens: 30 });
      expect(llm.cost).toBeGreaterThan(0);
    }
    expect(first.trace.spans.find((s) => s.status === 'error')).toMatchObject({ name: 'FakeStreamingChatModel' });

    await replay(h(), fixture, key.key);
    const again = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(again.trace.spans).toHaveLength(5);
    expect(again.trace.total_cost).toBeCloseTo(first.trace.total_cost, 12);
  });

  it('langfuse-vercel.json: the generateText chain, its model steps with model, tokens and cost, its tool calls; re-sent, the same', async () => {
    const fixture = load('langfuse-vercel.json');
    const { project, key } = await projectWithKey(h());
    await replay(h(), fixture, key.key);
    const first = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(first.trace).toMatchObject({ name: 'travel-agent', user_id: 'user-42', session_id: 'sess-7' });
    expect(first.trace.spans.map((s) => s.kind).sort()).toEqual(['chain', 'custom', 'llm', 'llm', 'tool', 'tool']);
    for (const llm of first.trace.spans.filter((s) => s.kind === 'llm')) {
      expect(llm).toMatchObject({ model_name: 'gpt-4o-2024-08-06', input_tokens: 120, output_tokens: 30 });
      expect(llm.cost).toBeGreaterThan(0);
    }
    expect(first.trace.metadata_map).toEqual({ tenant: 'acme' });

    await replay(h(), fixture, key.key);
    const again = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(again.trace.spans).toHaveLength(6);
    expect(again.trace.total_cost).toBeCloseTo(first.trace.total_cost, 12);
  });

  it('langsmith.json: chain, llm and tool runs as one trace with model, tokens, cost, the error and the feedback; re-sent, the same', async () => {
    const fixture = load('langsmith.json');
    expect(fixture.requests.every((r) => r.headers['content-encoding'] === 'gzip')).toBe(true);
    const { project, key } = await projectWithKey(h());
    await replay(h(), fixture, key.key);
    const first = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(first.trace.spans.map((s) => s.kind).sort()).toEqual(['chain', 'llm', 'tool']);
    const llm = first.trace.spans.find((s) => s.kind === 'llm')!;
    expect(llm).toMatchObject({ model_name: 'gpt-4o', input_tokens: 40, output_tokens: 10 });
    expect(llm.cost).toBeGreaterThan(0);
    expect(first.trace.spans.find((s) => s.kind === 'tool')).toMatchObject({ status: 'error' });
    expect(first.scores.map((s) => [s.name, s.value])).toEqual([['correct', 1]]);

    await replay(h(), fixture, key.key);
    const again = await readBack(h(), key.key, project.id, fixture.trace_id);
    expect(again.trace.spans).toHaveLength(3);
    expect(again.trace.total_cost).toBeCloseTo(first.trace.total_cost, 12);
    expect(again.scores).toHaveLength(1);
  });
});
