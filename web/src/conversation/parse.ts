import { Hints, isObj, isSdkToolCall, readMessage, readPart, sdkToolCall, type Obj } from './messages.js';
import { unflatten } from './flattened.js';
import type { Conversation, Message, Part } from './types.js';

/**
 * A span's input or output (the stored text) read as a conversation, or null when it is not one: a
 * JSON value of a shape no producer format has falls back to the JSON view, never an error. Text that
 * is not JSON is one message: the user's on the input side, the assistant's on the output side.
 */
export function parseConversation(text: string | null | undefined, side: 'input' | 'output'): Conversation | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  const trimmed = text.trim();
  let value: unknown = text;
  if (/^[[{"]/.test(trimmed)) {
    try {
      value = JSON.parse(trimmed);
    } catch {
      value = text;
    }
  }
  if (typeof value === 'string')
    return {
      format: 'text',
      messages: [{ role: side === 'input' ? 'user' : 'assistant', name: null, parts: [{ type: 'text', text: value }] }],
    };
  const h = new Hints();
  try {
    const messages = readValue(value, side, h);
    if (!messages || messages.length === 0) return null;
    const format = h.format ?? 'openai-chat';
    return { format, messages: format === 'openai-responses' ? mergeCalls(messages) : messages };
  } catch {
    // A shape the readers did not foresee (they read unknown values defensively; this is the backstop).
    return null;
  }
}

/** Every item a message, or null. */
function readMessages(items: unknown[], h: Hints): Message[] | null {
  const out: Message[] = [];
  for (const item of items) {
    const m = readMessage(item, h);
    if (!m) return null;
    out.push(m);
  }
  return out;
}

const KEYS = (v: Obj, allowed: string[]) => Object.keys(v).every((k) => allowed.includes(k));

/** A system prompt given beside the messages: a string, text blocks (Anthropic) or {parts} (Gemini). */
function systemMessage(v: unknown, h: Hints): Message[] {
  if (v === undefined || v === null || v === '') return [];
  if (typeof v === 'string') return [{ role: 'system', name: null, parts: [{ type: 'text', text: v }] }];
  if (Array.isArray(v)) return [{ role: 'system', name: null, parts: v.map((p) => readPart(p, h)) }];
  if (isObj(v) && Array.isArray(v.parts))
    return [{ role: 'system', name: null, parts: v.parts.map((p) => readPart(p, h)) }];
  return [{ role: 'system', name: null, parts: [{ type: 'unknown', value: v }] }];
}

function readValue(value: unknown, side: 'input' | 'output', h: Hints): Message[] | null {
  if (Array.isArray(value)) {
    if (value.length === 0) return null;
    // LangChain batches: [[messages]] (each batch a prompt) and LLMResult generations [[{text, message}]].
    if (value.every(Array.isArray)) {
      h.hint('langchain');
      const flat = (value as unknown[][]).flat();
      if (flat.every((g) => isObj(g) && ('text' in g || 'message' in g) && !('role' in g)))
        return flat.flatMap((g) => generation(g as Obj, h) ?? []);
      return readMessages(flat, h);
    }
    // The AI SDK's `ai.response.toolCalls`: the calls of one assistant turn.
    if (value.every(isSdkToolCall)) {
      h.hint('vercel-ai');
      return [{ role: 'assistant', name: null, parts: value.map((c) => sdkToolCall(c as Obj)) }];
    }
    return readMessages(value, h);
  }
  if (!isObj(value)) return null;
  const flat = unflatten(value);
  if (flat) {
    const [input, output] = flat.openinference
      ? (h.hint('openinference'), [flat.openinference.input, flat.openinference.output])
      : (h.hint('genai'), [flat.genai!.input, flat.genai!.output]);
    const chosen = side === 'input' ? (input ?? output) : (output ?? input);
    return Array.isArray(chosen)
      ? readMessages(
          chosen.filter((m) => m !== undefined),
          h,
        )
      : null;
  }
  // Request bodies and wrappers: OpenAI/Anthropic {messages, system?}, LangChain {messages: [[...]]}.
  if (Array.isArray(value.messages) && (value.messages.length > 0 || value.system)) {
    if (value.messages.every(Array.isArray)) h.hint('langchain');
    else if (KEYS(value, ['system', 'prompt', 'messages'])) h.hint('vercel-ai');
    else if (value.system !== undefined) h.hint('anthropic');
    const messages = readValue(value.messages, side, h);
    return messages ? [...systemMessage(value.system, h), ...messages] : null;
  }
  // The AI SDK's `ai.prompt`: {system?, prompt: string | messages}.
  if ('prompt' in value && KEYS(value, ['system', 'prompt', 'messages'])) {
    const prompt = value.prompt;
    const messages =
      typeof prompt === 'string'
        ? [{ role: 'user', name: null, parts: [{ type: 'text', text: prompt }] as Part[] }]
        : Array.isArray(prompt)
          ? readMessages(prompt, h)
          : null;
    if (!messages) return null;
    h.hint('vercel-ai');
    return [...systemMessage(value.system, h), ...messages];
  }
  // Gemini requests: {contents, systemInstruction?} (the JS SDK's {contents, config: {systemInstruction}}).
  if (Array.isArray(value.contents)) {
    h.hint('gemini');
    const messages = readMessages(value.contents, h);
    const system =
      value.systemInstruction ??
      value.system_instruction ??
      (isObj(value.config) ? value.config.systemInstruction : undefined);
    return messages ? [...systemMessage(system, h), ...messages] : null;
  }
  // Responses requests: {input: string | items, instructions?}.
  if ('input' in value && ('instructions' in value || 'model' in value || Array.isArray(value.input))) {
    const input = value.input;
    const messages =
      typeof input === 'string'
        ? [{ role: 'user', name: null, parts: [{ type: 'text', text: input }] as Part[] }]
        : Array.isArray(input)
          ? readMessages(input, h)
          : null;
    if (!messages) return null;
    h.hint('openai-responses');
    return [...systemMessage(value.instructions, h), ...messages];
  }
  // Responses: {output: items}; chat completions: {choices: [{message}]}; Gemini: {candidates: [{content}]}.
  if (Array.isArray(value.output) && value.output.length > 0) {
    h.hint('openai-responses');
    return readMessages(value.output, h);
  }
  if (Array.isArray(value.choices) && value.choices.length > 0) {
    h.hint('openai-chat');
    const out: Message[] = [];
    for (const c of value.choices) {
      if (isObj(c) && isObj(c.message)) {
        const m = readMessage(c.message, h);
        if (!m) return null;
        out.push(m);
      } else if (isObj(c) && typeof c.text === 'string') {
        out.push({ role: 'assistant', name: null, parts: [{ type: 'text', text: c.text }] });
      } else return null;
    }
    return out;
  }
  if (Array.isArray(value.candidates) && value.candidates.length > 0) {
    h.hint('gemini');
    return readMessages(
      value.candidates.map((c) => (isObj(c) ? c.content : c)),
      h,
    );
  }
  if (Array.isArray(value.generations)) return readValue(value.generations, side, h);
  // One message: OpenAI's, Anthropic's response, GenAI's, Gemini's content, LangChain's.
  const one = readMessage(value, h);
  return one ? [one] : null;
}

function generation(g: Obj, h: Hints): Message[] | null {
  if (g.message !== undefined) {
    const m = readMessage(g.message, h);
    return m ? [m] : null;
  }
  return [{ role: 'assistant', name: null, parts: [{ type: 'text', text: String(g.text) }] }];
}

/** Responses items give each call an item of its own: calls in a row are one assistant turn. */
function mergeCalls(messages: Message[]): Message[] {
  const out: Message[] = [];
  const onlyCalls = (m: Message) =>
    m.role === 'assistant' && m.parts.length > 0 && m.parts.every((p) => p.type === 'tool_call');
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && onlyCalls(last) && onlyCalls(m)) out[out.length - 1] = { ...last, parts: [...last.parts, ...m.parts] };
    else out.push(m);
  }
  return out;
}
