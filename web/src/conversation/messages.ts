import type { ConversationFormat, Json, Message, Part } from './types.js';

/**
 * One message or one content part of any producer's format, normalised. Each reader answers null for
 * a shape it does not know, so the caller can fall back to showing the value as JSON; a message it
 * does know keeps parts it does not as `unknown` parts.
 */

export type Obj = Record<string, unknown>;

/** The format a reader recognised first (the messages' shapes are shared: OpenAI's is everyone's). */
export class Hints {
  format: ConversationFormat | null = null;
  hint(format: ConversationFormat): void {
    this.format ??= format;
  }
}

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A JSON object or array kept as a string (tool arguments, tool results) is read; anything else stays. */
export function jsonish(v: unknown): Json {
  if (typeof v !== 'string') return v ?? null;
  const t = v.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return v;
  try {
    return JSON.parse(t) as Json;
  } catch {
    return v;
  }
}

const ROLES: Record<string, string> = {
  human: 'user',
  ai: 'assistant',
  model: 'assistant',
  bot: 'assistant',
  chatbot: 'assistant',
  function: 'tool',
  ipython: 'tool',
};
export const normRole = (role: string): string => ROLES[role.toLowerCase()] ?? role.toLowerCase();

/** LangChain's message classes and its dict `type`s, by role. */
const LANGCHAIN_ROLES: Record<string, string> = {
  HumanMessage: 'user',
  HumanMessageChunk: 'user',
  AIMessage: 'assistant',
  AIMessageChunk: 'assistant',
  SystemMessage: 'system',
  SystemMessageChunk: 'system',
  ToolMessage: 'tool',
  ToolMessageChunk: 'tool',
  FunctionMessage: 'tool',
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
  function: 'tool',
};

const image = (ref: string): Part => ({ type: 'image', ref });
const dataUri = (mime: unknown, data: unknown): string =>
  String(data).startsWith('data:')
    ? String(data)
    : `data:${str(mime) ?? 'application/octet-stream'};base64,${String(data)}`;

/** What a tool result's `content` holds: text blocks joined, other blocks as they are. */
function resultContent(v: unknown): Json {
  if (Array.isArray(v) && v.every((b) => isObj(b) && b.type === 'text' && typeof b.text === 'string'))
    return v.map((b) => (b as Obj).text as string).join('\n');
  return jsonish(v);
}

/** One content part of any format (OpenAI, Responses, Anthropic, the AI SDK, GenAI, Gemini, OpenInference). */
export function readPart(p: unknown, h: Hints): Part {
  if (typeof p === 'string') return { type: 'text', text: p };
  if (!isObj(p)) return { type: 'unknown', value: p ?? null };
  // OpenInference wraps each part: {message_content: {type, text, image: {image: {url}}}}.
  if (isObj(p.message_content)) {
    h.hint('openinference');
    const c = p.message_content;
    if (c.type === 'image' && isObj(c.image) && isObj(c.image.image) && typeof c.image.image.url === 'string')
      return image(c.image.image.url);
    if (typeof c.text === 'string') return { type: 'text', text: c.text };
    return { type: 'unknown', value: p };
  }
  switch (p.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      if (typeof p.text === 'string') return { type: 'text', text: p.text };
      if (typeof p.content === 'string') return { type: 'text', text: p.content }; // GenAI
      break;
    case 'refusal':
      if (typeof p.refusal === 'string') return { type: 'text', text: p.refusal };
      break;
    case 'image_url': {
      const url = isObj(p.image_url) ? p.image_url.url : p.image_url;
      if (typeof url === 'string') return image(url);
      break;
    }
    case 'input_image':
      h.hint('openai-responses');
      if (typeof p.image_url === 'string') return image(p.image_url);
      if (typeof p.file_id === 'string') return image(p.file_id);
      break;
    case 'image':
      if (isObj(p.source)) {
        h.hint('anthropic');
        if (p.source.type === 'url' && typeof p.source.url === 'string') return image(p.source.url);
        if (p.source.data !== undefined) return image(dataUri(p.source.media_type, p.source.data));
      }
      if (typeof p.image === 'string') {
        h.hint('vercel-ai');
        return image(/^(https?|data):/.test(p.image) ? p.image : dataUri(p.mediaType ?? p.mimeType, p.image));
      }
      break;
    case 'file':
      if (typeof p.data === 'string' && /^image\//.test(String(p.mediaType ?? p.mimeType ?? ''))) {
        h.hint('vercel-ai');
        return image(/^(https?|data):/.test(p.data) ? p.data : dataUri(p.mediaType ?? p.mimeType, p.data));
      }
      break;
    case 'tool_use':
    case 'server_tool_use':
      h.hint('anthropic');
      return { type: 'tool_call', id: str(p.id), name: str(p.name) ?? '', arguments: jsonish(p.input) };
    case 'tool_result':
      h.hint('anthropic');
      return {
        type: 'tool_result',
        tool_call_id: str(p.tool_use_id),
        name: null,
        content: resultContent(p.content),
        is_error: p.is_error === true,
      };
    case 'tool-call':
      h.hint('vercel-ai');
      return {
        type: 'tool_call',
        id: str(p.toolCallId),
        name: str(p.toolName) ?? '',
        arguments: jsonish(p.input ?? p.args),
      };
    case 'tool-result': {
      h.hint('vercel-ai');
      // AI SDK 5+: output {type: json | text | error-json | error-text | content, value}; 4: result.
      const out = p.output;
      const typed = isObj(out) && typeof out.type === 'string' && 'value' in out;
      return {
        type: 'tool_result',
        tool_call_id: str(p.toolCallId),
        name: str(p.toolName),
        content: typed ? resultContent(out.value) : jsonish(out ?? p.result),
        is_error: p.isError === true || (typed && String(out.type).startsWith('error')),
      };
    }
    case 'tool_call':
      h.hint('genai');
      return { type: 'tool_call', id: str(p.id), name: str(p.name) ?? '', arguments: jsonish(p.arguments) };
    case 'tool_call_response':
      h.hint('genai');
      return {
        type: 'tool_result',
        tool_call_id: str(p.id),
        name: null,
        content: jsonish(p.response ?? p.result),
        is_error: false,
      };
    case 'reasoning':
    case 'thinking': {
      const summary = Array.isArray(p.summary)
        ? p.summary.map((s) => (isObj(s) ? String(s.text ?? '') : String(s))).join('\n')
        : null;
      const text = str(p.text) ?? str(p.content) ?? str(p.thinking) ?? summary;
      if (text !== null) return { type: 'reasoning', text };
      break;
    }
    case 'redacted_thinking':
      return { type: 'reasoning', text: '(redacted thinking)' };
    case 'blob':
      h.hint('genai');
      if (p.modality === 'image' || /^image\//.test(String(p.mime_type ?? '')))
        return image(dataUri(p.mime_type, p.content));
      break;
    case 'uri':
      h.hint('genai');
      if ((p.modality === 'image' || /^image\//.test(String(p.mime_type ?? ''))) && typeof p.uri === 'string')
        return image(p.uri);
      break;
  }
  // Gemini parts have no `type`: one key says what they are.
  if (p.type === undefined) {
    if (typeof p.text === 'string') return { type: p.thought === true ? 'reasoning' : 'text', text: p.text };
    if (isObj(p.functionCall)) {
      h.hint('gemini');
      const f = p.functionCall;
      return { type: 'tool_call', id: str(f.id), name: str(f.name) ?? '', arguments: jsonish(f.args) };
    }
    if (isObj(p.functionResponse)) {
      h.hint('gemini');
      const f = p.functionResponse;
      return {
        type: 'tool_result',
        tool_call_id: str(f.id),
        name: str(f.name),
        content: jsonish(f.response),
        is_error: false,
      };
    }
    if (isObj(p.inlineData) && /^image\//.test(String(p.inlineData.mimeType ?? ''))) {
      h.hint('gemini');
      return image(dataUri(p.inlineData.mimeType, p.inlineData.data));
    }
    if (
      isObj(p.fileData) &&
      typeof p.fileData.fileUri === 'string' &&
      /^image\//.test(String(p.fileData.mimeType ?? ''))
    )
      return image(p.fileData.fileUri);
  }
  return { type: 'unknown', value: p };
}

/** One entry of a `tool_calls` list: OpenAI's, OpenInference's wrapped one, LangChain's. */
function readToolCall(c: unknown, h: Hints): Part {
  if (!isObj(c)) return { type: 'unknown', value: c ?? null };
  if (isObj(c.tool_call)) {
    h.hint('openinference');
    return readToolCall(c.tool_call, h);
  }
  if (isObj(c.function))
    return {
      type: 'tool_call',
      id: str(c.id),
      name: str(c.function.name) ?? '',
      arguments: jsonish(c.function.arguments),
    };
  if (typeof c.name === 'string')
    return { type: 'tool_call', id: str(c.id), name: c.name, arguments: jsonish(c.args ?? c.arguments ?? c.input) };
  return { type: 'unknown', value: c };
}

function contentParts(content: unknown, h: Hints): Part[] {
  if (content === undefined || content === null || content === '') return [];
  if (Array.isArray(content)) return content.map((p) => readPart(p, h));
  return [readPart(content, h)];
}

/** The AI SDK's `ai.response.toolCalls` entries: {toolCallId, toolName, input | args}. */
export const isSdkToolCall = (v: unknown): v is Obj =>
  isObj(v) && typeof v.toolCallId === 'string' && typeof v.toolName === 'string' && v.type === undefined;

export function sdkToolCall(v: Obj): Part {
  return {
    type: 'tool_call',
    id: v.toolCallId as string,
    name: v.toolName as string,
    arguments: jsonish(v.input ?? v.args),
  };
}

/** Responses API items that are not messages: calls, their outputs, reasoning. */
function responsesItem(v: Obj, h: Hints): Message | null {
  const role = (parts: Part[], r = 'assistant'): Message => (
    h.hint('openai-responses'),
    { role: r, name: null, parts }
  );
  switch (v.type) {
    case 'function_call':
    case 'custom_tool_call':
      return role([
        {
          type: 'tool_call',
          id: str(v.call_id) ?? str(v.id),
          name: str(v.name) ?? '',
          arguments: jsonish(v.arguments ?? v.input),
        },
      ]);
    case 'function_call_output':
    case 'custom_tool_call_output':
      return role(
        [
          {
            type: 'tool_result',
            tool_call_id: str(v.call_id),
            name: null,
            content: resultContent(v.output),
            is_error: false,
          },
        ],
        'tool',
      );
    case 'reasoning':
      return role([readPart(v, h)]);
  }
  if (typeof v.type === 'string' && /_call(_output)?$/.test(v.type)) return role([{ type: 'unknown', value: v }]);
  return null;
}

/** A message of any format, or null when `v` is not one. */
export function readMessage(v: unknown, h: Hints): Message | null {
  if (!isObj(v)) return null;
  // OpenInference: {message: {role, content, contents, tool_calls, tool_call_id}}.
  if (isObj(v.message) && Object.keys(v).length === 1) {
    h.hint('openinference');
    return readMessage(v.message, h);
  }
  // LangChain serialised: {lc: 1, type: "constructor", id: [..., "HumanMessage"], kwargs}.
  if (v.lc !== undefined && Array.isArray(v.id) && isObj(v.kwargs)) {
    const cls = String(v.id[v.id.length - 1]);
    const role = LANGCHAIN_ROLES[cls] ?? (cls === 'ChatMessage' ? str(v.kwargs.role) : null);
    if (!role) return null;
    h.hint('langchain');
    return readMessage({ ...v.kwargs, role, lc: undefined }, h);
  }
  if (typeof v.role !== 'string') {
    // LangChain's dict form: {type: "human" | "ai" | ..., content} or {type, data: {content}}.
    const role = typeof v.type === 'string' ? LANGCHAIN_ROLES[v.type] : undefined;
    if (role && (v.content !== undefined || isObj(v.data))) {
      h.hint('langchain');
      return readMessage({ ...(isObj(v.data) ? v.data : v), type: undefined, role }, h);
    }
    return responsesItem(v, h);
  }
  if (v.type === 'message' && !('parts' in v)) h.hint('openai-responses');
  const role = normRole(v.role);
  const parts: Part[] = [];
  if (Array.isArray(v.parts)) {
    // GenAI conventions' parts carry a `type`; Gemini's do not.
    h.hint(v.parts.some((p) => isObj(p) && typeof p.type === 'string') ? 'genai' : 'gemini');
    parts.push(...v.parts.map((p) => readPart(p, h)));
  }
  if (typeof v.reasoning_content === 'string') parts.push({ type: 'reasoning', text: v.reasoning_content });
  const content = v.content ?? (Array.isArray(v.contents) ? v.contents : undefined);
  const toolId = str(v.tool_call_id);
  if (role === 'tool' && !Array.isArray(content) && content !== undefined && content !== null) {
    // OpenAI's tool and function messages: the whole content is the result.
    parts.push({
      type: 'tool_result',
      tool_call_id: toolId,
      name: str(v.name),
      content: jsonish(content),
      is_error: false,
    });
  } else if (
    role === 'tool' &&
    toolId &&
    Array.isArray(content) &&
    !content.some((p) => isObj(p) && /result/.test(String(p.type)))
  ) {
    parts.push({
      type: 'tool_result',
      tool_call_id: toolId,
      name: str(v.name),
      content: resultContent(content),
      is_error: false,
    });
  } else {
    parts.push(...contentParts(content, h));
  }
  if (typeof v.refusal === 'string') parts.push({ type: 'text', text: v.refusal });
  if (Array.isArray(v.tool_calls)) parts.push(...v.tool_calls.map((c) => readToolCall(c, h)));
  else if (isObj(v.additional_kwargs) && Array.isArray(v.additional_kwargs.tool_calls))
    parts.push(...v.additional_kwargs.tool_calls.map((c) => readToolCall(c, h)));
  if (isObj(v.function_call)) parts.push(readToolCall({ function: v.function_call }, h));
  return { role, name: role === 'tool' ? null : str(v.name), parts };
}
