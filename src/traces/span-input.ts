import { z } from 'zod';
import { isoToEpochMs } from '../edge-schemas.js';
import { issueLines } from '../zod-issues.js';
import { SPAN_STATUSES } from './vocabulary.js';

/**
 * One ingested span: the request contract of `POST /api/v1/public/traces` (docs/spans.md) and what
 * the OTLP mapping produces. Pure: validation and normalisation only, no I/O.
 *
 * Leniency beyond the spec's table, on purpose (clients written in Python send `None` for "not set"):
 * every optional field also takes `null`, meaning absent; `parent_span_id: ""` also means a root span.
 * Unknown keys are ignored.
 */

export const MAX_SPANS_PER_REQUEST = 10_000;
export const MAX_METADATA_KEYS = 256;
/** A span's convention attributes (`attributes`): as many keys as its metadata. */
export const MAX_ATTRIBUTE_KEYS = MAX_METADATA_KEYS;
export const MAX_METADATA_KEY_LENGTH = 256;
export const MAX_METADATA_VALUE_LENGTH = 32_768;
export const MAX_NAME_LENGTH = 512;
export const MAX_KIND_LENGTH = 64;
export const MAX_ERROR_MESSAGE_LENGTH = 32_768;
/** error_type, model_name, environment, user_id, session_id, evaluation_run_id, prompt_name. */
export const MAX_SHORT_TEXT_LENGTH = 1024;
/** Span events and links kept per span (docs/spans.md, "Events and links"); the rest are counted as dropped. */
export const MAX_SPAN_EVENTS = 128;
export const MAX_SPAN_LINKS = 128;
/** Tags per span, and a tag's length (docs/spans.md, "More span fields"). */
export const MAX_TAGS = 50;
export const MAX_TAG_LENGTH = 200;
/** Attributes kept per event or link. */
export const MAX_EVENT_ATTRIBUTES = 64;
/** The largest prompt version a span may name (a Postgres integer, as prompt versions are numbered). */
export const MAX_PROMPT_VERSION = 2_147_483_647;

const Id = z.string().min(1).max(128);
const DateTime = z.iso.datetime({ offset: true, local: true, error: 'Invalid ISO date-time' });
const ShortText = z.string().max(MAX_SHORT_TEXT_LENGTH).nullish();
const TokenCount = z.int().min(0).nullish();

export const SpanStatus = z.enum(SPAN_STATUSES);
/** Where a span's cost came from (docs/spans.md, "Cost"): sent by the producer, computed from the price table, or none. */
export const CostSource = z.enum(['sent', 'computed', 'none']);
export type CostSource = z.infer<typeof CostSource>;

const Attributes = z
  .record(z.string().min(1).max(MAX_METADATA_KEY_LENGTH), z.string().max(MAX_METADATA_VALUE_LENGTH))
  .refine((m) => Object.keys(m).length <= MAX_EVENT_ATTRIBUTES, `at most ${MAX_EVENT_ATTRIBUTES} keys`);

/** A span event (an OTLP event: `exception`, a message, a stream chunk), kept bounded. */
export const SpanEventSchema = z.object({
  name: z.string().min(1).max(MAX_NAME_LENGTH),
  time: DateTime,
  attributes: Attributes.nullish(),
});
export type SpanEvent = { name: string; time: number; attributes: Record<string, string> };

/** A link to another span (OTLP span links: batch fan-in, follows-from). */
export const SpanLinkSchema = z.object({
  trace_id: Id,
  span_id: Id,
  attributes: Attributes.nullish(),
});
export type SpanLink = { trace_id: string; span_id: string; attributes: Record<string, string> };

export const SpanInputSchema = z
  .object({
    trace_id: Id,
    span_id: Id,
    parent_span_id: z.string().max(128).nullish(),
    name: z.string().min(1).max(MAX_NAME_LENGTH),
    // The spec's kinds (llm, tool, agent, chain, retriever, embedding, http, custom) are examples.
    kind: z.string().min(1).max(MAX_KIND_LENGTH).nullish(),
    start_time: DateTime,
    end_time: DateTime.nullish(),
    status: SpanStatus.nullish(),
    error_type: ShortText,
    error_message: z.string().max(MAX_ERROR_MESSAGE_LENGTH).nullish(),
    model_name: ShortText,
    environment: ShortText,
    user_id: ShortText,
    session_id: ShortText,
    input: z.unknown().optional(),
    output: z.unknown().optional(),
    metadata: z
      .record(z.string().min(1).max(MAX_METADATA_KEY_LENGTH), z.string().max(MAX_METADATA_VALUE_LENGTH))
      .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
      .nullish(),
    cost: z.number().min(0).nullish(),
    input_tokens: TokenCount,
    output_tokens: TokenCount,
    total_tokens: TokenCount,
    evaluation_run_id: ShortText,
    // Extensions beside the spec's table (docs/spans.md, "More span fields"); OTLP fills them from conventions.
    /** Of input_tokens, those read from the provider's prompt cache. */
    cache_read_tokens: TokenCount,
    /** Of input_tokens, those written to the provider's prompt cache. */
    cache_write_tokens: TokenCount,
    /** Of output_tokens, the model's reasoning tokens. */
    reasoning_tokens: TokenCount,
    /** Streaming: milliseconds from the span's start to the first token. */
    time_to_first_token_ms: z.number().min(0).max(2_147_483_647).nullish(),
    /** Streaming: output tokens per second as the producer measured it; computed at ingest when absent. */
    output_tokens_per_second: z.number().min(0).nullish(),
    events: z.array(SpanEventSchema).max(MAX_SPAN_EVENTS).nullish(),
    links: z.array(SpanLinkSchema).max(MAX_SPAN_LINKS).nullish(),
    /** Resource attributes of the producer (host.*, process.*, service.*), kept apart from metadata. */
    resource: z
      .record(z.string().min(1).max(MAX_METADATA_KEY_LENGTH), z.string().max(MAX_METADATA_VALUE_LENGTH))
      .refine((m) => Object.keys(m).length <= MAX_METADATA_KEYS, `at most ${MAX_METADATA_KEYS} keys`)
      .nullish(),
    /**
     * The instrumentation conventions' attributes (`ai.toolCall.id`, `http.method`), kept apart from
     * the user's metadata: on the span, never in the trace's metadata_map (docs/traces.md).
     */
    attributes: z
      .record(z.string().min(1).max(MAX_METADATA_KEY_LENGTH), z.string().max(MAX_METADATA_VALUE_LENGTH))
      .refine((m) => Object.keys(m).length <= MAX_ATTRIBUTE_KEYS, `at most ${MAX_ATTRIBUTE_KEYS} keys`)
      .nullish(),
    /** Attributes, events or links the producer or the OTLP mapping dropped past their caps. */
    dropped_attributes_count: TokenCount,
    /** Labels of the span's trace (a trace's tags are its spans' union). */
    tags: z.array(z.string().min(1).max(MAX_TAG_LENGTH)).max(MAX_TAGS).nullish(),
    /** The prompt the span used (docs/prompts.md, "Linking spans"): its name and version number. */
    prompt_name: ShortText,
    prompt_version: z.int().min(1).max(MAX_PROMPT_VERSION).nullish(),
  })
  .superRefine((span, ctx) => {
    // Runs only once every field parsed, so both times are valid ISO strings here.
    if (span.end_time != null && isoToEpochMs(span.end_time) < isoToEpochMs(span.start_time)) {
      ctx.addIssue({ code: 'custom', path: ['end_time'], message: 'must not be before start_time' });
    }
  });

/** The raw shape a client may send for one span (what the OTLP mapping produces too). */
export type SpanInput = z.input<typeof SpanInputSchema>;

/**
 * What the span store receives: every field present, defaults applied.
 * - Times are epoch milliseconds (UTC); sub-millisecond digits are dropped.
 * - `parent_span_id` is `''` for a root span; absent optional strings are `''`.
 * - `input` / `output` are text (strings as sent, anything else as JSON) or `null` when absent or null.
 * - `cost` and the token counts default to 0; `total_tokens` defaults to input + output.
 */
export interface NormalizedSpan {
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  name: string;
  kind: string;
  start_time: number;
  end_time: number | null;
  status: z.infer<typeof SpanStatus>;
  error_type: string;
  error_message: string;
  model_name: string;
  environment: string;
  user_id: string;
  session_id: string;
  input: string | null;
  output: string | null;
  metadata: Record<string, string>;
  cost: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  evaluation_run_id: string;
  /** `sent` when the producer sent a cost; the ingest path's pricing step turns `none` into `computed`. */
  cost_source: CostSource;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  time_to_first_token_ms: number | null;
  output_tokens_per_second: number | null;
  events: SpanEvent[];
  links: SpanLink[];
  resource: Record<string, string>;
  attributes: Record<string, string>;
  dropped_attributes_count: number;
  /** Distinct, in the order sent. */
  tags: string[];
  /** `''` when the span names no prompt. */
  prompt_name: string;
  /** 0 when the span names no prompt version. */
  prompt_version: number;
}

export interface RejectedSpan {
  index: number;
  span_id: string | null;
  errors: string[];
}

/**
 * The body of `POST /traces`. Items are left `unknown` here on purpose: each is checked by
 * `validateSpans`, so one bad span is reported in `rejected` instead of failing the request (docs/spans.md, "Answer").
 */
export const TraceIngestBody = z.object({
  spans: z.array(z.unknown()).min(1).max(MAX_SPANS_PER_REQUEST),
});

/** Validates each span on its own and normalises the valid ones (partial success, docs/spans.md). */
export function validateSpans(raw: readonly unknown[]): { accepted: NormalizedSpan[]; rejected: RejectedSpan[] } {
  const accepted: NormalizedSpan[] = [];
  const rejected: RejectedSpan[] = [];
  raw.forEach((item, index) => {
    try {
      if (plainlyValid(item)) {
        accepted.push(normalizeSpan(item));
        return;
      }
      const result = SpanInputSchema.safeParse(item);
      if (result.success) {
        accepted.push(normalizeSpan(result.data));
        return;
      }
      rejected.push({
        index,
        span_id: spanIdOf(item),
        errors: issueLines(result.error.issues, item, 'span'),
      });
    } catch (error) {
      if (!(error instanceof NestedTooDeep)) throw error;
      rejected.push({ index, span_id: spanIdOf(item), errors: [`${error.field}: ${NESTED_TOO_DEEP}`] });
    }
  });
  return { accepted, rejected };
}

/**
 * An input or output nested so deep that turning it into text overflows the stack (about 5,000 levels
 * of arrays; docs/limits.md, "Bounded by cost"): the span is refused alone. It was answered 503
 * "retry the request", for ever, and its retries failed the same way.
 */
export const NESTED_TOO_DEEP = 'the value is nested too deeply to store (send it as a string)';

class NestedTooDeep extends Error {
  constructor(readonly field: string) {
    super(NESTED_TOO_DEEP);
  }
}

type SpanOutput = z.output<typeof SpanInputSchema>;

/** The schema's own ISO date-time pattern, so the fast path accepts exactly the strings zod does. */
const DATE_TIME_PATTERN = (DateTime as unknown as { _zod: { pattern: RegExp } })._zod.pattern;
const STATUSES: ReadonlySet<unknown> = new Set(SpanStatus.options);

const isString = (v: unknown, min: number, max: number): v is string =>
  typeof v === 'string' && v.length >= min && v.length <= max;
const isNullishString = (v: unknown, min: number, max: number) => v == null || isString(v, min, max);
const isNullishCount = (v: unknown) => v == null || (Number.isSafeInteger(v) && (v as number) >= 0);
const isDateTime = (v: unknown): v is string => typeof v === 'string' && DATE_TIME_PATTERN.test(v);

/**
 * A fast path for the common span, about 10× cheaper than the schema's parse (measured: the schema took
 * ~40 µs of a span's ingest): true only for a span the schema accepts as it is, so validateSpans can
 * normalise it without a copy. It is stricter, never looser: string lengths count UTF-16 units (never
 * fewer than the code points the schema counts), metadata must be a plain object without a
 * `__proto__` key. Anything else, valid or not, goes through the schema, which alone words rejections.
 */
export function plainlyValid(item: unknown): item is SpanOutput {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return false;
  const s = item as Record<string, unknown>;
  if (!isString(s.trace_id, 1, 128) || !isString(s.span_id, 1, 128) || !isString(s.name, 1, MAX_NAME_LENGTH))
    return false;
  if (!isNullishString(s.parent_span_id, 0, 128) || !isNullishString(s.kind, 1, MAX_KIND_LENGTH)) return false;
  if (!isNullishString(s.error_message, 0, MAX_ERROR_MESSAGE_LENGTH)) return false;
  for (const field of [
    'error_type',
    'model_name',
    'environment',
    'user_id',
    'session_id',
    'evaluation_run_id',
    'prompt_name',
  ]) {
    if (!isNullishString(s[field], 0, MAX_SHORT_TEXT_LENGTH)) return false;
  }
  if (s.status != null && !STATUSES.has(s.status)) return false;
  if (s.cost != null && !(typeof s.cost === 'number' && Number.isFinite(s.cost) && s.cost >= 0)) return false;
  if (!isNullishCount(s.input_tokens) || !isNullishCount(s.output_tokens) || !isNullishCount(s.total_tokens))
    return false;
  // The extension fields: OTLP spans always carry `resource` and often events, so they are checked here too.
  if (
    !isNullishCount(s.cache_read_tokens) ||
    !isNullishCount(s.cache_write_tokens) ||
    !isNullishCount(s.reasoning_tokens)
  )
    return false;
  if (!isNullishCount(s.dropped_attributes_count)) return false;
  if (
    s.prompt_version != null &&
    !(
      isNullishCount(s.prompt_version) &&
      (s.prompt_version as number) >= 1 &&
      (s.prompt_version as number) <= MAX_PROMPT_VERSION
    )
  )
    return false;
  if (s.time_to_first_token_ms != null && !isNumberIn(s.time_to_first_token_ms, 0, 2_147_483_647)) return false;
  if (s.output_tokens_per_second != null && !isNumberIn(s.output_tokens_per_second, 0, Number.MAX_VALUE)) return false;
  if (s.resource != null && !isStringMap(s.resource, MAX_METADATA_KEYS)) return false;
  if (s.attributes != null && !isStringMap(s.attributes, MAX_ATTRIBUTE_KEYS)) return false;
  if (s.events != null) {
    if (!Array.isArray(s.events) || s.events.length > MAX_SPAN_EVENTS) return false;
    for (const e of s.events as unknown[]) {
      if (!isRecord(e) || !isString(e.name, 1, MAX_NAME_LENGTH) || !isDateTime(e.time)) return false;
      if (e.attributes != null && !isStringMap(e.attributes, MAX_EVENT_ATTRIBUTES)) return false;
    }
  }
  if (s.links != null) {
    if (!Array.isArray(s.links) || s.links.length > MAX_SPAN_LINKS) return false;
    for (const l of s.links as unknown[]) {
      if (!isRecord(l) || !isString(l.trace_id, 1, 128) || !isString(l.span_id, 1, 128)) return false;
      if (l.attributes != null && !isStringMap(l.attributes, MAX_EVENT_ATTRIBUTES)) return false;
    }
  }
  if (!isDateTime(s.start_time) || (s.end_time != null && !isDateTime(s.end_time))) return false;
  if (s.end_time != null && isoToEpochMs(s.end_time) < isoToEpochMs(s.start_time)) return false;
  if (s.metadata != null && !isStringMap(s.metadata, MAX_METADATA_KEYS)) return false;
  if (
    s.tags != null &&
    !(Array.isArray(s.tags) && s.tags.length <= MAX_TAGS && s.tags.every((t) => isString(t, 1, MAX_TAG_LENGTH)))
  )
    return false;
  return true;
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isNumberIn = (v: unknown, min: number, max: number) =>
  typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;

/** A plain object of at most `maxKeys` string values under keys of 1 to 256 characters, no `__proto__`. */
function isStringMap(m: unknown, maxKeys: number): boolean {
  if (m === null || typeof m !== 'object' || Object.getPrototypeOf(m) !== Object.prototype) return false;
  let keys = 0;
  for (const key in m) {
    if (!Object.hasOwn(m, key)) return false;
    const value = (m as Record<string, unknown>)[key];
    if (
      ++keys > maxKeys ||
      key === '__proto__' ||
      !isString(key, 1, MAX_METADATA_KEY_LENGTH) ||
      !isString(value, 0, MAX_METADATA_VALUE_LENGTH)
    )
      return false;
  }
  return true;
}

function normalizeSpan(span: SpanOutput): NormalizedSpan {
  const inputTokens = span.input_tokens ?? 0;
  const outputTokens = span.output_tokens ?? 0;
  return {
    trace_id: span.trace_id,
    span_id: span.span_id,
    parent_span_id: span.parent_span_id ?? '',
    name: span.name,
    kind: span.kind ?? 'custom',
    start_time: isoToEpochMs(span.start_time),
    end_time: span.end_time == null ? null : isoToEpochMs(span.end_time),
    status: span.status ?? 'unset',
    error_type: span.error_type ?? '',
    error_message: span.error_message ?? '',
    model_name: span.model_name ?? '',
    environment: span.environment ?? '',
    user_id: span.user_id ?? '',
    session_id: span.session_id ?? '',
    input: toText(span.input, 'input'),
    output: toText(span.output, 'output'),
    metadata: span.metadata ?? {},
    cost: span.cost ?? 0,
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    total_tokens: span.total_tokens ?? inputTokens + outputTokens,
    evaluation_run_id: span.evaluation_run_id ?? '',
    cost_source: span.cost == null ? 'none' : 'sent',
    cache_read_tokens: span.cache_read_tokens ?? 0,
    cache_write_tokens: span.cache_write_tokens ?? 0,
    reasoning_tokens: span.reasoning_tokens ?? 0,
    time_to_first_token_ms: span.time_to_first_token_ms ?? null,
    output_tokens_per_second: span.output_tokens_per_second ?? null,
    events: (span.events ?? []).map((e) => ({
      name: e.name,
      time: isoToEpochMs(e.time),
      attributes: e.attributes ?? {},
    })),
    links: (span.links ?? []).map((l) => ({
      trace_id: l.trace_id,
      span_id: l.span_id,
      attributes: l.attributes ?? {},
    })),
    resource: span.resource ?? {},
    attributes: span.attributes ?? {},
    dropped_attributes_count: span.dropped_attributes_count ?? 0,
    tags: span.tags?.length ? [...new Set(span.tags)] : [],
    prompt_name: span.prompt_name ?? '',
    prompt_version: span.prompt_version ?? 0,
  };
}

/** `String.prototype.isWellFormed` / `toWellFormed` (Node 20; not in the ES2022 lib this project compiles against). */
type WellFormed = { isWellFormed(): boolean; toWellFormed(): string };
const wellFormed = (text: string): string =>
  (text as unknown as WellFormed).isWellFormed() ? text : (text as unknown as WellFormed).toWellFormed();
const wellFormedMap = (map: Record<string, string>): Record<string, string> => {
  for (const [k, v] of Object.entries(map))
    if (wellFormed(k) !== k || wellFormed(v) !== v) {
      return Object.fromEntries(Object.entries(map).map(([key, value]) => [wellFormed(key), wellFormed(value)]));
    }
  return map;
};

/**
 * docs/spans.md: a string holding an unpaired UTF-16 surrogate (half of an emoji, as text cut at a
 * length in UTF-16 units leaves it) is stored with U+FFFD in its place, as OTLP's protobuf strings
 * are when their UTF-8 is broken. The engine refuses such a string, and the group commit would fail
 * every request whose spans share the insert. Changes the spans in place; a span whose strings are
 * all well formed (nearly every one) is only read. Events and links are stored as JSON text, which
 * escapes a lone surrogate, so they are left as they are.
 */
export function replaceUnpairedSurrogates(spans: NormalizedSpan[]): void {
  for (const span of spans) {
    for (const field of STRING_FIELDS) {
      const value = span[field];
      if (typeof value === 'string') (span as Record<typeof field, string | null>)[field] = wellFormed(value);
    }
    span.metadata = wellFormedMap(span.metadata);
    span.resource = wellFormedMap(span.resource);
    span.attributes = wellFormedMap(span.attributes);
    if (span.tags.length) span.tags = span.tags.map(wellFormed);
  }
}

const STRING_FIELDS = [
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'error_type',
  'error_message',
  'model_name',
  'environment',
  'user_id',
  'session_id',
  'input',
  'output',
  'evaluation_run_id',
  'prompt_name',
] as const satisfies readonly (keyof NormalizedSpan)[];

/** docs/spans.md: input and output are "stored as text: a string as it is, anything else as its JSON". */
function toText(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? null;
  } catch (error) {
    // Only the stack's overflow: a value from a JSON body holds no cycles, BigInts or throwing getters.
    if (error instanceof RangeError) throw new NestedTooDeep(field);
    throw error;
  }
}

function spanIdOf(item: unknown): string | null {
  if (item === null || typeof item !== 'object') return null;
  const id = (item as Record<string, unknown>).span_id;
  return typeof id === 'string' ? id : null;
}
