import { langfuseCost, langfuseUsage, fitParts, type Usage } from '../../traces/conventions/usage.js';
import { vercelKind } from '../../traces/conventions/vercel.js';
import {
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  type SpanInput,
} from '../../traces/span-input.js';
import { isFrameworkKey } from '../framework-keys.js';
import type { SpanPart } from '../span-parts.js';

/**
 * The Langfuse ingestion events (`POST /api/public/ingestion`, docs/integrations/langfuse-api.md) as
 * span parts and scores. Pure: no I/O. The names match what the OTLP mapping makes of the Langfuse
 * SDK v4/v5's `langfuse.*` attributes (src/traces/conventions/), so a trace reads the same whichever
 * Langfuse SDK sent it.
 */

/** Observation types as span kinds (`langfuse.observation.type` over OTLP reads the same). */
const KINDS: Record<string, string> = {
  GENERATION: 'llm',
  EMBEDDING: 'embedding',
  AGENT: 'agent',
  TOOL: 'tool',
  CHAIN: 'chain',
  RETRIEVER: 'retriever',
  EVALUATOR: 'evaluator',
  GUARDRAIL: 'guardrail',
};

/** `<type>-create` / `<type>-update` event types and the observation type they carry. */
const OBSERVATION_EVENTS: Record<string, { kind: SpanPart['kind']; type: string }> = {
  'span-create': { kind: 'create', type: 'SPAN' },
  'span-update': { kind: 'update', type: 'SPAN' },
  'generation-create': { kind: 'create', type: 'GENERATION' },
  'generation-update': { kind: 'update', type: 'GENERATION' },
  'event-create': { kind: 'create', type: 'EVENT' },
  'observation-create': { kind: 'create', type: '' },
  'observation-update': { kind: 'update', type: '' },
  ...Object.fromEntries(
    ['agent', 'tool', 'chain', 'retriever', 'evaluator', 'embedding', 'guardrail'].flatMap((t) => [
      [`${t}-create`, { kind: 'create' as const, type: t.toUpperCase() }],
      [`${t}-update`, { kind: 'update' as const, type: t.toUpperCase() }],
    ]),
  ),
};

export type Envelope = { id: string; type: string; timestamp?: unknown; body: Record<string, unknown> };

/** What one event becomes: a span part, a score (native POST /scores shape), nothing (sdk-log), or an error. */
export type Mapped =
  { part: SpanPart } | { score: Record<string, unknown> } | { ignored: true } | { error: string; status: number };

class EventError extends Error {}

/** Checks the envelope's shape: the id the answer is keyed by, the type, the body. */
export function envelopeOf(raw: unknown): Envelope | { id: string; error: string } {
  const r = raw as Record<string, unknown> | null;
  const id = typeof r?.id === 'string' && r.id ? r.id : '';
  if (!r || typeof r !== 'object' || Array.isArray(r)) return { id, error: 'an event is an object' };
  if (!id) return { id, error: 'id: an event needs a string id' };
  if (typeof r.type !== 'string') return { id, error: 'type: an event needs a type' };
  if (!r.body || typeof r.body !== 'object' || Array.isArray(r.body))
    return { id, error: 'body: an event needs an object body' };
  return { id, type: r.type, timestamp: r.timestamp, body: r.body as Record<string, unknown> };
}

export function mapEvent(e: Envelope, receivedAt: number): Mapped {
  try {
    if (e.type === 'sdk-log') return { ignored: true };
    if (e.type === 'trace-create') return { part: tracePart(e, receivedAt) };
    if (e.type === 'score-create') return { score: scoreOf(e.body) };
    const observation = OBSERVATION_EVENTS[e.type];
    if (observation) return { part: observationPart(e, observation, receivedAt) };
    return { error: `type: unknown event type '${e.type}'`, status: 400 };
  } catch (error) {
    if (error instanceof EventError) return { error: error.message, status: 400 };
    throw error;
  }
}

function tracePart(e: Envelope, receivedAt: number): SpanPart {
  const b = e.body;
  const id = idOf(b.id, 'body.id');
  const at =
    time(b.timestamp, 'body.timestamp') ?? time(e.timestamp, 'timestamp') ?? new Date(receivedAt).toISOString();
  const metadata = metadataOf(b.metadata);
  const attributes = frameworkKeysOf(metadata);
  // The user's release and version: plain metadata keys, as over OTLP (conventions/metadata.ts).
  if (typeof b.release === 'string' && b.release) metadata.release = b.release;
  if (typeof b.version === 'string' && b.version) metadata.version = b.version;
  const fields: Partial<SpanInput> = {
    start_time: at,
    name: shortText(b.name, 'body.name', 512),
    user_id: shortText(b.userId, 'body.userId'),
    session_id: shortText(b.sessionId, 'body.sessionId'),
    environment: shortText(b.environment, 'body.environment'),
    input: b.input ?? undefined,
    output: b.output ?? undefined,
    metadata,
    attributes,
    tags: tagsOf(b.tags),
  };
  return {
    kind: 'create',
    span_id: id,
    trace_id: id,
    part_id: e.id,
    fields,
    received_at: receivedAt,
    event_time: Date.parse(time(e.timestamp, 'timestamp') ?? at),
  };
}

function observationPart(e: Envelope, ev: { kind: SpanPart['kind']; type: string }, receivedAt: number): SpanPart {
  const b = e.body;
  const id = idOf(b.id, 'body.id');
  const traceId = idOf(b.traceId, 'body.traceId');
  const type = (ev.type || (typeof b.type === 'string' ? b.type : 'SPAN')).toUpperCase();
  const envelopeTime = time(e.timestamp, 'timestamp');
  let start = time(b.startTime, 'body.startTime');
  if (ev.kind === 'create') start ??= envelopeTime ?? new Date(receivedAt).toISOString();
  let end = time(b.endTime, 'body.endTime');
  if (type === 'EVENT' && ev.kind === 'create') end ??= start;
  // An observation without a parent hangs under its trace's root; an update without one says nothing
  // of its parent (the LangChain handler's updates name none, whatever the create said).
  const named = typeof b.parentObservationId === 'string' && b.parentObservationId ? b.parentObservationId : undefined;
  const parent = named ?? (ev.kind === 'create' ? traceId : undefined);
  const metadata = metadataOf(b.metadata);
  if (typeof b.version === 'string' && b.version) metadata.version = b.version;
  // What Langfuse and the framework say about the observation itself: its attributes, not the user's metadata.
  const attributes = frameworkKeysOf(metadata);
  if (b.modelParameters && typeof b.modelParameters === 'object')
    for (const [k, v] of Object.entries(b.modelParameters as Record<string, unknown>))
      if (v !== null && v !== undefined) putMeta(attributes, `langfuse.model_parameters.${k}`, v);
  const level = typeof b.level === 'string' ? b.level.toUpperCase() : '';
  if (level && level !== 'DEFAULT') attributes['langfuse.level'] = level;
  const statusMessage = shortText(b.statusMessage, 'body.statusMessage', 32_768);
  if (statusMessage && level !== 'ERROR') attributes['langfuse.status_message'] = statusMessage;
  const name = shortText(b.name, 'body.name', 512);
  const fields: Partial<SpanInput> = {
    name,
    kind: frameworkKind(type, name, b.output) ?? KINDS[type],
    parent_span_id: parent === id ? undefined : parent,
    start_time: start,
    end_time: end,
    input: b.input ?? undefined,
    output: b.output ?? undefined,
    metadata,
    attributes,
    environment: shortText(b.environment, 'body.environment'),
    model_name: shortText(b.model, 'body.model'),
    prompt_name: shortText(b.promptName, 'body.promptName'),
    prompt_version: promptVersion(b.promptVersion),
    ...(level === 'ERROR' ? { status: 'error' as const, error_message: statusMessage } : {}),
    ...usageFields(b),
  };
  const completion = time(b.completionStartTime, 'body.completionStartTime');
  if (completion && start) {
    const ttft = Date.parse(completion) - Date.parse(start);
    if (ttft >= 0) fields.time_to_first_token_ms = ttft;
  }
  if (parent === id) fields.parent_span_id = undefined;
  return {
    kind: ev.kind,
    span_id: id,
    trace_id: traceId,
    part_id: e.id,
    fields,
    received_at: receivedAt,
    // When the producer made the piece: a create at its start, an update that ends the observation at
    // its end, else when the event was queued. The envelope's timestamp is not enough: the LangChain
    // handler queues a generation's end before its create (both after the call), so by envelope time
    // the create's early model name would win over the answer's.
    event_time: Date.parse(
      (ev.kind === 'create' ? start : end) ?? envelopeTime ?? start ?? end ?? new Date(receivedAt).toISOString(),
    ),
  };
}

/**
 * The kind of an observation sent as a plain span or generation, read from what the framework
 * integrations send: langfuse-vercel names the Vercel AI SDK's spans after their operation
 * (`ai.generateText`, `ai.generateText.doGenerate`, `ai.toolCall get_weather`), read as the OTLP mapping
 * reads them (conventions/vercel.ts); langfuse-langchain sends a tool run as a span, its output (on the
 * update) the LangChain ToolMessage the tool returned. Typed events (`tool-create`, …) keep their type.
 */
function frameworkKind(type: string, name: string | undefined, output: unknown): string | undefined {
  if (type !== 'SPAN' && type !== 'GENERATION') return undefined;
  if (name?.startsWith('ai.')) {
    const kind = vercelKind(name.split(' ', 1)[0], NO_START);
    if (kind) return kind;
  }
  return type === 'SPAN' && isToolMessage(output) ? 'tool' : undefined;
}

/**
 * A LangChain ToolMessage as the Langfuse SDK sends it: the message's own fields (`lc_namespace`
 * `["langchain_core", "messages"]`, `tool_call_id`), or its serialized form
 * (`{lc: 1, type: "constructor", id: [..., "ToolMessage"], kwargs}`).
 */
function isToolMessage(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as Record<string, unknown>;
  if (Array.isArray(v.lc_namespace) && v.lc_namespace.includes('messages')) return typeof v.tool_call_id === 'string';
  return v.type === 'constructor' && Array.isArray(v.id) && v.id[v.id.length - 1] === 'ToolMessage';
}

/**
 * Takes the framework's own keys (LangChain's `ls_*`, the AI SDK's `ai.toolCall.id`, …) out of the
 * metadata, as attributes: the same keys over LangSmith and OTLP are attributes too.
 */
function frameworkKeysOf(metadata: Record<string, string>): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const key of Object.keys(metadata))
    if (isFrameworkKey(key)) {
      attributes[key] = metadata[key]!;
      delete metadata[key];
    }
  return attributes;
}

/**
 * Tokens and cost: `usageDetails` (Langfuse's usage types, or OpenAI's shapes), else the old `usage`
 * (`input`/`output`/`total`, or `promptTokens`…, with `inputCost`/`outputCost`/`totalCost`);
 * `costDetails` (its total, else the sum). An empty `usage: {}` says nothing.
 */
function usageFields(b: Record<string, unknown>): Partial<SpanInput> {
  const out: Partial<SpanInput> = {};
  let usage: Usage | undefined;
  if (b.usageDetails && typeof b.usageDetails === 'object') usage = langfuseUsage(b.usageDetails as never, NO_START);
  const old = b.usage && typeof b.usage === 'object' ? (b.usage as Record<string, unknown>) : undefined;
  if (!usage && old) {
    const counts = Object.fromEntries(
      Object.entries(old).filter(([k]) => !['unit', 'inputCost', 'outputCost', 'totalCost'].includes(k)),
    );
    usage = langfuseUsage(counts as never, NO_START);
  }
  if (usage) {
    fitParts(usage);
    for (const [k, v] of Object.entries(usage)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  let cost: number | undefined;
  if (b.costDetails && typeof b.costDetails === 'object') cost = langfuseCost(b.costDetails as never, NO_START);
  if (cost === undefined && old) {
    const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);
    cost =
      n(old.totalCost) ??
      (n(old.inputCost) !== undefined || n(old.outputCost) !== undefined
        ? (n(old.inputCost) ?? 0) + (n(old.outputCost) ?? 0)
        : undefined);
  }
  if (cost !== undefined) out.cost = cost;
  return out;
}

/** The usage readers don't look at the start. */
const NO_START = { startMs: 0 };

const DATA_TYPES: Record<string, string> = { NUMERIC: 'numeric', CATEGORICAL: 'categorical', BOOLEAN: 'boolean' };

/**
 * A `score-create` body as a native score (POST /scores, source `api`). NUMERIC, CATEGORICAL and
 * BOOLEAN are ours; TEXT and CORRECTION (free text) are stored as categorical, their text the label,
 * with `langfuse.data_type` in metadata. The envelope's body id is the score id, so a re-sent score
 * replaces itself.
 */
export function scoreOf(b: Record<string, unknown>): Record<string, unknown> {
  const declared = typeof b.dataType === 'string' ? b.dataType.toUpperCase() : undefined;
  const metadata = metadataOf(b.metadata);
  let dataType = declared ? DATA_TYPES[declared] : undefined;
  if (declared && !dataType) {
    if (declared !== 'TEXT' && declared !== 'CORRECTION') throw new EventError(`dataType: unknown '${b.dataType}'`);
    dataType = 'categorical';
    metadata['langfuse.data_type'] = declared;
  }
  const value = b.value;
  const score: Record<string, unknown> = {
    score_id: typeof b.id === 'string' && b.id ? b.id : undefined,
    trace_id: typeof b.traceId === 'string' && b.traceId ? b.traceId : undefined,
    span_id: typeof b.observationId === 'string' && b.observationId ? b.observationId : undefined,
    session_id: typeof b.sessionId === 'string' && b.sessionId ? b.sessionId : undefined,
    name: b.name,
    data_type: dataType ?? (typeof value === 'string' ? 'categorical' : 'numeric'),
    comment: typeof b.comment === 'string' ? b.comment : undefined,
    config_id: typeof b.configId === 'string' && b.configId ? b.configId : undefined,
    environment: typeof b.environment === 'string' && b.environment ? b.environment : undefined,
    metadata: Object.keys(metadata).length ? metadata : undefined,
  };
  if (typeof value === 'string') score.string_value = value;
  else score.value = value;
  if (score.data_type === 'boolean' && typeof value === 'string') {
    delete score.string_value;
    score.value = value === 'true' || value === 'True' ? 1 : value === 'false' || value === 'False' ? 0 : value;
  }
  return score;
}

/** Langfuse metadata (any JSON) as ours: plain values as text, objects and arrays as JSON; the rest dropped. */
export function metadataOf(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    if (raw !== undefined && raw !== null && raw !== '') putMeta(out, 'metadata', raw);
    return out;
  }
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) putMeta(out, k, v);
  return out;
}

function putMeta(out: Record<string, string>, key: string, value: unknown): void {
  if (!key || key.length > 256 || value === undefined || value === null) return;
  if (Object.keys(out).length >= MAX_METADATA_KEYS - 8) return;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined || text.length > MAX_METADATA_VALUE_LENGTH) return;
  out[key] = text;
}

function idOf(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length < 1 || value.length > 128)
    throw new EventError(`${field}: must be a string of 1 to 128 characters`);
  return value;
}

function time(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw new EventError(`${field}: must be an ISO date-time`);
  return new Date(ms).toISOString();
}

function shortText(value: unknown, field: string, max = MAX_SHORT_TEXT_LENGTH): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new EventError(`${field}: must be a string`);
  return value.length > max ? value.slice(0, max) : value;
}

function tagsOf(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const tags = value.filter((t): t is string => typeof t === 'string' && t.length > 0 && t.length <= 200);
  return tags.length ? [...new Set(tags)].slice(0, 50) : undefined;
}

function promptVersion(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= 2_147_483_647
    ? value
    : undefined;
}
