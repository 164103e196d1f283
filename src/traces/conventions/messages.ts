import type { OtlpAttributes, OtlpSpan, OtlpValue } from '../otlp-types.js';
import { jsonObject, parseJson, type Reader } from './values.js';

/**
 * Messages sent in pieces: indexed attributes (`gen_ai.prompt.0.role`, `llm.input_messages.0.message.content`)
 * and GenAI message events (`gen_ai.user.message`, `gen_ai.choice`) rebuilt into one JSON array, so a
 * span's input and output read as the conversation they were.
 */

/** Indexed attribute prefixes → the table's row (precedence.ts) they rebuild. */
export const INDEXED_PREFIXES: ReadonlyMap<string, string> = new Map([
  ['gen_ai.prompt.', 'gen_ai.prompt.N.*'],
  ['gen_ai.completion.', 'gen_ai.completion.N.*'],
  ['llm.input_messages.', 'llm.input_messages.N.*'],
  ['llm.output_messages.', 'llm.output_messages.N.*'],
]);

/** The prefix of `key` among INDEXED_PREFIXES when its next segment is an index; '' otherwise. */
export function indexedPrefix(key: string): string {
  // Cheap first test: every indexed prefix starts with `gen_ai.` or `llm.`.
  const c = key.charCodeAt(0);
  if (c !== 103 /* g */ && c !== 108 /* l */) return '';
  for (const prefix of INDEXED_PREFIXES.keys()) {
    if (key.startsWith(prefix)) {
      const d = key.charCodeAt(prefix.length);
      return d >= 48 && d <= 57 ? prefix : '';
    }
  }
  return '';
}

/** OpenInference wraps each element in a one-key object (`message`, `tool_call`, `message_content`). */
const WRAPPERS = new Set(['message', 'tool_call', 'message_content', 'document']);

/**
 * `[['0.role', 'user'], ['0.content', 'hi'], ['1.tool_calls.0.name', 'f']]` →
 * `[{role: 'user', content: 'hi'}, {tool_calls: [{name: 'f'}]}]`. Indexes are compacted in order
 * (no holes, whatever the numbers), so a stray large index costs nothing.
 */
export function rebuildIndexed(parts: readonly (readonly [string, OtlpValue])[]): unknown[] {
  const root: Record<string, unknown> = Object.create(null);
  for (const [path, value] of parts) {
    const segments = path.split('.');
    if (segments.includes('__proto__')) continue;
    let node = root;
    for (let i = 0; i < segments.length - 1; i++) {
      const next = node[segments[i]!];
      if (next !== null && typeof next === 'object') node = next as Record<string, unknown>;
      else node = node[segments[i]!] = Object.create(null) as Record<string, unknown>;
    }
    node[segments.at(-1)!] = value;
  }
  return toArrays(root) as unknown[];
}

function toArrays(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const entries = Object.entries(node);
  if (entries.length > 0 && entries.every(([k]) => isIndex(k))) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => unwrap(toArrays(v)));
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) out[k] = toArrays(v);
  return out;
}

function unwrap(element: unknown): unknown {
  if (element === null || typeof element !== 'object' || Array.isArray(element)) return element;
  const keys = Object.keys(element);
  return keys.length === 1 && WRAPPERS.has(keys[0]!) ? (element as Record<string, unknown>)[keys[0]!] : element;
}

function isIndex(key: string): boolean {
  if (key === '' || key.length > 9) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/**
 * GenAI message events: the per-message events of the GenAI conventions (`gen_ai.system.message`,
 * `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`, `gen_ai.choice`), their
 * predecessors `gen_ai.content.prompt`/`gen_ai.content.completion`, and the current
 * `gen_ai.client.inference.operation.details`. Undefined fields when the span has none.
 */
export function eventMessages(events: OtlpSpan['events']): { input?: unknown; output?: unknown } {
  let input: unknown[] | undefined;
  let output: unknown[] | undefined;
  let prompt: unknown;
  let completion: unknown;
  for (const event of events) {
    const name = event.name;
    if (!name.startsWith('gen_ai.')) continue;
    const a = event.attributes;
    const role = MESSAGE_EVENTS.get(name);
    if (role) (input ??= []).push(eventMessage(a, role));
    else if (name === 'gen_ai.choice') (output ??= []).push(choice(a));
    else if (name === 'gen_ai.content.prompt') prompt ??= a.get('gen_ai.prompt') ?? undefined;
    else if (name === 'gen_ai.content.completion') completion ??= a.get('gen_ai.completion') ?? undefined;
    else if (name === 'gen_ai.client.inference.operation.details') {
      prompt ??= a.get('gen_ai.input.messages') ?? undefined;
      completion ??= a.get('gen_ai.output.messages') ?? undefined;
    }
  }
  return { input: input ?? prompt, output: output ?? completion };
}

const MESSAGE_EVENTS: ReadonlyMap<string, string> = new Map([
  ['gen_ai.system.message', 'system'],
  ['gen_ai.user.message', 'user'],
  ['gen_ai.assistant.message', 'assistant'],
  ['gen_ai.tool.message', 'tool'],
]);

function eventMessage(a: OtlpAttributes, role: string): Record<string, unknown> {
  // The event body, when an exporter flattened it into one attribute, else its fields.
  const body = jsonObject(a.get('gen_ai.event.content') ?? null) ?? {};
  const message: Record<string, unknown> = { role: a.get('role') ?? body.role ?? role };
  const fields: [string, unknown][] = [
    ['content', a.get('content') ?? body.content],
    ['tool_calls', a.get('tool_calls') ?? body.tool_calls],
    ['tool_call_id', a.get('id') ?? body.id],
  ];
  for (const [field, value] of fields) if (value != null) message[field] = maybeJson(value);
  return message;
}

function choice(a: OtlpAttributes): Record<string, unknown> {
  const body = jsonObject(a.get('gen_ai.event.content') ?? null) ?? {};
  const content = a.get('content');
  const message = a.get('message') ?? body.message ?? (content != null ? { role: 'assistant', content } : undefined);
  const out: Record<string, unknown> = {};
  const fields: [string, unknown][] = [
    ['index', a.get('index') ?? body.index],
    ['finish_reason', a.get('finish_reason') ?? body.finish_reason],
    ['message', message],
  ];
  for (const [field, value] of fields) if (value != null) out[field] = maybeJson(value);
  return out;
}

/** A string that holds a JSON object or array, parsed; anything else as it is. */
function maybeJson(value: unknown): unknown {
  if (typeof value !== 'string' || !(value.startsWith('{') || value.startsWith('['))) return value;
  return parseJson(value) ?? value;
}

/**
 * `gen_ai.system_instructions` beside `gen_ai.input.messages`: the GenAI conventions keep the system
 * prompt apart; it is put first, as a system message, so the input reads whole.
 */
export function withSystemInstructions(messages: unknown, instructions: OtlpValue): unknown {
  const list = maybeJson(messages);
  if (!Array.isArray(list)) return messages;
  const parts = maybeJson(instructions);
  return [{ role: 'system', parts: Array.isArray(parts) ? parts : [{ type: 'text', content: parts }] }, ...list];
}

/**
 * `traceloop.entity.input`/`output` hold the decorated function's call and result as JSON: `{"args":
 * [...], "kwargs": {...}}` for the call, the JSON of the result (a string arrives quoted); from
 * LangChain, `{"inputs": ...}` / `{"outputs": ...}`. The payload itself is kept: the single argument,
 * the keyword arguments when there are no positional ones, the inputs, the outputs, the unquoted
 * string; any other shape as sent.
 */
export function traceloopEntity(wrapper: 'inputs' | 'outputs'): Reader<unknown> {
  return (value) => {
    if (value === null || value === '') return undefined;
    if (typeof value === 'string' && value.startsWith('"')) {
      const unquoted = parseJson(value);
      return typeof unquoted === 'string' ? unquoted : value;
    }
    const call = jsonObject(value);
    if (!call) return value;
    if (Object.hasOwn(call, wrapper)) return call[wrapper] ?? undefined;
    const keys = Object.keys(call);
    const { args, kwargs } = call;
    if (!Array.isArray(args) || keys.some((k) => k !== 'args' && k !== 'kwargs')) return value;
    const namedArgs =
      kwargs !== null && typeof kwargs === 'object' && !Array.isArray(kwargs) ? Object.keys(kwargs).length : 0;
    if (args.length === 0 && namedArgs > 0) return kwargs;
    if (namedArgs === 0) return args.length === 1 ? args[0] : args;
    return value;
  };
}
