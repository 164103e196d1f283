import { useEffect, useMemo, useRef, useState } from 'react';
import { parseConversation } from '../conversation/parse';
import { pairToolCalls } from '../conversation/pairing';
import type { Conversation, Message, Part } from '../conversation/types';
import { firstMark, highlight } from './highlight';
import { ImageRef, Markdown } from './markdown';
import { Payload } from './payload';
import './conversation.css';

/**
 * An LLM span's input or output as the conversation it was (docs/trace-view.md): messages by role as
 * bubbles, each tool call with its result beside it, long texts folded, markdown rendered safely, a
 * text search's terms marked. "Raw JSON" goes back to the stored text as `Payload` shows it.
 */

const FOLD_CHARS = 1500;

const FORMATS: Record<Conversation['format'], string> = {
  'openai-chat': 'OpenAI chat',
  'openai-responses': 'OpenAI Responses',
  anthropic: 'Anthropic',
  'vercel-ai': 'Vercel AI SDK',
  gemini: 'Gemini',
  genai: 'OTel GenAI',
  openinference: 'OpenInference',
  langchain: 'LangChain',
  text: 'text',
};

type ResultPart = Extract<Part, { type: 'tool_result' }>;

/** Pretty JSON for arguments and results; strings as they are. */
const pretty = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? String(v)));

function Marked({ text, terms }: { text: string; terms: string[] }) {
  return <>{terms.length ? highlight(text, terms) : text}</>;
}

/** A text part: markdown, folded past FOLD_CHARS unless a search term lies past the fold. */
function TextPart({ text, terms }: { text: string; terms: string[] }) {
  const [open, setOpen] = useState(false);
  const long = text.length > FOLD_CHARS;
  const at = useMemo(() => (long && terms.length ? firstMark(text, terms) : -1), [long, text, terms]);
  const folded = long && !open && at + 64 < FOLD_CHARS;
  // Cut at a line or word end before the fold, so the shown part reads whole.
  const cut = Math.max(text.lastIndexOf('\n', FOLD_CHARS), text.lastIndexOf(' ', FOLD_CHARS), FOLD_CHARS / 2);
  return (
    <div className="message-text">
      <Markdown text={folded ? `${text.slice(0, cut)} …` : text} terms={terms} />
      {long && (at < 0 || at + 64 < FOLD_CHARS) && (
        <button className="small" onClick={() => setOpen(!open)}>
          {open ? 'Fold' : `Show all (${text.length.toLocaleString()} characters)`}
        </button>
      )}
    </div>
  );
}

function ToolResult({ part, terms }: { part: ResultPart; terms: string[] }) {
  return (
    <div className={`tool-result${part.is_error ? ' error' : ''}`} data-testid="tool-result">
      <div className="tool-head">
        <span className="role-label">{part.is_error ? 'tool error' : 'tool result'}</span>
        {part.name && <span className="mono">{part.name}</span>}
        {part.tool_call_id && <span className="muted mono">{part.tool_call_id}</span>}
      </div>
      <pre className="payload">
        <Marked text={pretty(part.content)} terms={terms} />
      </pre>
    </div>
  );
}

function PartView({
  part,
  result,
  terms,
}: {
  part: Part;
  /** For a tool call: the result that answered it, drawn beside it. */
  result?: ResultPart;
  terms: string[];
}) {
  switch (part.type) {
    case 'text':
      return <TextPart text={part.text} terms={terms} />;
    case 'reasoning':
      return (
        <details className="reasoning">
          <summary>Reasoning</summary>
          <Marked text={part.text} terms={terms} />
        </details>
      );
    case 'image':
      return <ImageRef src={part.ref} />;
    case 'tool_call':
      return (
        <div className="tool-pair" data-testid="tool-call" data-tool-call-id={part.id ?? ''}>
          <div className="tool-call">
            <div className="tool-head">
              <span className="role-label">tool call</span>
              <span className="mono" data-testid="tool-name">
                {part.name || '(unnamed)'}
              </span>
              {part.id && <span className="muted mono">{part.id}</span>}
            </div>
            <pre className="payload">
              <Marked text={pretty(part.arguments)} terms={terms} />
            </pre>
          </div>
          {result ? (
            <ToolResult part={result} terms={terms} />
          ) : (
            <div className="tool-result pending muted">No result in this span.</div>
          )}
        </div>
      );
    case 'tool_result':
      return <ToolResult part={part} terms={terms} />;
    case 'unknown':
      return (
        <pre className="payload">
          <Marked text={pretty(part.value)} terms={terms} />
        </pre>
      );
  }
}

function Bubble({
  message,
  parts,
  terms,
}: {
  message: Message;
  parts: { part: Part; result?: ResultPart; key: number }[];
  terms: string[];
}) {
  const role = message.role;
  const known = ['system', 'developer', 'user', 'assistant', 'tool'].includes(role) ? role : 'other';
  return (
    <li className={`message role-${known}`} data-testid="message" data-role={role}>
      <div className="message-head">
        <span className="role-label" data-testid="message-role">
          {role}
        </span>
        {message.name && <span className="muted">{message.name}</span>}
      </div>
      {parts.map(({ part, result, key }) => (
        <PartView key={key} part={part} result={result} terms={terms} />
      ))}
    </li>
  );
}

/** The messages; a result drawn beside its call is not drawn again, nor a message left with nothing. */
export function ConversationView({
  conversation,
  label,
  terms = [],
}: {
  conversation: Conversation;
  label: string;
  terms?: string[];
}) {
  const { messages } = conversation;
  const layout = useMemo(() => {
    const pairs = pairToolCalls(messages);
    const resultOf = new Map(pairs.map((p) => [p.call.join(':'), p.result]));
    const placed = new Set(pairs.map((p) => p.result.join(':')));
    return messages
      .map((message, mi) => ({
        message,
        mi,
        parts: message.parts.flatMap((part, pi) => {
          if (placed.has(`${mi}:${pi}`)) return [];
          const r = resultOf.get(`${mi}:${pi}`);
          const result = r ? (messages[r[0]]!.parts[r[1]] as ResultPart) : undefined;
          return [{ part, result, key: pi }];
        }),
      }))
      .filter((m) => m.parts.length > 0 || m.message.parts.length === 0);
  }, [messages]);
  // The list scrolls (not the page) to show its first mark a third of the way down.
  const box = useRef<HTMLOListElement>(null);
  useEffect(() => {
    const list = box.current;
    const mark = list?.querySelector('mark');
    if (!list || !mark) return;
    list.scrollTop += mark.getBoundingClientRect().top - list.getBoundingClientRect().top - list.clientHeight / 3;
  }, [terms]);
  return (
    <ol ref={box} className="conversation" aria-label={label} data-format={conversation.format}>
      {layout.map(({ message, mi, parts }) => (
        <Bubble key={mi} message={message} parts={parts} terms={terms} />
      ))}
    </ol>
  );
}

/**
 * A span's input or output: as a conversation when it or the other side is one in a producer format
 * (plain text beside a conversation is a message too), else as stored. `other` is the other side's text.
 */
export function SpanPayload({
  text,
  other,
  side,
  label,
  terms = [],
}: {
  text: string | null;
  other: string | null;
  side: 'input' | 'output';
  label: string;
  terms?: string[];
}) {
  const [raw, setRaw] = useState(false);
  const conversation = useMemo(() => {
    const mine = parseConversation(text, side);
    const theirs = parseConversation(other, side === 'input' ? 'output' : 'input');
    const structured = (c: Conversation | null) => c !== null && c.format !== 'text';
    return structured(mine) || (mine && structured(theirs)) ? mine : null;
  }, [text, other, side]);
  if (!conversation) return <Payload text={text} label={label} terms={terms} />;
  const n = conversation.messages.length;
  return (
    <div className="stack" style={{ gap: '0.3rem' }}>
      <div className="row spread">
        <span className="muted">
          {raw ? 'As stored' : `${n} message${n === 1 ? '' : 's'} (${FORMATS[conversation.format]})`}
        </span>
        <button className="small" aria-pressed={raw} onClick={() => setRaw(!raw)}>
          {raw ? 'Conversation' : 'Raw JSON'}
        </button>
      </div>
      {raw ? (
        <Payload text={text} label={label} terms={terms} />
      ) : (
        <ConversationView conversation={conversation} label={label} terms={terms} />
      )}
    </div>
  );
}
