import { describe, expect, it } from 'vitest';
import { mapFixture, mapOne, named, parsed } from './support.js';

/** OpenLLMetry (`@traceloop/node-server-sdk` 0.27 + `openai` 6): test/fixtures/otlp/traceloop.json. */

describe('Traceloop, as recorded', () => {
  const spans = mapFixture('traceloop');

  it('maps workflow and task to chain, agent and tool to theirs, the model calls to llm', () => {
    expect(named(spans, 'plan_trip.workflow')[0]!.kind).toBe('chain');
    expect(named(spans, 'translate.task')[0]!.kind).toBe('chain');
    expect(named(spans, 'travel-agent.agent')[0]!.kind).toBe('agent');
    expect(named(spans, 'get_weather.tool')[0]!.kind).toBe('tool');
    for (const s of named(spans, 'chat gpt-4o'))
      expect(s).toMatchObject({ kind: 'llm', model_name: 'gpt-4o', input_tokens: 120, output_tokens: 30 });
  });

  it('unwraps the entity input and output of tools, tasks, agents and workflows', () => {
    const tool = named(spans, 'get_weather.tool')[0]!;
    expect(parsed(tool.input)).toEqual({ city: 'Paris' });
    expect(parsed(tool.output)).toEqual({ city: 'Paris', temperature_c: 18, conditions: 'sunny' });
    const workflow = named(spans, 'plan_trip.workflow')[0]!;
    expect(workflow.input).toBe('What is the weather in Paris today?');
    expect(workflow.output).toBe('It is 18°C and sunny in Paris.');
  });

  it('reads the GenAI messages of the model calls', () => {
    const [first] = named(spans, 'chat gpt-4o');
    expect((parsed(first!.input) as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user']);
    expect((parsed(first!.output) as { finish_reason: string }[])[0]!.finish_reason).toBe('tool_call');
  });

  it('lifts the association properties: user, session and tenant on every span', () => {
    for (const s of spans) {
      expect(s).toMatchObject({ user_id: 'user-42', session_id: 'sess-7' });
      expect(s.metadata.tenant).toBe('acme');
      expect(Object.keys(s.metadata).some((k) => k.startsWith('traceloop.association.'))).toBe(false);
    }
  });

  it('keeps the NodeSDK resource (host.*, process.*) out of metadata', () => {
    for (const s of spans) {
      expect(s.resource['process.command_args']).toBeDefined();
      expect(Object.keys(s.metadata).some((k) => k.startsWith('process.') || k.startsWith('host.'))).toBe(false);
    }
  });

  it('maps the failed task to an error from its exception event', () => {
    const task = named(spans, 'translate.task')[0]!;
    expect(task.status).toBe('error');
    expect(task.error_message).toContain('429 Rate limit reached for gpt-4o');
    expect(task.events.map((e) => e.name)).toEqual(['exception']);
  });
});

describe('Traceloop attributes by hand', () => {
  it('rebuilds the indexed gen_ai.prompt.N / gen_ai.completion.N of older versions, tool calls included', () => {
    const span = mapOne({
      'llm.request.type': 'chat',
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'be brief',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'hi',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.name': 'search',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"q":"x"}',
      'gen_ai.usage.prompt_tokens': 11,
      'gen_ai.usage.completion_tokens': 7,
      'llm.usage.total_tokens': 18,
      'gen_ai.usage.cache_read_input_tokens': 4,
      'gen_ai.usage.cache_creation_input_tokens': 2,
    });
    expect(span).toMatchObject({
      kind: 'llm',
      input_tokens: 11,
      output_tokens: 7,
      total_tokens: 18,
      cache_read_tokens: 4,
      cache_write_tokens: 2,
    });
    expect(span.input).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ]);
    expect(span.output).toEqual([
      { role: 'assistant', finish_reason: 'tool_calls', tool_calls: [{ name: 'search', arguments: '{"q":"x"}' }] },
    ]);
    expect(span.metadata).toEqual({});
  });

  it('orders indexed messages by number, not by arrival', () => {
    const span = mapOne({
      'gen_ai.prompt.10.content': 'c',
      'gen_ai.prompt.2.content': 'b',
      'gen_ai.prompt.0.content': 'a',
    });
    expect(span.input).toEqual([{ content: 'a' }, { content: 'b' }, { content: 'c' }]);
  });

  it('maps llm.request.type and the snake_case association properties', () => {
    expect(mapOne({ 'llm.request.type': 'embedding' }).kind).toBe('embedding');
    expect(mapOne({ 'llm.request.type': 'rerank' }).kind).toBe('reranker');
    const span = mapOne({
      'traceloop.span.kind': 'task',
      'traceloop.association.properties.user_id': 'u',
      'traceloop.association.properties.session_id': 's',
    });
    expect(span).toMatchObject({ kind: 'chain', user_id: 'u', session_id: 's' });
  });

  it('unwraps LangChain inputs/outputs and keeps a call with both kinds of arguments whole', () => {
    const span = mapOne({
      'traceloop.entity.input': '{"inputs":{"question":"q"},"tags":[],"metadata":{}}',
      'traceloop.entity.output': '{"outputs":{"answer":"a"},"kwargs":{}}',
    });
    expect(span).toMatchObject({ input: { question: 'q' }, output: { answer: 'a' } });
    const both = '{"args":["a"],"kwargs":{"b":1}}';
    expect(mapOne({ 'traceloop.entity.input': both }).input).toBe(both);
    expect(mapOne({ 'traceloop.entity.input': '{"args":[1,2],"kwargs":{}}' }).input).toEqual([1, 2]);
  });
});
