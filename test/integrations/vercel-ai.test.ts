import { afterAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runVercelAi } from './scenarios/vercel-ai.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import {
  listenOnLoopback,
  listTraceIds,
  runOnce,
  spanNamed,
  spansNamed,
  waitForTrace,
  type StoredTrace,
  expectModelCallsPriced,
  expectScenarioWords,
  expectTenantFilterFinds,
} from './support/read-back.js';
import {
  AGENT_NAME,
  FAILING_TOOL_MESSAGE,
  FAILING_TOOL_NAME,
  SESSION_ID,
  TENANT,
  TOOL_NAME,
  USER_ID,
} from './support/scenario.js';

/**
 * The Vercel AI SDK 6 (`experimental_telemetry`, mock gpt-4o from ai/test) exporting over OTLP/HTTP
 * into a running Sightline, read back as its user expects (docs/integrations/vercel-ai.md).
 */

const h = useHarness();
let fake: FakeOpenAi;
let token: string;
let trace: StoredTrace;

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  fake = await startFakeOpenAi();
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runVercelAi({ origin, apiKey: token, openaiBaseUrl: fake.baseUrl });
  trace = await waitForTrace(h(), token, traceId, 5);
});
afterAll(async () => fake?.close());

const toolCalls = () => trace.spans.filter((s) => s.name === TOOL_NAME || s.name === FAILING_TOOL_NAME);

describe('Vercel AI SDK into Sightline', () => {
  it('names the trace after its functionId and each tool call after its tool (issue 37)', () => {
    expect(trace.name).toBe(AGENT_NAME);
    expect(spanNamed(trace, AGENT_NAME).attributes['otel.span.name']).toBe('ai.generateText');
    expect(spanNamed(trace, TOOL_NAME).kind).toBe('tool');
    expect(spanNamed(trace, FAILING_TOOL_NAME).kind).toBe('tool');
    expect(trace.spans.filter((s) => s.name === 'ai.toolCall')).toEqual([]);
  });

  it('gives every span its kind: the generateText agent, its model steps and its tool calls', () => {
    expect(spanNamed(trace, AGENT_NAME).kind).toBeOneOf(['agent', 'chain']);
    expect(spansNamed(trace, 'ai.generateText.doGenerate').map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(toolCalls().map((s) => s.kind)).toEqual(['tool', 'tool']);
  });

  it('reads model, tokens (cached too) and a cost from the price table on each model step, counted once in the trace', () => {
    const steps = spansNamed(trace, 'ai.generateText.doGenerate');
    for (const step of steps) expect(step.model_name).toMatch(/^gpt-4o/);
    // The outer ai.generateText repeats its steps' usage: the trace counts the two steps once.
    expectModelCallsPriced(trace, steps, { cached: true });
  });

  it('shows input and output on the trace, the model steps and the tool call', () => {
    const weather = toolCalls().find((s) => s.status !== 'error')!;
    expectScenarioWords(trace, spansNamed(trace, 'ai.generateText.doGenerate'), weather);
  });

  it('puts the user and session of ai.telemetry.metadata on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('marks the tool call that threw as an error with its message', () => {
    const failed = toolCalls().filter((s) => s.status === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error_type: 'Error', error_message: FAILING_TOOL_MESSAGE });
    expect(trace.error_count).toBe(1);
  });

  it('keeps ai.telemetry.metadata.tenant as plain metadata that `metadata eq` finds', async () => {
    expect(trace.metadata_map).toMatchObject({ tenant: TENANT });
    await expectTenantFilterFinds(h(), token, trace);
  });

  it("holds only the user's metadata in the trace's metadata_map; the SDK's attributes stay on their spans (issue 37)", async () => {
    // userId and sessionId became the trace's user and session; tenant is all that is left.
    expect(trace.metadata_map).toEqual({ tenant: TENANT });
    for (const s of trace.spans) expect(s.metadata).toEqual({ tenant: TENANT });
    const tool = spanNamed(trace, TOOL_NAME);
    expect(tool.attributes).toMatchObject({ 'ai.toolCall.name': TOOL_NAME, 'otel.span.name': 'ai.toolCall' });
    expect(tool.attributes['ai.toolCall.id']).toBeTruthy();
    // A convention attribute is no metadata: `metadata eq` does not match it.
    expect(
      await listTraceIds(h(), token, [{ field: 'metadata', key: 'ai.toolCall.name', op: 'eq', value: TOOL_NAME }]),
    ).toEqual([]);
  });
});
