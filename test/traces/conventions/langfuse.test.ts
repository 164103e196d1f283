import { describe, expect, it } from 'vitest';
import { mapFixture, mapOne, named, normalize, parsed } from './support.js';

/** The Langfuse JS SDK (`@langfuse/otel` + `@langfuse/tracing` 5.11): test/fixtures/otlp/langfuse.json. */

describe('Langfuse SDK, as recorded', () => {
  const spans = mapFixture('langfuse');

  it('gives every observation type its kind', () => {
    expect(named(spans, 'travel-agent')[0]!.kind).toBe('agent');
    expect(named(spans, 'get_weather')[0]!.kind).toBe('tool');
    for (const s of named(spans, 'chat gpt-4o')) expect(s.kind).toBe('llm');
  });

  it('reads model, usage details and the sent cost of a generation', () => {
    const ok = named(spans, 'chat gpt-4o').filter((s) => s.status !== 'error');
    expect(ok).toHaveLength(2);
    for (const s of ok) {
      expect(s).toMatchObject({
        model_name: 'gpt-4o',
        input_tokens: 120,
        output_tokens: 30,
        total_tokens: 150,
        cache_read_tokens: 40,
      });
      expect(s.cost).toBeCloseTo(0.0006, 10);
      expect(s.cost_source).toBe('sent');
      expect(Object.keys(s.attributes ?? {}).filter((k) => k.startsWith('langfuse.observation.'))).toEqual([
        'langfuse.observation.model.parameters',
      ]);
    }
  });

  it('reads input, output, user, session, environment and the trace metadata under its plain key', () => {
    const root = named(spans, 'travel-agent')[0]!;
    expect(parsed(root.input)).toEqual({ question: 'What is the weather in Paris today?' });
    expect(parsed(root.output)).toEqual({ answer: 'It is 18°C and sunny in Paris.' });
    // The trace input said the same as the root's own: it leaves metadata.
    expect(root.metadata).toEqual({ tenant: 'acme' });
    expect(root.attributes).toEqual({ 'langfuse.internal.is_app_root': 'true' });
    const tool = named(spans, 'get_weather')[0]!;
    expect(parsed(tool.input)).toEqual({ city: 'Paris' });
    for (const s of spans) {
      expect(s).toMatchObject({ user_id: 'user-42', session_id: 'sess-7', environment: 'staging' });
      expect(s.metadata.tenant).toBe('acme');
      expect(s.resource['service.name']).toBe('travel-agent-service');
    }
  });

  it('turns level=ERROR into an error with its status message', () => {
    const failed = named(spans, 'chat gpt-4o').filter((s) => s.status === 'error');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error_message).toBe('Rate limit reached for gpt-4o: retry after 20s');
    expect(failed[0]!.attributes?.['langfuse.observation.level']).toBeUndefined();
  });
});

describe('Langfuse attributes by hand', () => {
  it('adds disjoint usage types to the totals, as Langfuse prices them', () => {
    const usage = JSON.stringify({
      input: 80,
      output: 20,
      cache_read_input_tokens: 40,
      cache_creation_input_tokens: 10,
      output_reasoning_tokens: 5,
    });
    expect(mapOne({ 'langfuse.observation.usage_details': usage })).toMatchObject({
      input_tokens: 130,
      output_tokens: 25,
      cache_read_tokens: 40,
      cache_write_tokens: 10,
      reasoning_tokens: 5,
    });
    // OpenAI's shape is inclusive.
    const openAi = JSON.stringify({
      promptTokens: 100,
      completionTokens: 20,
      totalTokens: 120,
      input_cached_tokens: 30,
    });
    expect(mapOne({ 'langfuse.observation.usage_details': openAi })).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      total_tokens: 120,
      cache_read_tokens: 30,
    });
  });

  it('takes the cost total, else the sum of the cost details', () => {
    expect(mapOne({ 'langfuse.observation.cost_details': '{"input":0.25,"output":0.5}' }).cost).toBe(0.75);
    expect(mapOne({ 'langfuse.observation.cost_details': '{"totalCost":2}' }).cost).toBe(2);
    const bad = mapOne({ 'langfuse.observation.cost_details': 'not json' });
    expect(bad.cost).toBeUndefined();
    expect(bad.attributes?.['langfuse.observation.cost_details']).toBe('not json');
  });

  it('reads the time to first token from completion_start_time', () => {
    // The SDK sends the Date JSON-serialised (quoted); the span starts at 2023-11-14T22:13:20Z.
    const span = mapOne({ 'langfuse.observation.completion_start_time': '"2023-11-14T22:13:20.250Z"' });
    expect(span.time_to_first_token_ms).toBe(250);
  });

  it('lets a lower convention type an untyped span, and wins over the others', () => {
    expect(mapOne({ 'langfuse.observation.type': 'span', 'openinference.span.kind': 'CHAIN' }).kind).toBe('chain');
    expect(mapOne({ 'langfuse.observation.type': 'event' }).kind).toBe('custom');
    const both = mapOne({
      'langfuse.observation.type': 'generation',
      'gen_ai.operation.name': 'embeddings',
      'langfuse.observation.model.name': 'm1',
      'gen_ai.request.model': 'm2',
    });
    expect(both).toMatchObject({ kind: 'llm', model_name: 'm1' });
    expect(both.metadata).toEqual({});
    expect(both.attributes).toEqual({ 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'm2' });
  });

  it('lifts observation and trace metadata, flat or as one JSON object, and reads the compatibility user/session keys', () => {
    const span = mapOne({
      'langfuse.observation.metadata.step': 'plan',
      'langfuse.trace.metadata': '{"tenant":"acme","tier":{"level":2}}',
      'langfuse.user.id': 'u1',
      'langfuse.session.id': 's1',
    });
    expect(span).toMatchObject({ user_id: 'u1', session_id: 's1' });
    expect(span.metadata).toEqual({ step: 'plan', tenant: 'acme', tier: '{"level":2}' });
    expect(
      mapOne({ 'langfuse.trace.user_id': 'u2', 'langfuse.trace.session_id': 's2', 'user.id': 'other' }),
    ).toMatchObject({ user_id: 'u2', session_id: 's2' });
  });

  it('keeps a WARNING level in attributes and the span unerrored', () => {
    const [span] = normalize([
      mapOne({ 'langfuse.observation.level': 'WARNING', 'langfuse.observation.status_message': 'slow' }),
    ]);
    expect(span!.status).toBe('unset');
    expect(span!.metadata).toEqual({});
    expect(span!.attributes).toMatchObject({
      'langfuse.observation.level': 'WARNING',
      'langfuse.observation.status_message': 'slow',
    });
  });
});
