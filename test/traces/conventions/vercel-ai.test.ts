import { describe, expect, it } from 'vitest';
import { mapFixture, mapOne, named, parsed } from './support.js';

/** The Vercel AI SDK (`ai` 6, `experimental_telemetry`): test/fixtures/otlp/vercel-ai.json. */

describe('Vercel AI SDK, as recorded', () => {
  const spans = mapFixture('vercel-ai');
  // The root call is named after its functionId, each tool call after its tool (issue 37).
  const root = named(spans, 'travel-agent')[0]!;
  const steps = named(spans, 'ai.generateText.doGenerate');
  const tools = [...named(spans, 'get_weather'), ...named(spans, 'book_table')];

  it('names the root call after its functionId and the tool calls after their tools, keeping their own names', () => {
    expect(root.attributes?.['otel.span.name']).toBe('ai.generateText');
    expect(tools.map((t) => [t.name, t.attributes?.['otel.span.name'], t.attributes?.['ai.toolCall.name']])).toEqual([
      ['get_weather', 'ai.toolCall', 'get_weather'],
      ['book_table', 'ai.toolCall', 'book_table'],
    ]);
    // Model steps keep their operation names; nothing else is called ai.toolCall or ai.generateText.
    expect(spans.filter((s) => s.name === 'ai.toolCall' || s.name === 'ai.generateText')).toEqual([]);
    expect(steps.every((s) => s.attributes?.['otel.span.name'] === undefined)).toBe(true);
  });

  it('gives the call, its model calls and its tool calls their kinds', () => {
    expect(root.kind).toBe('chain');
    expect(steps.map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(tools.map((s) => s.kind)).toEqual(['tool', 'tool']);
  });

  it('counts tokens on the model calls only: the outer call repeats their sum', () => {
    for (const s of steps) {
      expect(s).toMatchObject({
        model_name: 'gpt-4o',
        input_tokens: 120,
        output_tokens: 30,
        total_tokens: 150,
        cache_read_tokens: 40,
      });
      // gen_ai.usage.* and ai.usage.* said the same: neither stays in metadata.
      expect(s.attributes?.['ai.usage.inputTokens']).toBeUndefined();
      expect(s.attributes?.['gen_ai.usage.input_tokens']).toBeUndefined();
      expect(s.attributes?.['ai.usage.inputTokenDetails.noCacheTokens']).toBeUndefined();
    }
    expect(root).toMatchObject({ input_tokens: 0, output_tokens: 0, total_tokens: 0, cache_read_tokens: 0 });
    expect(root.attributes?.['ai.usage.inputTokens']).toBe('240');
    const total = spans.reduce((n, s) => n + s.input_tokens, 0);
    expect(total).toBe(240);
  });

  it('reads input and output of the call, the model calls and the tools', () => {
    expect(parsed(root.input)).toEqual({
      system: 'You are a travel agent.',
      prompt: 'What is the weather in Paris today?',
    });
    expect(root.output).toBe('It is 18°C and sunny in Paris.');
    const [first, second] = steps;
    expect((parsed(first!.input) as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user']);
    // The first step answered with tool calls only: its empty text gives way to them.
    expect((parsed(first!.output) as { toolName: string }[]).map((c) => c.toolName)).toEqual([
      'get_weather',
      'book_table',
    ]);
    expect(second!.output).toBe('It is 18°C and sunny in Paris.');
    const weather = tools.find((t) => t.attributes?.['ai.toolCall.name'] === 'get_weather')!;
    expect(parsed(weather.input)).toEqual({ city: 'Paris' });
    expect(parsed(weather.output)).toEqual({ city: 'Paris', temperature_c: 18, conditions: 'sunny' });
  });

  it('reads user, session and the telemetry metadata under plain keys', () => {
    for (const s of spans) {
      expect(s).toMatchObject({ user_id: 'user-42', session_id: 'sess-7', environment: 'staging' });
      expect(s.metadata.tenant).toBe('acme');
      expect(s.attributes?.['ai.telemetry.metadata.tenant']).toBeUndefined();
      expect(s.metadata.userId).toBeUndefined();
    }
  });

  it('maps the failing tool call to an error with its exception event', () => {
    const failed = tools.find((t) => t.attributes?.['ai.toolCall.name'] === 'book_table')!;
    expect(failed).toMatchObject({ status: 'error', error_type: 'Error', error_message: 'No table free at 20:00' });
    expect(failed.events.map((e) => e.name)).toEqual(['exception']);
    expect(failed.events[0]!.attributes['exception.message']).toBe('No table free at 20:00');
    expect(failed.attributes?.['exception.stacktrace']).toContain('No table free at 20:00');
  });
});

describe('Vercel AI SDK attributes by hand', () => {
  it('reads v4 usage names and the streaming timings of a doStream span', () => {
    const span = mapOne({
      'ai.operationId': 'ai.streamText.doStream',
      'ai.model.id': 'claude-3-5-sonnet',
      'ai.usage.promptTokens': 10,
      'ai.usage.completionTokens': 4,
      'ai.response.msToFirstChunk': 312.5,
      'ai.response.avgCompletionTokensPerSecond': 42.5,
    });
    expect(span).toMatchObject({
      kind: 'llm',
      model_name: 'claude-3-5-sonnet',
      input_tokens: 10,
      output_tokens: 4,
      time_to_first_token_ms: 312.5,
      output_tokens_per_second: 42.5,
    });
  });

  it('reads v5+ cache and reasoning names, and adds cache tokens an input count left out', () => {
    const v6 = mapOne({
      'ai.operationId': 'ai.generateText.doGenerate',
      'ai.usage.inputTokens': 100,
      'ai.usage.outputTokens': 50,
      'ai.usage.inputTokenDetails.cacheReadTokens': 60,
      'ai.usage.inputTokenDetails.cacheWriteTokens': 20,
      'ai.usage.outputTokenDetails.reasoningTokens': 30,
    });
    expect(v6).toMatchObject({
      input_tokens: 100,
      output_tokens: 50,
      cache_read_tokens: 60,
      cache_write_tokens: 20,
      reasoning_tokens: 30,
    });
    // v5's Anthropic provider: inputTokens without the cache reads.
    const v5 = mapOne({
      'ai.operationId': 'ai.streamText.doStream',
      'ai.usage.inputTokens': 5,
      'ai.usage.cachedInputTokens': 900,
      'ai.usage.reasoningTokens': 0,
    });
    expect(v5).toMatchObject({ input_tokens: 905, cache_read_tokens: 900, reasoning_tokens: 0 });
  });

  it('maps embeddings and reranking, and keeps every outer call out of the token counts', () => {
    expect(mapOne({ 'ai.operationId': 'ai.embedMany.doEmbed', 'ai.usage.tokens': 12 })).toMatchObject({
      kind: 'embedding',
      input_tokens: 12,
    });
    expect(mapOne({ 'ai.operationId': 'ai.rerank.doRerank' }).kind).toBe('reranker');
    for (const op of ['ai.streamText', 'ai.generateObject', 'ai.streamObject', 'ai.embed', 'ai.embedMany']) {
      const outer = mapOne({
        'ai.operationId': op,
        'ai.usage.tokens': 12,
        'ai.usage.inputTokens': 12,
        'ai.usage.outputTokens': 3,
      });
      expect(outer.kind).toBe('chain');
      expect(outer.input_tokens).toBeUndefined();
      expect(outer.output_tokens).toBeUndefined();
    }
    expect(mapOne({ 'ai.operationId': 'ai.somethingNew' }).kind).toBe('custom');
    expect(mapOne({ 'ai.operationId': 'ai.x.constructor' }).kind).toBe('custom');
  });

  it('keeps both the text and the tool calls of a step that answered with both (issue 37)', () => {
    const calls = [{ toolCallId: 'c1', toolName: 'get_weather', input: { city: 'Paris' } }];
    const span = mapOne({
      'ai.operationId': 'ai.streamText.doStream',
      'ai.response.text': 'Let me check the weather.',
      'ai.response.toolCalls': JSON.stringify(calls),
    });
    expect(span.output).toEqual({
      role: 'assistant',
      content: 'Let me check the weather.',
      tool_calls: calls,
    });
    expect(span.attributes?.['ai.response.toolCalls']).toBeUndefined();
    expect(span.attributes?.['ai.response.text']).toBeUndefined();
    // Text alone, or calls alone, stay as they were.
    expect(mapOne({ 'ai.operationId': 'ai.streamText.doStream', 'ai.response.text': 'Hi' }).output).toBe('Hi');
    expect(mapOne({ 'ai.response.text': '', 'ai.response.toolCalls': JSON.stringify(calls) }).output).toBe(
      JSON.stringify(calls),
    );
  });

  it('names a root span by its trace-name attribute, a child span never (issue 37)', () => {
    const root = mapOne(
      { 'ai.operationId': 'ai.streamText', 'ai.telemetry.functionId': 'support-bot' },
      { name: 'ai.streamText' },
    );
    expect(root.name).toBe('support-bot');
    expect(root.attributes?.['otel.span.name']).toBe('ai.streamText');
    const child = mapOne(
      { 'ai.operationId': 'ai.streamText', 'ai.telemetry.functionId': 'support-bot' },
      { name: 'ai.streamText', parentSpanId: 'a1a2a3a4a5a6a7a8' },
    );
    expect(child.name).toBe('ai.streamText');
    expect(child.attributes?.['otel.span.name']).toBeUndefined();
    // Langfuse's trace name, and ours, win over the functionId.
    expect(mapOne({ 'langfuse.trace.name': 'checkout', 'ai.telemetry.functionId': 'f' }).name).toBe('checkout');
    expect(mapOne({ 'sightline.trace.name': 'ours', 'langfuse.trace.name': 'checkout' }).name).toBe('ours');
  });

  it('reads user_id/session_id spellings and an object response', () => {
    const span = mapOne({
      'ai.operationId': 'ai.generateObject',
      'ai.telemetry.metadata.user_id': 'u',
      'ai.telemetry.metadata.session_id': 's',
      'ai.response.object': '{"a":1}',
    });
    expect(span).toMatchObject({ user_id: 'u', session_id: 's', output: '{"a":1}' });
  });
});
