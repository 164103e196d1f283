import {
  MAX_ERROR_MESSAGE_LENGTH,
  MAX_EVENT_ATTRIBUTES,
  MAX_KIND_LENGTH,
  MAX_METADATA_KEY_LENGTH,
  MAX_METADATA_KEYS,
  MAX_METADATA_VALUE_LENGTH,
  MAX_NAME_LENGTH,
  MAX_SHORT_TEXT_LENGTH,
  MAX_SPAN_EVENTS,
  MAX_SPAN_LINKS,
} from './span-input.js';
import type { SpanInput } from './span-input.js';
import type { OtlpAttributes, OtlpSpan, OtlpTraceRequest, OtlpValue } from './otlp-types.js';
import {
  COMPANIONS,
  SOURCES,
  TOKEN_FIELDS,
  type Convention,
  type Field,
  type Source,
} from './conventions/precedence.js';
import {
  eventMessages,
  INDEXED_PREFIXES,
  indexedPrefix,
  rebuildIndexed,
  withSystemInstructions,
} from './conventions/messages.js';
import { isConventionAttribute, jsonMetadata, liftedKey } from './conventions/metadata.js';
import { fitParts, type Usage } from './conventions/usage.js';
import { VERCEL_OUTER_OPERATIONS, vercelStepOutput } from './conventions/vercel.js';
import { conventionalName, OWN_NAME_KEY } from './conventions/names.js';
import { tagsOf } from './conventions/tags.js';
import { asString, text, type ReadContext } from './conventions/values.js';

/**
 * OTLP spans as ingest spans (docs/integrations/mapping.md). Pure: no I/O. Each span's attributes are
 * read in one pass, each looked up in the convention table (conventions/precedence.ts); then each
 * field takes the first fitting value in precedence order. An attribute used for a field is not kept
 * again; the others stay on the span, as its metadata (the user's) or its attributes (the
 * conventions'). Values that don't fit a field (a negative token count) stay there rather than
 * getting the span rejected: an OTLP exporter can't fix one span.
 */

/** Keys kept per span in its metadata (the user's lifted metadata first), and as many in its attributes. */
export const MAX_OTLP_METADATA_KEYS = 128;

export function otlpToSpans(request: OtlpTraceRequest): SpanInput[] {
  const spans: SpanInput[] = [];
  for (const rs of request.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      // Shared by the scope's spans: the producer's identity, the same on each of them.
      const resource = resourceOf(rs.resource, ss.scope);
      for (const span of ss.spans) spans.push(mapSpan(span, rs.resource, resource));
    }
  }
  return spans;
}

interface Candidate {
  source: Source;
  /** The attribute(s) it was read from: one key, or the keys of a rebuilt message array. */
  keys: string | string[];
  value: OtlpValue | unknown;
}

type Found = Partial<Record<Field, Candidate[]>>;

/** A string map as a span stores it, with the count of entries its caps dropped. */
type StringMap = { map: Record<string, string>; dropped: number };

function mapSpan(span: OtlpSpan, resourceAttrs: OtlpAttributes, resource: StringMap): SpanInput {
  const attrs = span.attributes;
  const ctx: ReadContext = { startMs: Number(span.startTimeUnixNano / 1_000_000n) };

  // The one pass: each attribute is a candidate for at most one field.
  const found: Found = {};
  let indexed: Map<string, { keys: string[]; parts: [string, OtlpValue][] }> | undefined;
  for (const [key, value] of attrs) {
    const source = SOURCES.get(key);
    if (source) {
      (found[source.field] ??= []).push({ source, keys: key, value });
      continue;
    }
    const prefix = indexedPrefix(key);
    if (prefix) {
      indexed ??= new Map();
      let group = indexed.get(prefix);
      if (!group) indexed.set(prefix, (group = { keys: [], parts: [] }));
      group.keys.push(key);
      group.parts.push([key.slice(prefix.length), value]);
    }
  }
  if (indexed) {
    for (const [prefix, group] of indexed)
      add(found, INDEXED_PREFIXES.get(prefix)!, group.keys, rebuildIndexed(group.parts));
  }
  if (span.events.length > 0) {
    const messages = eventMessages(span.events);
    if (messages.input !== undefined) add(found, 'event gen_ai.*.message', [], messages.input);
    if (messages.output !== undefined) add(found, 'event gen_ai.choice', [], messages.output);
  }

  const consumed = new Set<string>();
  const pick = <T>(field: Field, preset?: T, skip?: Convention) =>
    resolve<T>(found[field], ctx, consumed, preset, skip);

  // Errors: ERROR status, Langfuse's level=ERROR, or an exception event unless the span was
  // explicitly set OK (OTel: OK is final). The last exception event describes the error.
  const exception = span.events.filter((e) => e.name === 'exception').at(-1)?.attributes;
  const langfuseError = text(attrs.get('langfuse.observation.level') ?? null, ctx)?.toUpperCase() === 'ERROR';
  const code = span.status.code;
  const status = code === 2 || ((exception || langfuseError) && code !== 1) ? 'error' : code === 1 ? 'ok' : 'unset';
  if (langfuseError) consumed.add('langfuse.observation.level');
  const errorType = firstText(exception, 'exception.type') ?? take(attrs, 'error.type', consumed);
  const statusMessage = langfuseError ? take(attrs, 'langfuse.observation.status_message', consumed) : undefined;
  const errorMessage =
    firstText(exception, 'exception.message') ??
    statusMessage ??
    (status === 'error' && span.status.message ? span.status.message : undefined);

  // Token counts: Langfuse's usage details first, then the table; a Vercel outer call's usage repeats its steps'.
  const operation = attrs.get('ai.operationId');
  const skipVercel = typeof operation === 'string' && VERCEL_OUTER_OPERATIONS.has(operation) ? 'vercel' : undefined;
  const group = pick<Usage>('usage') ?? {};
  const usage: Usage = {};
  for (const field of TOKEN_FIELDS) usage[field] = pick<number>(field, group[field], skipVercel);
  fitParts(usage);

  const input = pickContent(found.input, ctx, consumed, attrs);
  const output = vercelStepOutput(attrs, consumed) ?? pickContent(found.output, ctx, consumed, attrs);
  const renamed = conventionalName(span.name, attrs, !span.parentSpanId);
  const tags = tagsOf(attrs, consumed);

  const mapped: SpanInput = {
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId || null,
    name: (renamed ?? span.name).slice(0, MAX_NAME_LENGTH),
    kind: (pick<string>('kind') ?? 'custom').slice(0, MAX_KIND_LENGTH),
    // 0 means "not set" in OTLP; validateSpans rejects the empty start_time.
    start_time: span.startTimeUnixNano > 0n ? nanosToIso(span.startTimeUnixNano) : '',
    end_time: span.endTimeUnixNano > 0n ? nanosToIso(span.endTimeUnixNano) : null,
    status,
    error_type: cap(errorType, MAX_SHORT_TEXT_LENGTH),
    error_message: cap(errorMessage, MAX_ERROR_MESSAGE_LENGTH),
    model_name: cap(pick<string>('model_name'), MAX_SHORT_TEXT_LENGTH),
    environment: cap(pick<string>('environment') ?? environmentOf(resourceAttrs), MAX_SHORT_TEXT_LENGTH),
    user_id: cap(pick<string>('user_id'), MAX_SHORT_TEXT_LENGTH),
    session_id: cap(pick<string>('session_id'), MAX_SHORT_TEXT_LENGTH),
    input,
    output,
    cost: pick<number>('cost'),
    ...definedOnly(usage),
    evaluation_run_id: cap(pick<string>('evaluation_run_id'), MAX_SHORT_TEXT_LENGTH),
  };
  const ttft = pick<number>('time_to_first_token_ms', undefined, skipVercel);
  if (ttft !== undefined && ttft <= 2_147_483_647) mapped.time_to_first_token_ms = ttft;
  if (tags?.length) mapped.tags = tags;
  const tps = pick<number>('output_tokens_per_second', undefined, skipVercel);
  if (tps !== undefined) mapped.output_tokens_per_second = tps;
  const promptName = cap(pick<string>('prompt_name'), MAX_SHORT_TEXT_LENGTH);
  if (promptName !== undefined) mapped.prompt_name = promptName;
  const promptVersion = pick<number>('prompt_version');
  if (promptVersion !== undefined) mapped.prompt_version = promptVersion;

  let dropped = span.droppedAttributesCount + span.droppedEventsCount + span.droppedLinksCount + resource.dropped;
  const stacktrace = firstText(exception, 'exception.stacktrace');
  const kept = metadataOf(attrs, consumed, stacktrace, renamed === undefined ? undefined : span.name);
  mapped.metadata = kept.metadata.map;
  if (Object.keys(kept.attributes.map).length > 0) mapped.attributes = kept.attributes.map;
  dropped += kept.metadata.dropped + kept.attributes.dropped;
  if (Object.keys(resource.map).length > 0) mapped.resource = resource.map;

  if (span.events.length > 0) {
    const startIso = mapped.start_time;
    mapped.events = span.events.slice(0, MAX_SPAN_EVENTS).map((e) => {
      const attributes = stringMap(e.attributes, MAX_EVENT_ATTRIBUTES);
      dropped += attributes.dropped + e.droppedAttributesCount;
      const time = e.timeUnixNano > 0n ? nanosToIso(e.timeUnixNano) : startIso;
      return { name: e.name.slice(0, MAX_NAME_LENGTH) || 'event', time, attributes: attributes.map };
    });
    dropped += Math.max(0, span.events.length - MAX_SPAN_EVENTS);
  }
  if (span.links.length > 0) {
    const links: NonNullable<SpanInput['links']> = [];
    for (const l of span.links) {
      if (!l.traceId || !l.spanId || links.length >= MAX_SPAN_LINKS) {
        dropped++;
        continue;
      }
      const attributes = stringMap(l.attributes, MAX_EVENT_ATTRIBUTES);
      dropped += attributes.dropped + l.droppedAttributesCount;
      links.push({ trace_id: l.traceId, span_id: l.spanId, attributes: attributes.map });
    }
    if (links.length > 0) mapped.links = links;
  }
  if (dropped > 0) mapped.dropped_attributes_count = dropped;
  return mapped;
}

function add(found: Found, rowKey: string, keys: string[], value: unknown): void {
  const source = SOURCES.get(rowKey)!;
  (found[source.field] ??= []).push({ source, keys, value });
}

/**
 * The first fitting candidate in precedence order (or `preset`, decided before: Langfuse's usage
 * details). Candidates saying the same as the winner are consumed with it: a copy in another
 * convention (`ai.usage.inputTokens` beside `gen_ai.usage.input_tokens`) adds nothing to metadata.
 */
function resolve<T>(
  candidates: Candidate[] | undefined,
  ctx: ReadContext,
  consumed: Set<string>,
  preset?: T,
  skip?: Convention,
): T | undefined {
  if (!candidates) return preset;
  if (candidates.length > 1) candidates.sort((a, b) => a.source.rank - b.source.rank);
  let winner = preset;
  for (const c of candidates) {
    if (skip !== undefined && c.source.row.from === skip) continue;
    const value = c.source.row.read(c.value as OtlpValue, ctx) as T | undefined;
    if (value === undefined) continue;
    if (winner === undefined) winner = value;
    else if (value !== winner) continue;
    consume(c, consumed);
  }
  return winner;
}

/**
 * Input or output: the first fitting candidate. Every other representation of it leaves metadata
 * too (OpenInference's `input.value` beside its messages, Vercel's `ai.prompt` beside
 * `ai.prompt.messages`): the same content in another shape. Kept apart unless equal to the winner:
 * Langfuse's trace-level input/output, which describe the trace, and GenAI system instructions
 * (unless joined to the messages).
 */
function pickContent(
  candidates: Candidate[] | undefined,
  ctx: ReadContext,
  consumed: Set<string>,
  attrs: OtlpAttributes,
): unknown {
  if (!candidates) return undefined;
  if (candidates.length > 1) candidates.sort((a, b) => a.source.rank - b.source.rank);
  let winner: Candidate | undefined;
  let value: unknown;
  for (const c of candidates) {
    value = c.source.row.read(c.value as OtlpValue, ctx);
    if (value !== undefined) {
      winner = c;
      break;
    }
  }
  if (!winner) return undefined;
  for (const c of candidates) {
    const key = c.source.row.key;
    const apart = key.startsWith('langfuse.trace.') || key === 'gen_ai.system_instructions';
    if (c === winner || !apart || c.value === winner.value) consume(c, consumed);
  }
  const instructions = attrs.get('gen_ai.system_instructions');
  if (winner.source.row.key === 'gen_ai.input.messages' && instructions != null) {
    consumed.add('gen_ai.system_instructions');
    return withSystemInstructions(value, instructions);
  }
  return value;
}

function consume(c: Candidate, consumed: Set<string>): void {
  if (typeof c.keys !== 'string') {
    for (const key of c.keys) consumed.add(key);
    return;
  }
  consumed.add(c.keys);
  const companions = COMPANIONS.get(c.keys);
  if (companions) for (const key of companions) consumed.add(key);
}

function take(attrs: OtlpAttributes, key: string, consumed: Set<string>): string | undefined {
  const value = text(attrs.get(key) ?? null, { startMs: 0 });
  if (value !== undefined) consumed.add(key);
  return value;
}

function firstText(attrs: OtlpAttributes | undefined, key: string): string | undefined {
  return attrs ? text(attrs.get(key) ?? null, { startMs: 0 }) : undefined;
}

function environmentOf(resource: OtlpAttributes): string | undefined {
  const ctx = { startMs: 0 };
  return (
    text(resource.get('deployment.environment.name') ?? null, ctx) ??
    text(resource.get('deployment.environment') ?? null, ctx)
  );
}

/**
 * The span's metadata and attributes (docs/traces.md, "Metadata and attributes"). Metadata is the
 * user's: what an SDK nests under its metadata prefix, lifted to plain keys, and attributes of the
 * user's own namespace (`tenant`, `app.feature`). Attributes are the conventions' (`ai.toolCall.id`,
 * `gen_ai.response.id`, `http.*`; conventions/metadata.ts) that no field consumed, the span's own
 * name when a convention renamed it (conventions/names.ts) and the exception's stack trace: they
 * describe the span, so they stay on it and stay out of the trace's `metadata_map`. Each map keeps
 * up to MAX_OTLP_METADATA_KEYS keys, lifted metadata first; keys past the cap, too long, or repeated
 * by a lifted key are counted as dropped.
 */
function metadataOf(
  attrs: OtlpAttributes,
  consumed: Set<string>,
  stacktrace: string | undefined,
  ownName: string | undefined,
): { metadata: StringMap; attributes: StringMap } {
  const lifted: [string, unknown][] = [];
  const own: [string, unknown][] = [];
  const conventional: [string, unknown][] = [];
  for (const [key, value] of attrs) {
    if (value === null || consumed.has(key)) continue;
    const plainKey = liftedKey(key);
    if (plainKey) {
      lifted.push([plainKey, value]);
      continue;
    }
    const entries = jsonMetadata(key, value);
    if (entries) lifted.push(...entries);
    else if (isConventionAttribute(key)) conventional.push([key, value]);
    else own.push([key, value]);
  }
  if (ownName !== undefined) conventional.push([OWN_NAME_KEY, ownName]);
  if (stacktrace) conventional.push(['exception.stacktrace', stacktrace]);
  return {
    metadata: cappedMap(lifted.length > 0 ? [...lifted, ...own] : own),
    attributes: cappedMap(conventional),
  };
}

function cappedMap(entries: [string, unknown][]): StringMap {
  const map: Record<string, string> = {};
  let keys = 0;
  let dropped = 0;
  for (const [key, value] of entries) {
    if (value === null || value === undefined) continue;
    if (
      keys >= MAX_OTLP_METADATA_KEYS ||
      key.length > MAX_METADATA_KEY_LENGTH ||
      key === '__proto__' ||
      Object.hasOwn(map, key)
    ) {
      dropped++;
      continue;
    }
    map[key] = asString(value as OtlpValue).slice(0, MAX_METADATA_VALUE_LENGTH);
    keys++;
  }
  return { map, dropped };
}

/** Resource attributes and the instrumentation scope, as strings, kept apart from metadata. */
function resourceOf(resource: OtlpAttributes, scope: { name: string; version: string }): StringMap {
  const all = new Map(resource);
  if (scope.name) all.set('otel.scope.name', scope.name);
  if (scope.version) all.set('otel.scope.version', scope.version);
  return stringMap(all, MAX_METADATA_KEYS);
}

function stringMap(attrs: OtlpAttributes, max: number): StringMap {
  const map: Record<string, string> = {};
  let keys = 0;
  let dropped = 0;
  for (const [key, value] of attrs) {
    if (value === null) continue;
    if (keys >= max || key.length > MAX_METADATA_KEY_LENGTH || key === '__proto__') {
      dropped++;
      continue;
    }
    map[key] = asString(value).slice(0, MAX_METADATA_VALUE_LENGTH);
    keys++;
  }
  return { map, dropped };
}

function definedOnly(usage: Usage): Usage {
  const out: Usage = {};
  for (const field of TOKEN_FIELDS) if (usage[field] !== undefined) out[field] = usage[field];
  return out;
}

function nanosToIso(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString();
}

function cap(value: string | undefined, max: number): string | undefined {
  return value === undefined ? undefined : value.slice(0, max);
}
