import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Client, RunTree } from 'langsmith';
import { traceable, getCurrentRunTree } from 'langsmith/traceable';
import { call, projectWithKey, PUBLIC, useHarness, type Harness } from '../support/harness.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';
import { LANGSMITH_PREFIX } from '../../src/protocols/langsmith/routes.js';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { RunnableLambda } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { listenOnLoopback, runOnce, spanNamed, waitForTrace, type StoredTrace } from './support/read-back.js';

/**
 * The real `langsmith` SDK (and LangChain's tracer through @langchain/core) pointed at Sightline with
 * `LANGSMITH_ENDPOINT=http://HOST:8000/api/v1/langsmith` (docs/langsmith-protocol.md): nested
 * `traceable` functions, `RunTree` post/patch, the batch path and feedback, read back through the
 * public API.
 */

const h = useHarness();
let origin: string;
let token: string;
let projectId: string;
/** What the SDK sent, by path and encoding (the recorded shape of its requests). */
const sent: { method: string; url: string; type: string; encoding: string }[] = [];

const USAGE = { input_tokens: 12, output_tokens: 5, total_tokens: 17 };

function client(options: Record<string, unknown> = {}) {
  return new Client({ apiUrl: `${origin}${LANGSMITH_PREFIX}`, apiKey: token, ...options });
}

/** Parts settle when quiet; a test settles them at once (`now` past the quiet window). */
async function settled(hh: Harness, traceId: string, spans: number): Promise<StoredTrace> {
  await settleSpanParts(hh.ctx, { now: Date.now() + 60_000, projectId });
  return waitForTrace(hh, token, traceId, spans);
}

runOnce(async () => {
  origin = await listenOnLoopback(h());
  const owner = await projectWithKey(h());
  token = owner.key.key;
  projectId = owner.project.id;
  // The raw server's requests (the app is listening: no more hooks).
  h().api.server.on('request', (request: { method?: string; url?: string; headers: Record<string, unknown> }) => {
    if (request.url?.startsWith(LANGSMITH_PREFIX))
      sent.push({
        method: request.method ?? '',
        url: request.url.slice(LANGSMITH_PREFIX.length),
        type: String(request.headers['content-type'] ?? '').split(';')[0]!,
        encoding: String(request.headers['content-encoding'] ?? ''),
      });
  });
});

/** chain -> llm -> tool, traced by `traceable`; answers the root run's id (its trace's id). */
async function agentRun(ls: Client, fail = false): Promise<string> {
  let rootId = '';
  const lookup = traceable(
    async (city: string) => (fail ? Promise.reject(new Error('no weather')) : `sunny in ${city}`),
    {
      name: 'weather_lookup',
      run_type: 'tool',
      client: ls,
      tracingEnabled: true,
    },
  );
  const chat = traceable(
    async (messages: { role: string; content: string }[]) => ({
      choices: [{ message: { role: 'assistant', content: `calling tool for ${messages[0]!.content}` } }],
      usage_metadata: USAGE,
    }),
    {
      name: 'ChatOpenAI',
      run_type: 'llm',
      client: ls,
      tracingEnabled: true,
      metadata: { ls_model_name: 'gpt-4o', ls_provider: 'openai' },
    },
  );
  const agent = traceable(
    async (question: string) => {
      rootId = getCurrentRunTree().id;
      await chat([{ role: 'user', content: question }]);
      try {
        return await lookup('Paris');
      } catch {
        return 'the tool failed';
      }
    },
    {
      name: 'agent',
      run_type: 'chain',
      client: ls,
      tracingEnabled: true,
      project_name: 'travel-app',
      tags: ['prod', 'agent'],
      metadata: { thread_id: 'thread-7', user_id: 'user-3' },
    },
  );
  await agent('What is the weather in Paris?');
  await ls.awaitPendingTraceBatches();
  return rootId;
}

describe('the langsmith SDK into Sightline', () => {
  it('answers /info and takes traceable runs through multipart, gzip-compressed, as one trace', async () => {
    const traceId = await agentRun(client());
    const trace = await settled(h(), traceId, 3);

    expect(sent.some((s) => s.url === '/info' && s.method === 'GET')).toBe(true);
    const multipart = sent.filter((s) => s.url === '/runs/multipart');
    expect(multipart.length).toBeGreaterThan(0);
    expect(multipart.every((s) => s.type === 'multipart/form-data' && s.encoding === 'gzip')).toBe(true);

    const root = spanNamed(trace, 'agent');
    const llm = spanNamed(trace, 'ChatOpenAI');
    const tool = spanNamed(trace, 'weather_lookup');
    expect(root).toMatchObject({ kind: 'chain', parent_span_id: null, session_id: 'thread-7', user_id: 'user-3' });
    expect(llm).toMatchObject({
      kind: 'llm',
      parent_span_id: root.span_id,
      model_name: 'gpt-4o',
      input_tokens: 12,
      output_tokens: 5,
      status: 'ok',
    });
    expect(llm.cost).toBeGreaterThan(0);
    expect(tool).toMatchObject({ kind: 'tool', parent_span_id: root.span_id });
    expect(root.input).toContain('What is the weather in Paris?');
    expect(root.output).toContain('sunny in Paris');
    expect(tool.output).toContain('sunny in Paris');
    expect(llm.input).toContain('What is the weather in Paris?');
    expect(root.metadata).toMatchObject({ 'langsmith.project': 'travel-app', thread_id: 'thread-7' });
    // LangChain's keys about the run stay on the run's span, out of the trace's metadata (issue 37).
    expect(llm.attributes).toMatchObject({ ls_model_name: 'gpt-4o', ls_provider: 'openai' });
    expect(Object.keys(trace.metadata_map ?? {}).filter((k) => k.startsWith('ls_'))).toEqual([]);
    expect(trace.tags ?? root.tags).toEqual(expect.arrayContaining(['prod', 'agent']));
    expect(trace).toMatchObject({ session_id: 'thread-7', user_id: 'user-3', error_count: 0 });
  });

  it('marks a failing tool run as an error span', async () => {
    const traceId = await agentRun(client(), true);
    const trace = await settled(h(), traceId, 3);
    expect(spanNamed(trace, 'weather_lookup')).toMatchObject({
      status: 'error',
      error_message: expect.stringContaining('no weather'),
    });
    expect(trace.error_count).toBe(1);
  });

  it('takes RunTree post and patch one request each (POST /runs, PATCH /runs/{id})', async () => {
    const ls = client({ autoBatchTracing: false });
    const root = new RunTree({
      name: 'pipeline',
      run_type: 'chain',
      inputs: { q: 'hi' },
      client: ls,
      tracingEnabled: true,
    });
    await root.postRun();
    const child = root.createChild({ name: 'retrieve', run_type: 'retriever', inputs: { query: 'hi' } });
    await child.postRun();
    await child.end({ documents: ['a', 'b'] });
    await child.patchRun();
    await root.end({ answer: 'hello' });
    await root.patchRun();
    const trace = await settled(h(), root.id, 2);
    expect(sent.some((s) => s.method === 'POST' && s.url === '/runs')).toBe(true);
    expect(sent.some((s) => s.method === 'PATCH' && s.url === `/runs/${root.id}`)).toBe(true);
    expect(spanNamed(trace, 'retrieve')).toMatchObject({ kind: 'retriever', parent_span_id: root.id, status: 'ok' });
    expect(spanNamed(trace, 'pipeline').output).toContain('hello');
  });

  it('takes the JSON batch path (/runs/batch), where the SDK sends post and patch apart', async () => {
    const ls = client({ autoBatchTracing: false });
    const id = crypto.randomUUID();
    const start = new Date(Date.now() - 2_000);
    const stamp = start.toISOString().replace(/[-:]/g, '').replace('.', '').replace('Z', '000Z');
    const dotted = `${stamp}${id}`;
    await ls.batchIngestRuns({
      runCreates: [
        {
          id,
          trace_id: id,
          dotted_order: dotted,
          name: 'batch-root',
          run_type: 'chain',
          start_time: start.getTime(),
          inputs: { x: 1 },
        },
      ],
    });
    await ls.batchIngestRuns({
      runUpdates: [{ id, trace_id: id, dotted_order: dotted, end_time: Date.now(), outputs: { y: 2 } }],
    });
    const trace = await settled(h(), id, 1);
    expect(sent.some((s) => s.url === '/runs/batch')).toBe(true);
    expect(trace.spans[0]).toMatchObject({ name: 'batch-root', status: 'ok' });
    expect(trace.spans[0]!.output).toContain('"y":2');
  });

  it('turns feedback into scores, with a trace id (a multipart part) and without (POST /feedback)', async () => {
    const ls = client();
    const traceId = await agentRun(ls);
    await ls.createFeedback(traceId, 'helpfulness', { score: 0.8, comment: 'good', traceId });
    await ls.createFeedback(traceId, 'correct', { score: true });
    await ls.createFeedback(traceId, 'tone', { value: 'friendly' });
    await ls.awaitPendingTraceBatches();
    await settled(h(), traceId, 3);
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token });
    const scores = (
      res.json() as {
        scores: {
          name: string;
          value: number;
          string_value: string | null;
          source: string;
          data_type: string;
          comment: string | null;
        }[];
      }
    ).scores;
    expect(scores.map((s) => s.name).sort()).toEqual(['correct', 'helpfulness', 'tone']);
    expect(scores.find((s) => s.name === 'helpfulness')).toMatchObject({
      value: 0.8,
      comment: 'good',
      source: 'api',
      data_type: 'numeric',
    });
    expect(scores.find((s) => s.name === 'correct')).toMatchObject({ value: 1, data_type: 'boolean' });
    expect(scores.find((s) => s.name === 'tone')).toMatchObject({ string_value: 'friendly', data_type: 'categorical' });
    expect(sent.some((s) => s.url === '/feedback' && s.method === 'POST')).toBe(true);
  });

  it("takes LangChain's tracer (a fake chat model and a tool) with the LangChain message format", async () => {
    const ls = client();
    const tracer = new LangChainTracer({ client: ls, projectName: 'langchain-app' });
    const model = new FakeListChatModel({ responses: ['use the weather tool'] });
    const weather = tool(async ({ city }: { city: string }) => `rain in ${city}`, {
      name: 'weather',
      description: 'the weather of a city',
      schema: z.object({ city: z.string() }),
    });
    const chain = RunnableLambda.from(async (question: string, config) => {
      await model.invoke(question, config);
      return weather.invoke({ city: 'Lyon' }, config);
    }).withConfig({ runName: 'weather_chain' });
    const runId = crypto.randomUUID();
    await chain.invoke('Weather in Lyon?', { callbacks: [tracer], runId });
    await ls.awaitPendingTraceBatches();
    const trace = await settled(h(), runId, 3);
    expect(spanNamed(trace, 'weather_chain')).toMatchObject({ kind: 'chain', parent_span_id: null });
    const llm = spanNamed(trace, 'FakeListChatModel');
    expect(llm).toMatchObject({ kind: 'llm', parent_span_id: runId, status: 'ok' });
    expect(llm.input).toContain('Weather in Lyon?');
    expect(llm.output).toContain('use the weather tool');
    expect(spanNamed(trace, 'weather')).toMatchObject({ kind: 'tool', parent_span_id: runId });
    expect(spanNamed(trace, 'weather').output).toContain('rain in Lyon');
    expect(spanNamed(trace, 'weather_chain').metadata).toMatchObject({ 'langsmith.project': 'langchain-app' });
  });
});
