import { describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { settleSpanParts } from '../../src/protocols/span-parts.js';
import { runLangfuseVercel } from './scenarios/langfuse-vercel.js';
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
} from './support/read-back.js';
import { AGENT_NAME, FAILING_TOOL_NAME, MODEL, SESSION_ID, TENANT, TOOL_NAME, USER_ID } from './support/scenario.js';

/**
 * Langfuse's Vercel AI SDK exporter (`langfuse-vercel` 3.39 with `ai` 6, mock gpt-4o) unchanged, its
 * baseUrl pointed at Sightline: the AI SDK's spans arrive as Langfuse ingestion events
 * (/api/public/ingestion), read back through Sightline's own API (docs/integrations/langfuse-api.md,
 * "Vercel AI SDK"). The same call over OTLP is test/integrations/vercel-ai.test.ts.
 */

const h = useHarness();
let token: string;
let trace: StoredTrace;
const STEP = 'ai.generateText.doGenerate';
const toolCalls = () => [
  ...spansNamed(trace, `ai.toolCall ${TOOL_NAME}`),
  ...spansNamed(trace, `ai.toolCall ${FAILING_TOOL_NAME}`),
];

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runLangfuseVercel({ origin, apiKey: token, openaiBaseUrl: 'http://127.0.0.1:9/unused' });
  // Every span whose pieces have come is written (the quiet window passed).
  await settleSpanParts(h().ctx, { now: Date.now() + 3_600_000 });
  trace = await waitForTrace(h(), token, traceId, 6);
});

describe('langfuse-vercel into the Langfuse public API', () => {
  it("names the trace after the call's functionId, the AI SDK's spans beneath its root", () => {
    expect(trace.name).toBe(AGENT_NAME);
    const root = spanNamed(trace, AGENT_NAME);
    expect(root.parent_span_id).toBeNull();
    expect(spanNamed(trace, 'ai.generateText').parent_span_id).toBe(root.span_id);
    expect(trace.spans).toHaveLength(6);
  });

  it('gives the generateText call kind chain, its model steps llm and its tool calls tool', () => {
    expect(spanNamed(trace, 'ai.generateText').kind).toBe('chain');
    expect(spansNamed(trace, STEP).map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(toolCalls().map((s) => s.kind)).toEqual(['tool', 'tool']);
  });

  it('reads model and tokens on each model step, and a cost from the price table, counted once in the trace', () => {
    const steps = spansNamed(trace, STEP);
    for (const step of steps) expect(step.model_name).toMatch(new RegExp(`^${MODEL}`));
    expectModelCallsPriced(trace, steps);
  });

  it('shows input and output on the trace, the model steps and the tool call', () => {
    expectScenarioWords(trace, spansNamed(trace, STEP), spanNamed(trace, `ai.toolCall ${TOOL_NAME}`));
  });

  it('puts the userId and sessionId of the telemetry metadata on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('has no error to show: the exporter drops the span status of the tool that threw (docs say so)', () => {
    expect(spanNamed(trace, `ai.toolCall ${FAILING_TOOL_NAME}`)).toMatchObject({ status: 'unset', output: null });
    expect(trace.error_count).toBe(0);
  });

  it('keeps the telemetry metadata as plain keys that `metadata eq` finds; the AI SDK keys the exporter adds are attributes', async () => {
    expect(trace.metadata_map).toEqual({ tenant: TENANT });
    expect(await listTraceIds(h(), token, [{ field: 'metadata', key: 'tenant', op: 'eq', value: TENANT }])).toEqual([
      trace.trace_id,
    ]);
    for (const call of toolCalls()) {
      expect(call.metadata).toEqual({ tenant: TENANT });
      expect(call.attributes['ai.toolCall.id']).toBeTruthy();
    }
  });
});
