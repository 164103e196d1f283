import { afterAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runOtelGenAi } from './scenarios/otel-genai.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import {
  listenOnLoopback,
  runOnce,
  spanNamed,
  spansNamed,
  waitForTrace,
  type StoredSpan,
  type StoredTrace,
  expectTenantFilterFinds,
} from './support/read-back.js';
import {
  AGENT_NAME,
  ANSWER,
  FAILURE_MESSAGE,
  QUESTION,
  SESSION_ID,
  TENANT,
  TOOL_NAME,
  USAGE,
  USER_ID,
} from './support/scenario.js';

/**
 * The OpenTelemetry GenAI conventions (@opentelemetry/instrumentation-openai on the real `openai`
 * client against a fake provider on loopback, plus the agent, tool and content-carrying chat spans the
 * conventions ask the app to record) exporting over OTLP/HTTP into a running Sightline, read back as a
 * user of the conventions expects (docs/integrations/opentelemetry-genai.md).
 */

const h = useHarness();
let fake: FakeOpenAi;
let token: string;
let trace: StoredTrace;
const CHAT = 'chat gpt-4o';
/** The instrumentation's spans carry no message content (it emits content as log records). */
const withContent = (s: StoredSpan) => s.resource['otel.scope.name'] !== '@opentelemetry/instrumentation-openai';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  fake = await startFakeOpenAi();
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runOtelGenAi({ origin, apiKey: token, openaiBaseUrl: fake.baseUrl });
  expect(fake.requests).toHaveLength(2);
  trace = await waitForTrace(h(), token, traceId, 5);
});
afterAll(async () => fake?.close());

describe('OpenTelemetry GenAI conventions into Sightline', () => {
  it('gives every span the kind of its gen_ai.operation.name', () => {
    expect(spanNamed(trace, `invoke_agent ${AGENT_NAME}`).kind).toBe('agent');
    expect(spansNamed(trace, CHAT).map((s) => s.kind)).toEqual(['llm', 'llm', 'llm']);
    expect(spanNamed(trace, `execute_tool ${TOOL_NAME}`).kind).toBe('tool');
  });

  it('reads model, tokens (cached where sent) and a cost from the price table on each answered chat', () => {
    const answered = spansNamed(trace, CHAT).filter((s) => s.status !== 'error');
    expect(answered).toHaveLength(2);
    for (const chat of answered) {
      expect(chat.model_name).toMatch(/^gpt-4o/);
      expect(chat).toMatchObject({ input_tokens: USAGE.input, output_tokens: USAGE.output });
      expect(chat.cost).toBeGreaterThan(0);
      expect(chat.cost_source).toBe('computed');
    }
    expect(answered.find(withContent)!.cache_read_tokens).toBe(USAGE.cachedInput);
    // The invoke_agent root names a model too but carries no usage: it adds nothing.
    expect(spanNamed(trace, `invoke_agent ${AGENT_NAME}`).cost).toBe(0);
    expect(trace).toMatchObject({ total_input_tokens: 2 * USAGE.input, total_output_tokens: 2 * USAGE.output });
    expect(trace.total_cost).toBeGreaterThan(0);
  });

  it('shows gen_ai.input/output.messages on the trace and the chat span, and the tool call arguments and result', () => {
    expect(trace.input ?? '(null)').toContain(QUESTION);
    expect(trace.output ?? '(null)').toContain(ANSWER);
    const chat = spansNamed(trace, CHAT).filter(withContent);
    expect(chat).toHaveLength(1);
    expect(chat[0]!.input ?? '(null)').toContain(QUESTION);
    expect(chat[0]!.output ?? '(null)').toContain(ANSWER);
    const tool = spanNamed(trace, `execute_tool ${TOOL_NAME}`);
    expect(tool.input ?? '(null)').toContain('Paris');
    expect(tool.output ?? '(null)').toContain('temperature_c');
  });

  it('puts user.id and gen_ai.conversation.id on the trace as user and session', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('marks the rejected chat call as an error with error.type and the status message', () => {
    const failed = spansNamed(trace, CHAT).filter((s) => s.status === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error_type).toBe('RateLimitError');
    expect(failed[0]!.error_message ?? '(null)').toContain(FAILURE_MESSAGE);
    expect(trace.error_count).toBe(1);
  });

  it('finds the trace by its plain `tenant` attribute', async () => {
    expect(trace.metadata_map).toEqual({ tenant: TENANT });
    await expectTenantFilterFinds(h(), token, trace);
  });
});
