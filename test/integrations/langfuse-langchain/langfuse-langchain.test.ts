import { describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../../support/harness.js';
import { settleSpanParts } from '../../../src/protocols/span-parts.js';
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
} from '../support/read-back.js';
import { AGENT_NAME, FAILURE_MESSAGE, MODEL, SESSION_ID, TENANT, TOOL_NAME, USER_ID } from '../support/scenario.js';
import { runLangfuseLangchain } from './scenario.js';

/**
 * Langfuse's LangChain callback handler (`langfuse-langchain` 3.39, LangChain 0.3, a fake chat model
 * and a tool) unchanged, its baseUrl pointed at Sightline: the Langfuse public API's ingestion events,
 * read back through Sightline's own API (docs/integrations/langfuse-api.md, "LangChain").
 *
 * This folder has its own package.json and lock (README.md here): the handler wants LangChain 0.3,
 * the app's other tests LangChain 1.x. Node resolves the imports above from this folder's node_modules.
 */

const h = useHarness();
let token: string;
let trace: StoredTrace;
const GENERATION = 'ScriptedChatModel';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  token = (await projectWithKey(h())).key.key;
  const { traceId } = await runLangfuseLangchain({ origin, apiKey: token });
  // Every span whose pieces have come is written (the quiet window passed).
  await settleSpanParts(h().ctx, { now: Date.now() + 3_600_000 });
  trace = await waitForTrace(h(), token, traceId, 5);
});

const generations = () => [...spansNamed(trace, GENERATION), ...spansNamed(trace, 'FakeStreamingChatModel')];

describe('langfuse-langchain into the Langfuse public API', () => {
  it('makes one root span of the trace and its root run (they share an id), named after the run', () => {
    expect(trace.name).toBe(AGENT_NAME);
    const root = spanNamed(trace, AGENT_NAME);
    expect(root.parent_span_id).toBeNull();
    expect(trace.spans.map((s) => s.name).sort()).toEqual(
      [AGENT_NAME, 'FakeStreamingChatModel', GENERATION, GENERATION, TOOL_NAME].sort(),
    );
    for (const s of trace.spans.filter((x) => x !== root)) expect(s.parent_span_id).toBe(root.span_id);
  });

  it('gives the model calls kind llm and the tool run kind tool', () => {
    expect(generations().map((s) => s.kind)).toEqual(['llm', 'llm', 'llm']);
    expect(spanNamed(trace, TOOL_NAME).kind).toBe('tool');
  });

  it('reads model, tokens (cached too) and a cost from the price table on each model call', () => {
    const answered = spansNamed(trace, GENERATION);
    for (const generation of answered) expect(generation.model_name).toMatch(new RegExp(`^${MODEL}`));
    expectModelCallsPriced(trace, answered, { cached: true });
  });

  it('shows input and output on the trace, the model calls and the tool', () => {
    expectScenarioWords(trace, spansNamed(trace, GENERATION), spanNamed(trace, TOOL_NAME));
  });

  it('puts the langfuseUserId and langfuseSessionId of the run metadata on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('turns the failed model call into an error span with its message', () => {
    const failed = trace.spans.filter((s) => s.status === 'error');
    expect(failed.map((s) => s.name)).toEqual(['FakeStreamingChatModel']);
    expect(failed[0]!.error_message).toContain(FAILURE_MESSAGE);
    expect(trace.error_count).toBe(1);
  });

  it("keeps the run's metadata as plain keys that `metadata eq` finds; LangChain's own keys are attributes", async () => {
    expect(trace.metadata_map).toMatchObject({ tenant: TENANT });
    for (const s of trace.spans) expect(s.metadata).toMatchObject({ tenant: TENANT });
    expect(await listTraceIds(h(), token, [{ field: 'metadata', key: 'tenant', op: 'eq', value: TENANT }])).toEqual([
      trace.trace_id,
    ]);
    for (const generation of generations()) {
      expect(Object.keys(generation.metadata).filter((k) => k.startsWith('ls_'))).toEqual([]);
      expect(generation.attributes.ls_model_type).toBe('chat');
    }
    for (const generation of spansNamed(trace, GENERATION))
      expect(generation.attributes).toMatchObject({ ls_provider: 'openai', ls_model_name: MODEL });
  });
});
