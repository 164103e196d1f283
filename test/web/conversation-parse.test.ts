import { describe, expect, it } from 'vitest';
import { parseConversation } from '../../web/src/conversation/parse.js';
import { pairToolCalls } from '../../web/src/conversation/pairing.js';
import type { Conversation, Part } from '../../web/src/conversation/types.js';
import { loadOtlpFixture } from '../support/otlp-fixtures.js';
import { decodeOtlpJson } from '../../src/traces/otlp.js';
import { otlpToSpans } from '../../src/traces/otlp-mapping.js';

/**
 * The trace view's conversation reader (web/src/conversation/, docs/trace-view.md): what the recorded
 * instrumentation libraries really send (test/fixtures/otlp/), both as their attributes and as ingest
 * stores them, and hand-written samples of every other format it reads. Unknown shapes answer null
 * (the view shows JSON), never an error.
 */

const WEATHER = { city: 'Paris', temperature_c: 18, conditions: 'sunny' };
const ANSWER = 'It is 18°C and sunny in Paris.';

const roles = (c: Conversation | null) => c?.messages.map((m) => m.role);
const text = (t: string): Part => ({ type: 'text', text: t });
const call = (id: string | null, name: string, args: unknown): Part => ({
  type: 'tool_call',
  id,
  name,
  arguments: args,
});
const result = (id: string | null, content: unknown, more: Partial<Part> = {}): Part =>
  ({ type: 'tool_result', tool_call_id: id, name: null, content, is_error: false, ...more }) as Part;
/** The pairs as [call name, result content]. */
const paired = (c: Conversation | null) =>
  pairToolCalls(c!.messages).map(({ call: [cm, cp], result: [rm, rp] }) => {
    const callPart = c!.messages[cm]!.parts[cp] as Extract<Part, { type: 'tool_call' }>;
    const resultPart = c!.messages[rm]!.parts[rp] as Extract<Part, { type: 'tool_result' }>;
    return [callPart.name, resultPart.content];
  });

/** A recording's spans as ingest maps them (input/output as stored: text) and their raw attributes. */
function recorded(file: string) {
  const { body } = loadOtlpFixture(file);
  const mapped = otlpToSpans(decodeOtlpJson(body));
  const stored = (v: unknown) => (v === undefined || v === null ? null : typeof v === 'string' ? v : JSON.stringify(v));
  const raw = body.resourceSpans.flatMap((r) =>
    r.scopeSpans.flatMap((s) =>
      (s.spans as unknown as { spanId: string; attributes?: { key: string; value: { stringValue?: string } }[] }[]).map(
        (sp) => ({
          spanId: sp.spanId,
          attrs: Object.fromEntries((sp.attributes ?? []).map((a) => [a.key, a.value.stringValue])),
        }),
      ),
    ),
  );
  return mapped.map((s) => ({
    name: s.name,
    kind: s.kind,
    input: stored(s.input),
    output: stored(s.output),
    attrs: raw.find((r) => r.spanId === s.span_id)!.attrs as Record<string, string | undefined>,
  }));
}
/** The LLM spans of a recording, in start order. */
const llmSpans = (file: string) => recorded(file).filter((s) => s.kind === 'llm' && s.input !== null);

describe('conversation: the recorded libraries, as stored', () => {
  it('Langfuse SDK: OpenAI chat messages, the tool message answering the assistant’s call', () => {
    const spans = llmSpans('langfuse.json');
    const second = spans.find((s) => s.input!.includes('tool_call_id'))!;
    const input = parseConversation(second.input, 'input');
    expect(input?.format).toBe('openai-chat');
    expect(roles(input)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(input!.messages[2]!.parts).toEqual([call('call_weather_1', 'get_weather', { city: 'Paris' })]);
    expect(input!.messages[3]!.parts).toEqual([result('call_weather_1', WEATHER)]);
    expect(paired(input)).toEqual([['get_weather', WEATHER]]);
    expect(parseConversation(second.output, 'output')!.messages).toEqual([
      { role: 'assistant', name: null, parts: [text(ANSWER)] },
    ]);
    // The agent's own input is not a conversation: the view shows it as JSON.
    const root = recorded('langfuse.json').find((s) => s.kind === 'agent')!;
    expect(parseConversation(root.input, 'input')).toBeNull();
  });

  it('OpenInference: llm.input_messages as stored, and as the flattened attributes themselves', () => {
    const spans = llmSpans('openinference-openai.json');
    const second = spans.find((s) => s.input!.includes('tool_call_id'))!;
    const input = parseConversation(second.input, 'input');
    expect(roles(input)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(paired(input)).toEqual([['get_weather', WEATHER]]);
    const first = spans.find((s) => !s.input!.includes('tool_call_id'))!;
    expect(parseConversation(first.output, 'output')!.messages).toEqual([
      { role: 'assistant', name: null, parts: [call('call_weather_1', 'get_weather', { city: 'Paris' })] },
    ]);

    const flattened = Object.fromEntries(Object.entries(second.attrs).filter(([k]) => k.startsWith('llm.')));
    const fromAttrs = parseConversation(JSON.stringify(flattened), 'input');
    expect(fromAttrs?.format).toBe('openinference');
    expect(fromAttrs?.messages).toEqual(input!.messages);
    expect(parseConversation(JSON.stringify(flattened), 'output')!.messages).toEqual([
      { role: 'assistant', name: null, parts: [text(ANSWER)] },
    ]);
    // The trace root's plain question: one user message.
    const root = recorded('openinference-openai.json').find((s) => s.kind === 'agent')!;
    expect(parseConversation(root.input, 'input')).toEqual({
      format: 'text',
      messages: [{ role: 'user', name: null, parts: [text('What is the weather in Paris today?')] }],
    });
  });

  it('OpenLLMetry (Traceloop): GenAI parts with a tool_call_response whose response is a JSON string', () => {
    const spans = llmSpans('traceloop.json');
    const second = spans.find((s) => s.input!.includes('tool_call_response'))!;
    const input = parseConversation(second.input, 'input');
    expect(input?.format).toBe('genai');
    expect(roles(input)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(input!.messages[3]!.parts).toEqual([result('call_weather_1', WEATHER)]);
    expect(paired(input)).toEqual([['get_weather', WEATHER]]);
    expect(parseConversation(second.attrs['gen_ai.input.messages']!, 'input')).toEqual(input);
    const first = spans.find((s) => s !== second)!;
    expect(parseConversation(first.output, 'output')!.messages[0]!.parts).toEqual([
      call('call_weather_1', 'get_weather', { city: 'Paris' }),
    ]);
  });

  it('OTel GenAI conventions: the app’s chat span and the agent root', () => {
    const spans = recorded('otel-genai.json');
    const chat = spans.find((s) => s.kind === 'llm' && s.input)!;
    const input = parseConversation(chat.input, 'input');
    expect(roles(input)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(paired(input)).toEqual([['get_weather', WEATHER]]);
    expect(parseConversation(chat.output, 'output')!.messages).toEqual([
      { role: 'assistant', name: null, parts: [text(ANSWER)] },
    ]);
    // gen_ai.system_instructions alone is a list of parts, not messages: JSON.
    expect(parseConversation(chat.attrs['gen_ai.system_instructions']!, 'input')).toBeNull();
    const root = spans.find((s) => s.kind === 'agent')!;
    expect(roles(parseConversation(root.input, 'input'))).toEqual(['user']);
  });

  it('Vercel AI SDK: ai.prompt.messages with tool-call/tool-result parts, ai.response.toolCalls, ai.prompt', () => {
    const spans = llmSpans('vercel-ai.json');
    const second = spans.find((s) => s.input!.includes('tool-result'))!;
    const input = parseConversation(second.input, 'input');
    expect(input?.format).toBe('vercel-ai');
    expect(roles(input)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(input!.messages[3]!.parts).toEqual([
      { ...result('call_weather_1', WEATHER), name: 'get_weather' },
      { ...result('call_book_1', 'No table free at 20:00'), name: 'book_table', is_error: true },
    ]);
    expect(paired(input)).toEqual([
      ['get_weather', WEATHER],
      ['book_table', 'No table free at 20:00'],
    ]);
    const first = spans.find((s) => s !== second)!;
    expect(parseConversation(first.output, 'output')).toEqual({
      format: 'vercel-ai',
      messages: [
        {
          role: 'assistant',
          name: null,
          parts: [
            call('call_weather_1', 'get_weather', { city: 'Paris' }),
            call('call_book_1', 'book_table', { restaurant: 'Le Procope', time: '20:00' }),
          ],
        },
      ],
    });
    const root = recorded('vercel-ai.json').find((s) => s.name === 'travel-agent')!;
    expect(parseConversation(root.input, 'input')!.messages).toEqual([
      { role: 'system', name: null, parts: [text('You are a travel agent.')] },
      { role: 'user', name: null, parts: [text('What is the weather in Paris today?')] },
    ]);
    expect(parseConversation(root.output, 'output')!.messages).toEqual([
      { role: 'assistant', name: null, parts: [text(ANSWER)] },
    ]);
  });
});

const j = (v: unknown) => JSON.stringify(v);

describe('conversation: hand-written samples of each format', () => {
  it('OpenAI chat: content parts, images, legacy function_call, a request body and a completion', () => {
    const c = parseConversation(
      j({
        model: 'gpt-4o',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
          { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"cat"}' } },
          { role: 'function', name: 'lookup', content: 'a cat' },
        ],
      }),
      'input',
    );
    expect(c?.messages).toEqual([
      { role: 'developer', name: null, parts: [text('Be brief.')] },
      {
        role: 'user',
        name: null,
        parts: [text('What is this?'), { type: 'image', ref: 'https://example.com/cat.png' }],
      },
      { role: 'assistant', name: null, parts: [call(null, 'lookup', { q: 'cat' })] },
      { role: 'tool', name: null, parts: [{ ...result(null, 'a cat'), name: 'lookup' }] },
    ]);
    expect(paired(c)).toEqual([['lookup', 'a cat']]);
    const done = parseConversation(
      j({ id: 'x', choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', refusal: null } }] }),
      'output',
    );
    expect(done?.messages).toEqual([{ role: 'assistant', name: null, parts: [text('Hi')] }]);
  });

  it('OpenAI Responses: input items, function_call and its output, reasoning, instructions', () => {
    const c = parseConversation(
      j({
        model: 'gpt-5',
        instructions: 'You are terse.',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Weather?' },
              { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
            ],
          },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Need the tool.' }] },
          { type: 'function_call', call_id: 'fc_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call', call_id: 'fc_2', name: 'get_time', arguments: '{}' },
          { type: 'function_call_output', call_id: 'fc_2', output: '12:00' },
          { type: 'function_call_output', call_id: 'fc_1', output: '{"temp":3}' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '3°C at noon.' }] },
        ],
      }),
      'input',
    );
    expect(c?.format).toBe('openai-responses');
    expect(roles(c)).toEqual(['system', 'user', 'assistant', 'assistant', 'tool', 'tool', 'assistant']);
    expect(c!.messages[1]!.parts[1]).toEqual({ type: 'image', ref: 'data:image/png;base64,AAAA' });
    expect(c!.messages[2]!.parts).toEqual([{ type: 'reasoning', text: 'Need the tool.' }]);
    // Calls in a row are one assistant turn.
    expect(c!.messages[3]!.parts).toHaveLength(2);
    expect(paired(c)).toEqual([
      ['get_time', '12:00'],
      ['get_weather', { temp: 3 }],
    ]);
    expect(
      roles(
        parseConversation(
          j({ output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }] }),
          'output',
        ),
      ),
    ).toEqual(['assistant']);
  });

  it('Anthropic: system beside the messages, text/tool_use/tool_result/image/thinking blocks, a response', () => {
    const c = parseConversation(
      j({
        model: 'claude-sonnet-4-5',
        system: [{ type: 'text', text: 'You help.' }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
              { type: 'text', text: 'Where?' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Look it up.', signature: 's' },
              { type: 'tool_use', id: 'toolu_1', name: 'locate', input: { photo: 1 } },
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [{ type: 'text', text: 'Rome' }],
                is_error: false,
              },
            ],
          },
        ],
      }),
      'input',
    );
    expect(c?.format).toBe('anthropic');
    expect(c?.messages).toEqual([
      { role: 'system', name: null, parts: [text('You help.')] },
      { role: 'user', name: null, parts: [{ type: 'image', ref: 'data:image/jpeg;base64,/9j/' }, text('Where?')] },
      {
        role: 'assistant',
        name: null,
        parts: [{ type: 'reasoning', text: 'Look it up.' }, call('toolu_1', 'locate', { photo: 1 })],
      },
      { role: 'user', name: null, parts: [result('toolu_1', 'Rome')] },
    ]);
    expect(paired(c)).toEqual([['locate', 'Rome']]);
    const response = parseConversation(
      j({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [{ type: 'text', text: 'Rome.' }],
        stop_reason: 'end_turn',
      }),
      'output',
    );
    expect(response?.messages).toEqual([{ role: 'assistant', name: null, parts: [text('Rome.')] }]);
  });

  it('Vercel AI SDK: a string prompt with a system, v4 tool parts (args/result), image parts', () => {
    expect(parseConversation(j({ system: 'S', prompt: 'Hello' }), 'input')?.messages).toEqual([
      { role: 'system', name: null, parts: [text('S')] },
      { role: 'user', name: null, parts: [text('Hello')] },
    ]);
    const c = parseConversation(
      j({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', image: 'https://example.com/a.png' },
              { type: 'file', data: 'AAAA', mediaType: 'image/png' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'hmm' },
              { type: 'tool-call', toolCallId: 't1', toolName: 'add', args: { a: 1 } },
            ],
          },
          { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'add', result: 2 }] },
        ],
      }),
      'input',
    );
    expect(c?.messages[0]!.parts).toEqual([
      { type: 'image', ref: 'https://example.com/a.png' },
      { type: 'image', ref: 'data:image/png;base64,AAAA' },
    ]);
    expect(c?.messages[1]!.parts[0]).toEqual({ type: 'reasoning', text: 'hmm' });
    expect(paired(c)).toEqual([['add', 2]]);
  });

  it('Gemini: contents with the model role, functionCall/functionResponse paired by name, a response', () => {
    const c = parseConversation(
      j({
        systemInstruction: { parts: [{ text: 'Be kind.' }] },
        contents: [
          {
            role: 'user',
            parts: [{ text: 'Sum 2 and 3, then 4 and 5' }, { inlineData: { mimeType: 'image/png', data: 'QQ==' } }],
          },
          {
            role: 'model',
            parts: [
              { functionCall: { name: 'add', args: { a: 2, b: 3 } } },
              { functionCall: { name: 'add', args: { a: 4, b: 5 } } },
            ],
          },
          {
            role: 'user',
            parts: [
              { functionResponse: { name: 'add', response: { sum: 5 } } },
              { functionResponse: { name: 'add', response: { sum: 9 } } },
            ],
          },
          { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: '5 and 9.' }] },
        ],
      }),
      'input',
    );
    expect(c?.format).toBe('gemini');
    expect(roles(c)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(c!.messages[1]!.parts[1]).toEqual({ type: 'image', ref: 'data:image/png;base64,QQ==' });
    expect(paired(c)).toEqual([
      ['add', { sum: 5 }],
      ['add', { sum: 9 }],
    ]);
    // The earliest open call of that name takes the first result.
    expect(pairToolCalls(c!.messages).map((p) => p.call)).toEqual([
      [2, 0],
      [2, 1],
    ]);
    expect(c!.messages[4]!.parts).toEqual([{ type: 'reasoning', text: 'thinking…' }, text('5 and 9.')]);
    const out = parseConversation(
      j({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, finishReason: 'STOP' }] }),
      'output',
    );
    expect(out?.messages).toEqual([{ role: 'assistant', name: null, parts: [text('Hi')] }]);
  });

  it('GenAI conventions: blob/uri images, reasoning, finish_reason; the older indexed gen_ai.prompt.N keys', () => {
    const c = parseConversation(
      j([
        {
          role: 'user',
          parts: [
            { type: 'uri', modality: 'image', uri: 'https://x.test/i.png' },
            { type: 'blob', modality: 'image', mime_type: 'image/gif', content: 'R0lG' },
          ],
        },
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', content: 'r' },
            { type: 'text', content: 'done' },
          ],
          finish_reason: 'stop',
        },
      ]),
      'input',
    );
    expect(c?.messages[0]!.parts).toEqual([
      { type: 'image', ref: 'https://x.test/i.png' },
      { type: 'image', ref: 'data:image/gif;base64,R0lG' },
    ]);
    expect(c?.messages[1]!.parts).toEqual([{ type: 'reasoning', text: 'r' }, text('done')]);
    const indexed = {
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': 'Hi',
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.tool_calls.0.id': 'c1',
      'gen_ai.prompt.1.tool_calls.0.name': 'f',
      'gen_ai.prompt.1.tool_calls.0.arguments': '{"x":1}',
      'gen_ai.prompt.2.role': 'tool',
      'gen_ai.prompt.2.tool_call_id': 'c1',
      'gen_ai.prompt.2.content': 'ok',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Bye',
    };
    const input = parseConversation(j(indexed), 'input');
    expect(input?.format).toBe('genai');
    expect(roles(input)).toEqual(['user', 'assistant', 'tool']);
    expect(paired(input)).toEqual([['f', 'ok']]);
    expect(parseConversation(j(indexed), 'output')?.messages).toEqual([
      { role: 'assistant', name: null, parts: [text('Bye')] },
    ]);
  });

  it('OpenInference: contents with message_content parts, and the nested form', () => {
    const c = parseConversation(
      j({
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.contents.0.message_content.type': 'text',
        'llm.input_messages.0.message.contents.0.message_content.text': 'See',
        'llm.input_messages.0.message.contents.1.message_content.type': 'image',
        'llm.input_messages.0.message.contents.1.message_content.image.image.url': 'https://x.test/p.png',
      }),
      'input',
    );
    expect(c?.messages).toEqual([
      { role: 'user', name: null, parts: [text('See'), { type: 'image', ref: 'https://x.test/p.png' }] },
    ]);
    const nested = parseConversation(
      j({ llm: { input_messages: [{ message: { role: 'user', content: 'Hi' } }] } }),
      'input',
    );
    expect(nested?.messages).toEqual([{ role: 'user', name: null, parts: [text('Hi')] }]);
  });

  it('LangChain: {messages: [[...]]} of serialised classes, dict messages, generations', () => {
    const c = parseConversation(
      j({
        messages: [
          [
            {
              lc: 1,
              type: 'constructor',
              id: ['langchain', 'schema', 'messages', 'SystemMessage'],
              kwargs: { content: 'Sys' },
            },
            {
              lc: 1,
              type: 'constructor',
              id: ['langchain_core', 'messages', 'HumanMessage'],
              kwargs: { content: 'Hi' },
            },
            {
              lc: 1,
              type: 'constructor',
              id: ['langchain_core', 'messages', 'AIMessage'],
              kwargs: { content: '', tool_calls: [{ id: 'lc1', name: 'search', args: { q: 'x' }, type: 'tool_call' }] },
            },
            {
              lc: 1,
              type: 'constructor',
              id: ['langchain_core', 'messages', 'ToolMessage'],
              kwargs: { content: 'found', tool_call_id: 'lc1' },
            },
          ],
        ],
      }),
      'input',
    );
    expect(c?.format).toBe('langchain');
    expect(roles(c)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(paired(c)).toEqual([['search', 'found']]);
    expect(
      roles(
        parseConversation(
          j([
            { type: 'human', content: 'a' },
            { type: 'ai', data: { content: 'b' } },
          ]),
          'input',
        ),
      ),
    ).toEqual(['user', 'assistant']);
    expect(
      parseConversation(j({ generations: [[{ text: 'Done', generation_info: null }]], llm_output: null }), 'output')
        ?.messages,
    ).toEqual([{ role: 'assistant', name: null, parts: [text('Done')] }]);
  });

  it('plain strings and JSON strings: one message, the user’s on input, the assistant’s on output', () => {
    expect(parseConversation('Hello **there**', 'input')).toEqual({
      format: 'text',
      messages: [{ role: 'user', name: null, parts: [text('Hello **there**')] }],
    });
    expect(parseConversation('"quoted"', 'output')?.messages).toEqual([
      { role: 'assistant', name: null, parts: [text('quoted')] },
    ]);
    expect(parseConversation('{not json', 'output')?.messages[0]!.parts).toEqual([text('{not json')]);
    // Only objects, arrays and strings are read as JSON: a bare number is text.
    expect(parseConversation('42', 'output')?.messages[0]!.parts).toEqual([text('42')]);
  });

  it('unknown shapes: null (shown as JSON), never an error; unknown parts kept as JSON inside a known message', () => {
    for (const v of [
      null,
      '',
      '   ',
      j({ question: 'q' }),
      j([1, 2]),
      j([]),
      j({ messages: [{ no: 'role' }] }),
      j([{ role: 'user', content: 'a' }, { what: 'b' }]),
      j({ input: 'x' }),
      j({ choices: [{ nothing: 1 }] }),
      j([[]]),
      j({ llm: { input_messages: 'no' } }),
    ])
      expect(parseConversation(v, 'input'), String(v)).toBeNull();
    const c = parseConversation(j([{ role: 'user', content: [{ type: 'audio', data: 'x' }, 7, null] }]), 'input');
    expect(c?.messages[0]!.parts).toEqual([
      { type: 'unknown', value: { type: 'audio', data: 'x' } },
      { type: 'unknown', value: 7 },
      { type: 'unknown', value: null },
    ]);
    // A role that is not one of the usual ones stays as sent (lowercased).
    expect(roles(parseConversation(j([{ role: 'Critic', content: 'meh' }]), 'input'))).toEqual(['critic']);
  });

  it('a tool result whose call is in an earlier span stays alone; a call answers once', () => {
    const c = parseConversation(
      j([
        { role: 'tool', tool_call_id: 'gone', content: 'orphan' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: 'not json' } }],
        },
        { role: 'tool', tool_call_id: 'a', content: 'one' },
        { role: 'tool', tool_call_id: 'a', content: 'two' },
      ]),
      'input',
    );
    expect(c!.messages[1]!.parts).toEqual([call('a', 'f', 'not json')]);
    expect(paired(c)).toEqual([['f', 'one']]);
  });
});
