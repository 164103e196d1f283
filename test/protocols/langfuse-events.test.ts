import { describe, expect, it } from 'vitest';
import { envelopeOf, mapEvent, scoreOf, type Envelope } from '../../src/protocols/langfuse/events.js';
import { mergeSpanParts, type SpanPart } from '../../src/protocols/span-parts.js';

/** The Langfuse ingestion events as span parts and scores (src/protocols/langfuse/events.ts). Pure. */

const AT = '2026-01-01T10:00:00.000Z';
const event = (type: string, body: Record<string, unknown>, id = `e-${type}`): Envelope => ({
  id,
  type,
  timestamp: AT,
  body,
});
const partOf = (e: Envelope): SpanPart => {
  const mapped = mapEvent(e, Date.parse(AT));
  if (!('part' in mapped)) throw new Error(`not a part: ${JSON.stringify(mapped)}`);
  return mapped.part;
};

describe('Langfuse events', () => {
  it("keeps release and version as the user's metadata, model parameters and levels as the span's attributes (issue 37)", () => {
    const trace = partOf(
      event('trace-create', { id: 't', name: 'n', release: 'v1.4.0', version: 'flow-2', metadata: { tenant: 'acme' } }),
    );
    expect(trace.fields.metadata).toEqual({ tenant: 'acme', release: 'v1.4.0', version: 'flow-2' });
    const generation = partOf(
      event('generation-create', {
        id: 'g',
        traceId: 't',
        version: 'flow-2',
        modelParameters: { temperature: 0.2 },
        level: 'WARNING',
        statusMessage: 'slow',
      }),
    );
    expect(generation.fields.metadata).toEqual({ version: 'flow-2' });
    expect(generation.fields.attributes).toEqual({
      'langfuse.model_parameters.temperature': '0.2',
      'langfuse.level': 'WARNING',
      'langfuse.status_message': 'slow',
    });
    // Pieces of one span merge their attributes key by key, as their metadata.
    const update = partOf(
      event('generation-update', { id: 'g', traceId: 't', modelParameters: { max_tokens: 100 } }, 'e-2'),
    );
    expect(mergeSpanParts([generation, update])?.attributes).toEqual({
      'langfuse.model_parameters.temperature': '0.2',
      'langfuse.model_parameters.max_tokens': '100',
      'langfuse.level': 'WARNING',
      'langfuse.status_message': 'slow',
    });
  });

  it('reads the old usage form (promptTokens…) and its costs; an empty usage says nothing', () => {
    const part = partOf(
      event('generation-update', {
        id: 'g',
        traceId: 't',
        usage: { promptTokens: 11, completionTokens: 4, totalTokens: 15, inputCost: 0.1, outputCost: 0.2 },
      }),
    );
    expect(part.kind).toBe('update');
    expect(part.fields).toMatchObject({ input_tokens: 11, output_tokens: 4, total_tokens: 15 });
    expect(part.fields.cost).toBeCloseTo(0.3, 12);
    const empty = partOf(event('generation-update', { id: 'g', traceId: 't', usage: {} }));
    expect(empty.fields.input_tokens).toBeUndefined();
    expect(empty.fields.cost).toBeUndefined();
  });

  it('gives typed and legacy observation events their kinds', () => {
    expect(partOf(event('tool-create', { id: 'a', traceId: 't', name: 'search' })).fields.kind).toBe('tool');
    expect(partOf(event('observation-create', { id: 'b', traceId: 't', type: 'GENERATION' })).fields.kind).toBe('llm');
    expect(partOf(event('span-create', { id: 'c', traceId: 't' })).fields.kind).toBeUndefined();
    // No parentObservationId: the trace's root span is the parent.
    expect(partOf(event('span-create', { id: 'c', traceId: 't' })).fields.parent_span_id).toBe('t');
  });

  it("joins langfuse-langchain's trace and root span, which share one id, into one root span", () => {
    const trace = partOf(event('trace-create', { id: 'x', name: 'RunnableSequence', userId: 'u', tags: ['a'] }, '1'));
    const span = partOf(
      event('span-create', { id: 'x', traceId: 'x', name: 'RunnableSequence', startTime: AT, input: 'q' }, '2'),
    );
    const end = partOf(event('span-update', { id: 'x', traceId: 'x', endTime: AT, output: 'a' }, '3'));
    const merged = mergeSpanParts([trace, span, end]);
    expect(merged).toMatchObject({ name: 'RunnableSequence', user_id: 'u', input: 'q', output: 'a', tags: ['a'] });
    expect(merged!.parent_span_id).toBeUndefined();
  });

  it("keeps a nested observation's parent when its update names none (the LangChain handler's updates)", () => {
    const create = partOf(
      event('span-create', { id: 'tool', traceId: 't', parentObservationId: 'chain', startTime: AT }, '1'),
    );
    const update = partOf(event('span-update', { id: 'tool', traceId: 't', endTime: AT, output: 'done' }, '2'));
    expect(update.fields.parent_span_id).toBeUndefined();
    expect(mergeSpanParts([create, update])!.parent_span_id).toBe('chain');
  });

  it('orders a create at its start and an ending update at its end, not by when the SDK queued them', () => {
    // The LangChain handler queues a generation's end before its create; the answer's model must win.
    const create = partOf({
      id: '1',
      type: 'generation-create',
      timestamp: '2026-01-01T10:00:00.876Z',
      body: { id: 'g', traceId: 't', startTime: '2026-01-01T10:00:00.866Z', model: 'gpt-4o' },
    });
    const end = partOf({
      id: '2',
      type: 'generation-update',
      timestamp: '2026-01-01T10:00:00.868Z',
      body: { id: 'g', traceId: 't', endTime: '2026-01-01T10:00:00.867Z', model: 'gpt-4o-2024-08-06' },
    });
    expect(mergeSpanParts([create, end])!.model_name).toBe('gpt-4o-2024-08-06');
  });

  it("reads the kinds of langfuse-vercel's AI SDK spans from their operation names", () => {
    const kind = (type: string, name: string) => partOf(event(type, { id: 's', traceId: 't', name })).fields.kind;
    expect(kind('span-create', 'ai.generateText')).toBe('chain');
    expect(kind('span-create', 'ai.streamObject')).toBe('chain');
    expect(kind('span-create', 'ai.toolCall get_weather')).toBe('tool');
    expect(kind('generation-create', 'ai.generateText.doGenerate')).toBe('llm');
    expect(kind('generation-create', 'ai.embedMany.doEmbed')).toBe('embedding');
    // A name outside the AI SDK's operations, or a typed event, keeps what its type says.
    expect(kind('span-create', 'ai.custom-step')).toBeUndefined();
    expect(kind('agent-create', 'ai.generateText')).toBe('agent');
  });

  it('makes a span whose output is a LangChain ToolMessage a tool, as the handler sends it or serialized', () => {
    const sent = {
      lc_serializable: true,
      lc_namespace: ['langchain_core', 'messages'],
      content: '{"temperature_c":18}',
      tool_call_id: 'call_1',
      name: 'get_weather',
    };
    const serialized = { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'ToolMessage'], kwargs: {} };
    for (const output of [sent, serialized])
      expect(partOf(event('span-update', { id: 's', traceId: 't', output })).fields.kind).toBe('tool');
    const ai = { lc_namespace: ['langchain_core', 'messages'], content: 'hi' };
    expect(partOf(event('span-update', { id: 's', traceId: 't', output: ai })).fields.kind).toBeUndefined();
    expect(partOf(event('span-update', { id: 's', traceId: 't', output: 'text' })).fields.kind).toBeUndefined();
  });

  it("moves the frameworks' own metadata keys (LangChain's ls_*, the AI SDK's ai.toolCall.id) to attributes", () => {
    const generation = partOf(
      event('generation-create', {
        id: 'g',
        traceId: 't',
        metadata: { tenant: 'acme', ls_provider: 'openai', ls_model_name: 'gpt-4o', langgraph_node: 'agent' },
      }),
    );
    expect(generation.fields.metadata).toEqual({ tenant: 'acme' });
    expect(generation.fields.attributes).toEqual({
      ls_provider: 'openai',
      ls_model_name: 'gpt-4o',
      langgraph_node: 'agent',
    });
    const trace = partOf(event('trace-create', { id: 't', metadata: { tenant: 'acme', 'ai.toolCall.id': 'call_1' } }));
    expect(trace.fields.metadata).toEqual({ tenant: 'acme' });
    expect(trace.fields.attributes).toEqual({ 'ai.toolCall.id': 'call_1' });
  });

  it('maps score types; TEXT is a categorical score that remembers its type', () => {
    expect(scoreOf({ name: 'ok', value: 1, dataType: 'BOOLEAN' })).toMatchObject({ data_type: 'boolean', value: 1 });
    expect(scoreOf({ name: 'ok', value: 'true', dataType: 'BOOLEAN' })).toMatchObject({ value: 1 });
    expect(scoreOf({ name: 'tone', value: 'kind' })).toMatchObject({ data_type: 'categorical', string_value: 'kind' });
    expect(scoreOf({ name: 'note', value: 'fine', dataType: 'TEXT' })).toMatchObject({
      data_type: 'categorical',
      string_value: 'fine',
      metadata: { 'langfuse.data_type': 'TEXT' },
    });
    expect(mapEvent(event('score-create', { name: 'x', value: 1, dataType: 'VECTOR' }), 0)).toMatchObject({
      status: 400,
    });
  });

  it('refuses a malformed envelope or body alone, with a sentence', () => {
    expect(envelopeOf({ type: 'span-create', body: {} })).toMatchObject({ error: expect.stringContaining('id') });
    expect(envelopeOf({ id: 'a', type: 'span-create' })).toMatchObject({ id: 'a', error: expect.any(String) });
    expect(mapEvent(event('span-create', { id: 'a' }), 0)).toEqual({
      error: 'body.traceId: must be a string of 1 to 128 characters',
      status: 400,
    });
    expect(mapEvent(event('span-create', { id: 'a', traceId: 't', endTime: 'soon' }), 0)).toMatchObject({
      status: 400,
    });
  });
});
