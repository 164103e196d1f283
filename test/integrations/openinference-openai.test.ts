import { afterAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runOpenInference } from './scenarios/openinference-openai.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import {
  listenOnLoopback,
  listTraceIds,
  runOnce,
  spanNamed,
  spansNamed,
  waitForTrace,
  type StoredTrace,
} from './support/read-back.js';
import {
  AGENT_NAME,
  ANSWER,
  FAILING_TOOL_MESSAGE,
  FAILING_TOOL_NAME,
  QUESTION,
  SESSION_ID,
  TENANT,
  TOOL_NAME,
  USAGE,
  USER_ID,
} from './support/scenario.js';

/**
 * OpenInference (@arizeai/openinference-instrumentation-openai on the real `openai` client against a
 * fake provider on loopback, agent and tools from @arizeai/openinference-core) exporting over
 * OTLP/HTTP into a running Sightline, read back as its user expects (docs/integrations/openinference.md).
 */

const h = useHarness();
let fake: FakeOpenAi;
let token: string;
let trace: StoredTrace;
const LLM = 'OpenAI Chat Completions';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  fake = await startFakeOpenAi();
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runOpenInference({ origin, apiKey: token, openaiBaseUrl: fake.baseUrl });
  expect(fake.requests).toHaveLength(2);
  trace = await waitForTrace(h(), token, traceId, 5);
});
afterAll(async () => fake?.close());

describe('OpenInference into Sightline', () => {
  it('gives every span the kind of its openinference.span.kind', () => {
    expect(spanNamed(trace, AGENT_NAME).kind).toBe('agent');
    expect(spansNamed(trace, LLM).map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(spanNamed(trace, TOOL_NAME).kind).toBe('tool');
    expect(spanNamed(trace, FAILING_TOOL_NAME).kind).toBe('tool');
  });

  it('reads llm.model_name, the token counts (cached too) and a cost from the price table', () => {
    for (const llm of spansNamed(trace, LLM)) {
      expect(llm.model_name).toMatch(/^gpt-4o/);
      expect(llm).toMatchObject({
        input_tokens: USAGE.input,
        output_tokens: USAGE.output,
        cache_read_tokens: USAGE.cachedInput,
      });
      expect(llm.cost).toBeGreaterThan(0);
      expect(llm.cost_source).toBe('computed');
    }
    expect(trace).toMatchObject({ total_input_tokens: 2 * USAGE.input, total_output_tokens: 2 * USAGE.output });
    expect(trace.total_cost).toBeCloseTo(
      spansNamed(trace, LLM).reduce((sum, s) => sum + s.cost, 0),
      12,
    );
  });

  it('shows input and output on the trace, the LLM spans and the tool span', () => {
    expect(trace.input ?? '(null)').toContain(QUESTION);
    expect(trace.output ?? '(null)').toContain(ANSWER);
    const llms = spansNamed(trace, LLM);
    for (const llm of llms) expect(llm.input ?? '(null)').toContain(QUESTION);
    expect(llms.map((s) => s.output)).toEqual(
      expect.arrayContaining([expect.stringContaining(TOOL_NAME), expect.stringContaining(ANSWER)]),
    );
    const tool = spanNamed(trace, TOOL_NAME);
    expect(tool.input ?? '(null)').toContain('Paris');
    expect(tool.output ?? '(null)').toContain('temperature_c');
  });

  it('puts user.id and session.id on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('marks the tool that threw as an error with its message', () => {
    expect(spanNamed(trace, FAILING_TOOL_NAME)).toMatchObject({
      status: 'error',
      error_type: 'Error',
      error_message: FAILING_TOOL_MESSAGE,
    });
    expect(trace.error_count).toBe(1);
  });

  it('flattens the `metadata` JSON so that `metadata eq tenant acme` finds the trace', async () => {
    expect(spanNamed(trace, AGENT_NAME).metadata).toMatchObject({ tenant: TENANT });
    expect(trace.metadata_map).toEqual({ tenant: TENANT });
    expect(await listTraceIds(h(), token, [{ field: 'metadata', key: 'tenant', op: 'eq', value: TENANT }])).toEqual([
      trace.trace_id,
    ]);
    expect(await listTraceIds(h(), token, [{ field: 'metadata', key: 'tenant', op: 'eq', value: 'globex' }])).toEqual(
      [],
    );
  });
});
