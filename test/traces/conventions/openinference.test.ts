import { describe, expect, it } from 'vitest';
import { mapFixture, mapOne, named, parsed } from './support.js';

/** OpenInference (`@arizeai/openinference-instrumentation-openai` 4.2 + `openai` 6): test/fixtures/otlp/openinference-openai.json. */

describe('OpenInference, as recorded', () => {
  const spans = mapFixture('openinference-openai');
  const llm = named(spans, 'OpenAI Chat Completions');

  it('lowercases the span kinds', () => {
    expect(named(spans, 'travel-agent')[0]!.kind).toBe('agent');
    expect(llm.map((s) => s.kind)).toEqual(['llm', 'llm']);
    expect(named(spans, 'get_weather')[0]!.kind).toBe('tool');
  });

  it('reads llm.model_name and the token counts with their cache details', () => {
    for (const s of llm) {
      expect(s).toMatchObject({
        model_name: 'gpt-4o-2024-08-06',
        input_tokens: 120,
        output_tokens: 30,
        total_tokens: 150,
        cache_read_tokens: 40,
      });
      expect(s.metadata['llm.model_name']).toBeUndefined();
      expect(s.metadata['llm.token_count.prompt']).toBeUndefined();
    }
  });

  it('rebuilds the indexed input and output messages, and drops the raw request from metadata', () => {
    const [first, second] = llm;
    expect(parsed(first!.input)).toEqual([
      { role: 'system', content: 'You are a travel agent.' },
      { role: 'user', content: 'What is the weather in Paris today?' },
    ]);
    expect(parsed(first!.output)).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_weather_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      },
    ]);
    expect(parsed(second!.output)).toEqual([{ role: 'assistant', content: 'It is 18°C and sunny in Paris.' }]);
    for (const s of llm) {
      expect(Object.keys(s.metadata).some((k) => k.startsWith('llm.input_messages.') || k === 'input.value')).toBe(
        false,
      );
    }
  });

  it('reads tool and agent input/output from input.value/output.value', () => {
    const tool = named(spans, 'get_weather')[0]!;
    expect(parsed(tool.input)).toEqual({ city: 'Paris' });
    expect(parsed(tool.output)).toEqual({ city: 'Paris', temperature_c: 18, conditions: 'sunny' });
    // The MIME types describe the values: they leave metadata with them.
    expect(tool.metadata).toEqual({ tenant: 'acme' });
    const root = named(spans, 'travel-agent')[0]!;
    expect(root.input).toBe('What is the weather in Paris today?');
    expect(root.output).toBe('It is 18°C and sunny in Paris.');
  });

  it('flattens the metadata JSON so `tenant` is a plain key, and reads user and session', () => {
    for (const s of spans) {
      expect(s).toMatchObject({ user_id: 'user-42', session_id: 'sess-7' });
      expect(s.metadata.tenant).toBe('acme');
      expect(s.metadata.metadata).toBeUndefined();
    }
  });

  it('maps the failing tool to an error', () => {
    const failed = named(spans, 'book_table')[0]!;
    expect(failed).toMatchObject({
      kind: 'tool',
      status: 'error',
      error_type: 'Error',
      error_message: 'No table free at 20:00',
    });
  });
});

describe('OpenInference attributes by hand', () => {
  it('maps every OpenInference kind, and UNKNOWN to custom', () => {
    for (const kind of [
      'LLM',
      'EMBEDDING',
      'CHAIN',
      'TOOL',
      'AGENT',
      'RETRIEVER',
      'RERANKER',
      'GUARDRAIL',
      'EVALUATOR',
    ]) {
      expect(mapOne({ 'openinference.span.kind': kind }).kind).toBe(kind.toLowerCase());
    }
    expect(mapOne({ 'openinference.span.kind': 'UNKNOWN' }).kind).toBe('custom');
  });

  it('reads embedding and reranker models, the sent cost, cache writes and reasoning', () => {
    expect(mapOne({ 'embedding.model_name': 'text-embedding-3-small' }).model_name).toBe('text-embedding-3-small');
    expect(mapOne({ 'reranker.model_name': 'rerank-v3' }).model_name).toBe('rerank-v3');
    const span = mapOne({
      'llm.token_count.prompt': 1000,
      'llm.token_count.completion': 200,
      'llm.token_count.prompt_details.cache_write': 300,
      'llm.token_count.completion_details.reasoning': 150,
      'llm.cost.total': 0.0123,
    });
    expect(span).toMatchObject({
      input_tokens: 1000,
      output_tokens: 200,
      cache_write_tokens: 300,
      reasoning_tokens: 150,
      cost: 0.0123,
    });
  });

  it('rebuilds multi-part contents and tool calls', () => {
    const span = mapOne({
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'look',
      'llm.input_messages.0.message.contents.1.message_content.type': 'image',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'zoom',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"x":2}',
    });
    expect(span.input).toEqual([{ role: 'user', contents: [{ type: 'text', text: 'look' }, { type: 'image' }] }]);
    expect(span.output).toEqual([
      { role: 'assistant', tool_calls: [{ function: { name: 'zoom', arguments: '{"x":2}' } }] },
    ]);
  });

  it('keeps a metadata attribute that is no JSON object as it is', () => {
    expect(mapOne({ metadata: 'plain words' }).metadata).toEqual({ metadata: 'plain words' });
  });
});
