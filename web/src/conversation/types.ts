/**
 * A span's input or output read as a conversation (docs/trace-view.md): messages by role, each a list
 * of parts, whatever format the producer sent. Pure data: the parsers in this folder build it, the
 * trace view's conversation component draws it.
 */

/** Where a JSON-looking string parsed, the parsed value; otherwise the string (arguments, results). */
export type Json = unknown;

export type Part =
  | { type: 'text'; text: string }
  /** A model's reasoning or thinking, shown apart from what it said. */
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call'; id: string | null; name: string; arguments: Json }
  | { type: 'tool_result'; tool_call_id: string | null; name: string | null; content: Json; is_error: boolean }
  /** `ref`: the image's URL, data: URI or file id; never loaded until the reader asks. */
  | { type: 'image'; ref: string }
  /** A part of no known shape: shown as JSON. */
  | { type: 'unknown'; value: Json };

export type Message = { role: string; name: string | null; parts: Part[] };

/** The format the messages were read from (the first that told the shapes apart). */
export type ConversationFormat =
  | 'openai-chat'
  | 'openai-responses'
  | 'anthropic'
  | 'vercel-ai'
  | 'gemini'
  | 'genai'
  | 'openinference'
  | 'langchain'
  | 'text';

export type Conversation = { format: ConversationFormat; messages: Message[] };

/** A tool call and the result that answers it, as indexes: [message, part]. */
export type ToolPair = { call: [number, number]; result: [number, number] };
