import type { Message, ToolPair } from './types.js';

/**
 * Each tool result with the call it answers: by id where the format has ids (OpenAI, Anthropic, the
 * AI SDK, GenAI, Responses), else by tool name, the earliest call still unanswered (Gemini without ids).
 * A call answers at most once; a result without a call (its call in an earlier span) stays alone.
 */
export function pairToolCalls(messages: Message[]): ToolPair[] {
  const open: { at: [number, number]; id: string | null; name: string }[] = [];
  const pairs: ToolPair[] = [];
  messages.forEach((m, mi) =>
    m.parts.forEach((p, pi) => {
      if (p.type === 'tool_call') open.push({ at: [mi, pi], id: p.id, name: p.name });
      if (p.type !== 'tool_result') return;
      const i = p.tool_call_id
        ? open.findIndex((c) => c.id === p.tool_call_id)
        : open.findIndex((c) => p.name !== null && c.name === p.name);
      if (i < 0) return;
      pairs.push({ call: open[i]!.at, result: [mi, pi] });
      open.splice(i, 1);
    }),
  );
  return pairs;
}
