import { afterAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runOpenInference } from './scenarios/openinference-openai.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import {
  listenOnLoopback,
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
    for (const llm of spansNamed(trace, LLM)) expect(llm.model_name).toMatch(/^gpt-4o/);
    expectModelCallsPriced(trace, spansNamed(trace, LLM), { cached: true });
  });

  it('shows input and output on the trace, the LLM spans and the tool span', () => {
    expectScenarioWords(trace, spansNamed(trace, LLM), spanNamed(trace, TOOL_NAME));
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
    await expectTenantFilterFinds(h(), token, trace);
  });
});
