import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LangfuseClient } from '@langfuse/client';
import { LangfuseSpanProcessor } from '@langfuse/otel';
import {
  propagateAttributes,
  setActiveTraceIO,
  setLangfuseTracerProvider,
  startActiveObservation,
  startObservation,
} from '@langfuse/tracing';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { useAsyncContext } from './support/otel.js';
import { listenOnLoopback, runOnce, spanNamed, waitForTrace, type StoredTrace } from './support/read-back.js';

/**
 * The Langfuse v5 SDK's own client and tracer unchanged, pointed at Sightline (issue 32, item 4):
 * `@langfuse/client` 5.11.1 creates, labels and fetches prompts over `/api/public/v2/prompts` and
 * sends scores (`score-create` events to `/api/public/ingestion`); `@langfuse/tracing` +
 * `@langfuse/otel` send the trace over OTLP, its generation linked to the fetched prompt. Read back
 * through Sightline's public API.
 */

const h = useHarness();
let token: string;
let trace: StoredTrace;
let client: LangfuseClient;
const PROMPT = `support/answer-${crypto.randomBytes(3).toString('hex')}`;
const USER = 'user-5';
const SESSION = 'session-9';
const MODEL = 'gpt-4o';
const USAGE = { input: 200, output: 40 };
const COST = { input: 0.0005, output: 0.0004 };
let promptVersion = 0;
let generationId = '';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  token = (await projectWithKey(h())).key.key;
  client = new LangfuseClient({ publicKey: 'pk-lf-anything', secretKey: token, baseUrl: origin });

  await client.prompt.create({ name: PROMPT, prompt: 'Answer {{question}} in one line', labels: ['staging'] });
  const second = await client.prompt.create({
    name: PROMPT,
    type: 'chat',
    prompt: [{ role: 'system', content: 'Answer {{question}} in detail' }],
    labels: ['canary'],
  });
  expect(second.version).toBe(2);
  const fetched = await client.prompt.get(PROMPT, { label: 'staging', cacheTtlSeconds: 0 });
  promptVersion = fetched.version;

  useAsyncContext();
  const processor = new LangfuseSpanProcessor({
    publicKey: 'pk-lf-anything',
    secretKey: token,
    baseUrl: origin,
    exportMode: 'immediate',
  });
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  setLangfuseTracerProvider(provider);
  let traceId = '';
  try {
    await propagateAttributes({ userId: USER, sessionId: SESSION, metadata: { tenant: 'acme' } }, () =>
      startActiveObservation(
        'answer-agent',
        async (agent) => {
          traceId = agent.traceId;
          agent.update({ input: { question: 'where is my bag?' } });
          setActiveTraceIO({ input: { question: 'where is my bag?' } });
          const generation = startObservation(
            'chat',
            {
              model: MODEL,
              input: [{ role: 'user', content: fetched.compile({ question: 'where is my bag?' }) }],
              prompt: fetched,
            },
            { asType: 'generation' },
          );
          generationId = generation.id;
          generation
            .update({ output: { role: 'assistant', content: 'In Lisbon.' }, usageDetails: USAGE, costDetails: COST })
            .end();
          startObservation('find-bag', { input: { bag: 7 } }, { asType: 'tool' })
            .update({ level: 'ERROR', statusMessage: 'the bag service timed out' })
            .end();
          agent.update({ output: { answer: 'In Lisbon.' } });
          setActiveTraceIO({ output: { answer: 'In Lisbon.' } });
        },
        { asType: 'agent' },
      ),
    );
    await processor.forceFlush();
  } finally {
    await provider.shutdown();
    setLangfuseTracerProvider(null);
  }

  client.score.create({ traceId, name: 'helpfulness', value: 0.8, comment: 'short but right' });
  client.score.create({ traceId, observationId: generationId, name: 'tone', value: 'polite', dataType: 'CATEGORICAL' });
  await client.score.flush();
  trace = await waitForTrace(h(), token, traceId, 3);
});

describe('@langfuse/client and @langfuse/tracing into Sightline', () => {
  it('shows kinds, model, tokens, cost, input and output, user and session, errors and metadata', () => {
    expect(spanNamed(trace, 'answer-agent').kind).toBe('agent');
    const generation = spanNamed(trace, 'chat');
    expect(generation).toMatchObject({
      kind: 'llm',
      model_name: MODEL,
      input_tokens: USAGE.input,
      output_tokens: USAGE.output,
    });
    expect(generation.cost).toBeCloseTo(COST.input + COST.output, 12);
    expect(JSON.stringify(generation.input)).toContain('where is my bag? in one line');
    expect(JSON.stringify(generation.output)).toContain('In Lisbon.');
    expect(trace.total_cost).toBeGreaterThan(0);
    expect(JSON.stringify(trace.output)).toContain('In Lisbon.');
    expect(trace).toMatchObject({ user_id: USER, session_id: SESSION });
    expect(spanNamed(trace, 'find-bag')).toMatchObject({
      kind: 'tool',
      status: 'error',
      error_message: 'the bag service timed out',
    });
    expect(trace.metadata_map.tenant).toBe('acme');
  });

  it('links the generation to the prompt version the client fetched by label', () => {
    expect(promptVersion).toBe(1);
    expect(spanNamed(trace, 'chat')).toMatchObject({ prompt_name: PROMPT, prompt_version: 1 });
  });

  it("stores the client's scores (score-create events) on the trace and the generation", async () => {
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/scores`,
      token,
      query: { trace_id: trace.trace_id },
    });
    expect(res.statusCode, res.body).toBe(200);
    const scores = res.json().data as {
      name: string;
      value: number | null;
      string_value: string | null;
      span_id: string | null;
    }[];
    expect(scores.map((s) => s.name).sort()).toEqual(['helpfulness', 'tone']);
    expect(scores.find((s) => s.name === 'helpfulness')).toMatchObject({ value: 0.8 });
    expect(scores.find((s) => s.name === 'tone')).toMatchObject({ string_value: 'polite', span_id: generationId });
  });

  it('moves labels and fetches by version and label through the client', async () => {
    const moved = await client.prompt.update({ name: PROMPT, version: 2, newLabels: ['staging'] });
    expect(moved.labels).toContain('staging');
    const staging = await client.prompt.get(PROMPT, { label: 'staging', type: 'chat', cacheTtlSeconds: 0 });
    expect(staging.version).toBe(2);
    expect(staging.compile({ question: 'why' })).toEqual([{ role: 'system', content: 'Answer why in detail' }]);
    const first = await client.prompt.get(PROMPT, { version: 1, cacheTtlSeconds: 0 });
    expect(first.compile({ question: 'why' })).toBe('Answer why in one line');
  });
});
