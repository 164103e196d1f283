import { describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { runLangfuse } from './scenarios/langfuse.js';
import {
  listenOnLoopback,
  listTraceIds,
  runOnce,
  spanNamed,
  spansNamed,
  waitForTrace,
  type StoredTrace,
  expectScenarioWords,
  expectTenantFilterFinds,
} from './support/read-back.js';
import {
  AGENT_NAME,
  APP_VERSION,
  RELEASE,
  TRACE_NAME,
  LANGFUSE_PROMPT,
  FAILURE_MESSAGE,
  SENT_COST,
  SESSION_ID,
  TENANT,
  TOOL_NAME,
  USAGE,
  USER_ID,
} from './support/scenario.js';

/**
 * The Langfuse JS SDK unchanged (LangfuseSpanProcessor with baseUrl = Sightline, any public key, a
 * Sightline API key as secret key: it posts to /api/public/otel/v1/traces with Basic auth), read back
 * as a Langfuse user expects (docs/integrations/langfuse.md).
 */

const h = useHarness();
let token: string;
let trace: StoredTrace;
const GENERATION = 'chat gpt-4o';

runOnce(async () => {
  const origin = await listenOnLoopback(h());
  token = (await projectWithKey(h())).key.key;
  // No LLM is called: a Langfuse user reports each generation's model, usage and cost by hand.
  const { traceId } = await runLangfuse({ origin, apiKey: token, openaiBaseUrl: 'http://127.0.0.1:9/unused' });
  trace = await waitForTrace(h(), token, traceId, 5);
});

describe('Langfuse SDK into Sightline', () => {
  it("names the trace by the SDK's traceName; the root observation keeps its own name in its attributes (issue 37)", () => {
    expect(trace.name).toBe(TRACE_NAME);
    expect(spanNamed(trace, TRACE_NAME).attributes['otel.span.name']).toBe(AGENT_NAME);
    // Only the root is renamed: the other observations carry langfuse.trace.name too.
    expect(spansNamed(trace, TRACE_NAME)).toHaveLength(1);
  });

  it("keeps the tags as the trace's tags, not one metadata string (issue 37)", () => {
    expect(trace.tags).toEqual(['beta', 'travel']);
    expect(trace.metadata_map['langfuse.trace.tags']).toBeUndefined();
  });

  it('gives every observation the kind of its langfuse.observation.type', () => {
    expect(spanNamed(trace, TRACE_NAME).kind).toBe('agent');
    expect(spansNamed(trace, GENERATION).map((s) => s.kind)).toEqual(['llm', 'llm', 'llm']);
    expect(spanNamed(trace, TOOL_NAME).kind).toBe('tool');
  });

  it('reads model and usage_details, and keeps the cost_details the SDK sent', () => {
    const answered = spansNamed(trace, GENERATION).filter((s) => s.status !== 'error');
    expect(answered).toHaveLength(2);
    for (const generation of answered) {
      expect(generation.model_name).toBe('gpt-4o');
      expect(generation).toMatchObject({
        input_tokens: USAGE.input,
        output_tokens: USAGE.output,
        cache_read_tokens: USAGE.cachedInput,
      });
      expect(generation.cost).toBeCloseTo(SENT_COST.total, 12);
      expect(generation.cost_source).toBe('sent');
    }
    expect(trace).toMatchObject({ total_input_tokens: 2 * USAGE.input, total_output_tokens: 2 * USAGE.output });
    expect(trace.total_cost).toBeCloseTo(2 * SENT_COST.total, 12);
  });

  it('links the generation made with a fetched prompt to its prompt version', () => {
    const linked = spansNamed(trace, GENERATION).filter((s) => s.prompt_name !== null);
    expect(linked.map((s) => [s.prompt_name, s.prompt_version])).toEqual([
      [LANGFUSE_PROMPT.name, LANGFUSE_PROMPT.version],
    ]);
  });

  it('shows input and output on the trace, the generations and the tool', () => {
    expectScenarioWords(trace, spansNamed(trace, GENERATION), spanNamed(trace, TOOL_NAME), 'Paris');
  });

  it('puts the propagated userId and sessionId on the trace', () => {
    expect(trace).toMatchObject({ user_id: USER_ID, session_id: SESSION_ID });
  });

  it('turns level ERROR into an error span with the status message', () => {
    const failed = spansNamed(trace, GENERATION).filter((s) => s.status === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error_message).toBe(FAILURE_MESSAGE);
    expect(trace.error_count).toBe(1);
  });

  it('keeps the propagated metadata as plain keys that `metadata eq` finds', async () => {
    expect(spanNamed(trace, TRACE_NAME).metadata).toMatchObject({ tenant: TENANT });
    expect(trace.metadata_map).toMatchObject({ tenant: TENANT });
    await expectTenantFilterFinds(h(), token, trace);
  });

  it("keeps release and version as the user's metadata `release` and `version`, found by `metadata eq` (issue 37)", async () => {
    for (const s of trace.spans) expect(s.metadata).toMatchObject({ release: RELEASE, version: APP_VERSION });
    expect(await listTraceIds(h(), token, [{ field: 'metadata', key: 'release', op: 'eq', value: RELEASE }])).toEqual([
      trace.trace_id,
    ]);
    expect(
      await listTraceIds(h(), token, [{ field: 'metadata', key: 'version', op: 'eq', value: APP_VERSION }]),
    ).toEqual([trace.trace_id]);
  });

  it("holds the user's metadata only in the trace's metadata; the SDK's attributes stay on their spans (issue 37)", () => {
    expect(trace.metadata_map).toEqual({ tenant: TENANT, release: RELEASE, version: APP_VERSION });
    const generation = spansNamed(trace, GENERATION)[0]!;
    expect(Object.keys(generation.attributes)).toContain('langfuse.observation.model.parameters');
    for (const s of trace.spans) expect(Object.keys(s.metadata).filter((k) => k.startsWith('langfuse.'))).toEqual([]);
  });
});
