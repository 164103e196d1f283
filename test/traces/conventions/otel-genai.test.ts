import { describe, expect, it } from 'vitest';
import { mapFixture, mapOne, named, parsed, START_NANOS } from './support.js';

/**
 * The OpenTelemetry GenAI conventions (`@opentelemetry/instrumentation-openai` 0.21 and app spans written
 * with semantic-conventions 1.45): test/fixtures/otlp/otel-genai.json.
 */

describe('OTel GenAI, as recorded', () => {
  const spans = mapFixture('otel-genai');
  const chats = named(spans, 'chat gpt-4o');

  it('maps operations to kinds', () => {
    expect(named(spans, 'invoke_agent travel-agent')[0]!.kind).toBe('agent');
    expect(named(spans, 'execute_tool get_weather')[0]!.kind).toBe('tool');
    expect(chats.map((s) => s.kind)).toEqual(['llm', 'llm', 'llm']);
  });

  it('reads model, tokens and cache reads, and keeps the differing response model in attributes', () => {
    const cached = chats.find((s) => s.cache_read_tokens > 0)!;
    expect(cached).toMatchObject({ model_name: 'gpt-4o', input_tokens: 120, output_tokens: 30, cache_read_tokens: 40 });
    expect(cached.attributes?.['gen_ai.response.model']).toBe('gpt-4o-2024-08-06');
  });

  it('joins the system instructions to the input messages', () => {
    const withContent = chats.find((s) => s.input !== null)!;
    const input = parsed(withContent.input) as { role: string; parts: { content: string }[] }[];
    expect(input.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(input[0]!.parts[0]!.content).toBe('You are a travel agent.');
    expect(withContent.attributes?.['gen_ai.system_instructions']).toBeUndefined();
  });

  it('reads tool call arguments and result', () => {
    const tool = named(spans, 'execute_tool get_weather')[0]!;
    expect(parsed(tool.input)).toEqual({ city: 'Paris' });
    expect(parsed(tool.output)).toEqual({ city: 'Paris', temperature_c: 18, conditions: 'sunny' });
  });

  it('reads user, conversation and plain metadata on the agent span', () => {
    const root = named(spans, 'invoke_agent travel-agent')[0]!;
    expect(root).toMatchObject({ user_id: 'user-42', session_id: 'sess-7', status: 'ok' });
    expect(root.metadata.tenant).toBe('acme');
  });

  it('maps an ERROR status with error.type', () => {
    const failed = chats.find((s) => s.status === 'error')!;
    expect(failed).toMatchObject({
      error_type: 'RateLimitError',
      error_message: '429 Rate limit reached for gpt-4o: retry after 20s',
    });
    expect(failed.attributes?.['error.type']).toBeUndefined();
  });
});

describe('OTel GenAI attributes by hand', () => {
  it('maps every listed operation', () => {
    const kinds = {
      chat: 'llm',
      text_completion: 'llm',
      generate_content: 'llm',
      embeddings: 'embedding',
      retrieval: 'retriever',
      execute_tool: 'tool',
      create_agent: 'agent',
      invoke_agent: 'agent',
      invoke_workflow: 'chain',
    };
    for (const [operation, kind] of Object.entries(kinds))
      expect(mapOne({ 'gen_ai.operation.name': operation }).kind).toBe(kind);
  });

  it('rebuilds input and output from the per-message events', () => {
    const event = (name: string, attrs: Record<string, string | number>) => ({
      name,
      timeUnixNano: String(START_NANOS + 1_000_000n),
      attributes: Object.entries(attrs).map(([key, value]) => ({
        key,
        value: typeof value === 'number' ? { intValue: value } : { stringValue: value },
      })),
    });
    const span = mapOne(
      { 'gen_ai.operation.name': 'chat' },
      {
        events: [
          event('gen_ai.system.message', { content: 'be brief' }),
          event('gen_ai.user.message', { content: 'hi' }),
          event('gen_ai.choice', {
            index: 0,
            finish_reason: 'stop',
            message: '{"role":"assistant","content":"hello"}',
          }),
        ],
      },
    );
    expect(span.input).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(span.output).toEqual([
      { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'hello' } },
    ]);
    expect(span.events!.map((e) => e.name)).toEqual(['gen_ai.system.message', 'gen_ai.user.message', 'gen_ai.choice']);
    expect(span.events![0]!.time).toBe('2023-11-14T22:13:20.001Z');

    const older = mapOne(
      {},
      {
        events: [
          event('gen_ai.content.prompt', { 'gen_ai.prompt': '[{"role":"user"}]' }),
          event('gen_ai.content.completion', { 'gen_ai.completion': 'done' }),
        ],
      },
    );
    expect(older).toMatchObject({ input: '[{"role":"user"}]', output: 'done' });
  });

  it('reads the deprecated token names, the sent cost, reasoning and the time to first token in seconds', () => {
    const span = mapOne({
      'gen_ai.usage.prompt_tokens': 100,
      'gen_ai.usage.completion_tokens': 40,
      'gen_ai.usage.reasoning.output_tokens': 25,
      'gen_ai.usage.cache_creation.input_tokens': 10,
      'gen_ai.usage.cost': 0.5,
      'gen_ai.server.time_to_first_token': 0.125,
    });
    expect(span).toMatchObject({
      input_tokens: 100,
      output_tokens: 40,
      reasoning_tokens: 25,
      cache_write_tokens: 10,
      cost: 0.5,
      time_to_first_token_ms: 125,
    });
  });

  it('reads the exception event: type, message and stack trace', () => {
    const span = mapOne(
      { 'error.type': 'fallback' },
      {
        events: [
          {
            name: 'exception',
            timeUnixNano: String(START_NANOS),
            attributes: [
              { key: 'exception.type', value: { stringValue: 'TimeoutError' } },
              { key: 'exception.message', value: { stringValue: 'took too long' } },
              { key: 'exception.stacktrace', value: { stringValue: 'TimeoutError: took too long\n at x' } },
            ],
          },
        ],
      },
    );
    expect(span).toMatchObject({ status: 'error', error_type: 'TimeoutError', error_message: 'took too long' });
    expect(span.metadata).toEqual({});
    expect(span.attributes).toEqual({
      'error.type': 'fallback',
      'exception.stacktrace': 'TimeoutError: took too long\n at x',
    });
    expect(span.events![0]!.attributes!['exception.type']).toBe('TimeoutError');
  });
});
