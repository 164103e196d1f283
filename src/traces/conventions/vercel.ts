import type { OtlpAttributes } from '../otlp-types.js';
import { parseJson, type Reader } from './values.js';

/**
 * The Vercel AI SDK's `ai.operationId`. Each call (`ai.generateText`, …) is an outer span around one
 * model-call span per step (`….doGenerate`, `….doStream`, `….doEmbed`, `….doRerank`) and one span per
 * tool execution (`ai.toolCall`).
 *
 * The outer span repeats the sum of its steps' usage (`ai.usage.*`): only the inner model-call spans
 * get token counts, so a trace's totals count each step once. The outer span's `ai.usage.*` stay in
 * its metadata, for reading.
 *
 * Outer spans are `chain`, not `agent`: every plain `generateText` is one, with or without tools, and
 * naming each an agent would fill the agent views with single model calls. Their model calls are `llm`.
 */
export const VERCEL_OUTER_OPERATIONS: ReadonlySet<string> = new Set([
  'ai.generateText',
  'ai.streamText',
  'ai.generateObject',
  'ai.streamObject',
  'ai.embed',
  'ai.embedMany',
  'ai.rerank',
]);

const INNER_KINDS: ReadonlyMap<string, string> = new Map([
  ['doGenerate', 'llm'],
  ['doStream', 'llm'],
  ['doEmbed', 'embedding'],
  ['doRerank', 'reranker'],
]);

export const vercelKind: Reader<string> = (value) => {
  if (typeof value !== 'string') return undefined;
  if (value === 'ai.toolCall') return 'tool';
  if (VERCEL_OUTER_OPERATIONS.has(value)) return 'chain';
  const dot = value.lastIndexOf('.');
  return value.startsWith('ai.') && dot > 2 ? INNER_KINDS.get(value.slice(dot + 1)) : undefined;
};

/**
 * A model step that answered with text and called tools (`ai.response.text` and
 * `ai.response.toolCalls` both set): both are its output, as one assistant message
 * `{role, content, tool_calls}`; taking the text alone would lose the calls. Undefined otherwise
 * (then the table's first fitting row is the output: the text, else the calls).
 */
export function vercelStepOutput(attrs: OtlpAttributes, consumed: Set<string>): unknown {
  const text = attrs.get('ai.response.text');
  const calls = attrs.get('ai.response.toolCalls');
  if (typeof text !== 'string' || text === '' || typeof calls !== 'string') return undefined;
  const parsed = parseJson(calls);
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  consumed.add('ai.response.text');
  consumed.add('ai.response.toolCalls');
  return { role: 'assistant', content: text, tool_calls: parsed };
}
