// The generated protobufjs root of the OTLP protos. Pinned to 0.52.x on purpose: later lines of
// otlp-transformer only encode (docs/design.md, "Dependencies"). The package has no "exports" map, and
// this CommonJS build is the one Node can load from ESM.
import otlpRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { BadRequestError } from '../errors.js';
import { MAX_ERROR_MESSAGE_LENGTH, MAX_KIND_LENGTH, MAX_METADATA_KEY_LENGTH, MAX_METADATA_VALUE_LENGTH, MAX_NAME_LENGTH, MAX_SHORT_TEXT_LENGTH } from './span-input.js';
import type { SpanInput } from './span-input.js';

/**
 * OTLP/HTTP trace export (docs/spans.md, "OTLP"): decoding of protobuf and JSON bodies into one plain
 * shape, and its mapping onto ingest spans. Pure: no I/O. A body that is not a well-formed
 * ExportTraceServiceRequest throws BadRequestError (400); attribute values are read leniently.
 */

export type OtlpValue = string | number | boolean | null | OtlpValue[] | { [key: string]: OtlpValue };
/** Attributes in arrival order; a repeated key keeps its last value. */
export type OtlpAttributes = Map<string, OtlpValue>;

export interface OtlpSpan {
  /** Lowercase hex; `''` when absent. */
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** 0n when absent. */
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  attributes: OtlpAttributes;
  events: { name: string; timeUnixNano: bigint; attributes: OtlpAttributes }[];
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
}

export interface OtlpTraceRequest {
  resourceSpans: {
    resource: OtlpAttributes;
    scopeSpans: { scope: { name: string; version: string }; spans: OtlpSpan[] }[];
  }[];
}

type ProtoType = {
  decode(bytes: Uint8Array): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: unknown): unknown;
};
const collector = (otlpRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: Record<string, ProtoType> } } } } })
  .opentelemetry.proto.collector.trace.v1;
const ExportTraceServiceRequest = collector.ExportTraceServiceRequest!;
const ExportTraceServiceResponse = collector.ExportTraceServiceResponse!;

export function decodeOtlpProtobuf(buf: Uint8Array): OtlpTraceRequest {
  let message: unknown;
  try {
    message = ExportTraceServiceRequest.decode(buf);
  } catch (error) {
    throw new BadRequestError(`request body is not a valid OTLP protobuf ExportTraceServiceRequest: ${(error as Error).message}`);
  }
  return readRequest(message);
}

/** Takes the parsed JSON body (or its raw text/bytes). OTLP JSON: camelCase keys, hex ids, int64 as strings. */
export function decodeOtlpJson(body: unknown): OtlpTraceRequest {
  if (typeof body === 'string' || body instanceof Uint8Array) {
    try {
      body = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8'));
    } catch {
      throw new BadRequestError('request body is not valid JSON');
    }
  }
  return readRequest(body);
}

/** The span count of a request, for OTLP's `rejectedSpans`. */
export function countOtlpSpans(request: OtlpTraceRequest): number {
  return request.resourceSpans.reduce((n, rs) => n + rs.scopeSpans.reduce((m, ss) => m + ss.spans.length, 0), 0);
}

/** OTLP's answer: an empty ExportTraceServiceResponse, or one with `partial_success` when spans were rejected. */
export function encodeOtlpProtobufResponse(rejectedSpans: number, errorMessage = ''): Buffer {
  const message = ExportTraceServiceResponse.fromObject(otlpJsonResponse(rejectedSpans, errorMessage));
  return Buffer.from(ExportTraceServiceResponse.encode(message).finish());
}

export function otlpJsonResponse(rejectedSpans: number, errorMessage = ''): { partialSuccess?: { rejectedSpans: number; errorMessage: string } } {
  return rejectedSpans > 0 || errorMessage ? { partialSuccess: { rejectedSpans, errorMessage } } : {};
}

// ---- decoding: one walker for protobufjs messages and OTLP JSON. Both leave absent fields null or
// undefined; they differ only in how ids (bytes vs hex), int64 (Long vs string) and bytes are carried.

function readRequest(raw: unknown): OtlpTraceRequest {
  const request = object(raw, 'body') ?? {};
  return {
    resourceSpans: list(request.resourceSpans, 'resourceSpans').map((rsRaw, i) => {
      const path = `resourceSpans[${i}]`;
      const rs = object(rsRaw, path) ?? {};
      return {
        resource: attributes((object(rs.resource, `${path}.resource`) ?? {}).attributes),
        scopeSpans: list(rs.scopeSpans, `${path}.scopeSpans`).map((ssRaw, j) => {
          const ssPath = `${path}.scopeSpans[${j}]`;
          const ss = object(ssRaw, ssPath) ?? {};
          const scope = object(ss.scope, `${ssPath}.scope`) ?? {};
          return {
            scope: { name: text(scope.name, `${ssPath}.scope.name`), version: text(scope.version, `${ssPath}.scope.version`) },
            spans: list(ss.spans, `${ssPath}.spans`).map((span, k) => readSpan(span, `${ssPath}.spans[${k}]`)),
          };
        }),
      };
    }),
  };
}

function readSpan(raw: unknown, path: string): OtlpSpan {
  const span = object(raw, path) ?? {};
  const status = object(span.status, `${path}.status`) ?? {};
  return {
    traceId: id(span.traceId, `${path}.traceId`),
    spanId: id(span.spanId, `${path}.spanId`),
    parentSpanId: id(span.parentSpanId, `${path}.parentSpanId`),
    name: text(span.name, `${path}.name`),
    kind: enumValue(span.kind, SPAN_KINDS, `${path}.kind`),
    startTimeUnixNano: uint64(span.startTimeUnixNano, `${path}.startTimeUnixNano`),
    endTimeUnixNano: uint64(span.endTimeUnixNano, `${path}.endTimeUnixNano`),
    attributes: attributes(span.attributes),
    events: list(span.events, `${path}.events`).map((eventRaw, i) => {
      const event = object(eventRaw, `${path}.events[${i}]`) ?? {};
      return {
        name: text(event.name, `${path}.events[${i}].name`),
        timeUnixNano: uint64(event.timeUnixNano, `${path}.events[${i}].timeUnixNano`),
        attributes: attributes(event.attributes),
      };
    }),
    status: { code: enumValue(status.code, STATUS_CODES, `${path}.status.code`), message: text(status.message, `${path}.status.message`) },
  };
}

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

function invalid(path: string, what: string): never {
  throw new BadRequestError(`invalid OTLP trace export request: ${path} ${what}`);
}

function object(value: unknown, path: string): Record<string, unknown> | null {
  if (value == null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) invalid(path, 'should be an object');
  return value as Record<string, unknown>;
}

function list(value: unknown, path: string): unknown[] {
  if (value == null) return [];
  if (!Array.isArray(value)) invalid(path, 'should be an array');
  return value;
}

function text(value: unknown, path: string): string {
  if (value == null) return '';
  if (typeof value !== 'string') invalid(path, 'should be a string');
  return value;
}

/** Bytes (protobuf) or hex (OTLP JSON) to lowercase hex. Base64 is taken too: some early JSON encoders sent it. */
function id(value: unknown, path: string): string {
  if (value == null) return '';
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex');
  if (typeof value !== 'string') invalid(path, 'should be a hex string');
  if (/^(?:[0-9a-fA-F]{2})*$/.test(value)) return value.toLowerCase();
  const bytes = Buffer.from(value, 'base64');
  if ((bytes.length === 8 || bytes.length === 16) && bytes.toString('base64') === value) return bytes.toString('hex');
  return invalid(path, 'should be a hex string');
}

function enumValue(value: unknown, names: readonly string[], path: string): number {
  if (value == null) return 0;
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  if (typeof value === 'string') {
    if (names.includes(value)) return names.indexOf(value);
    if (/^\d+$/.test(value)) return Number(value);
  }
  return invalid(path, 'should be an enum number');
}

/** A protobufjs Long (`long` is installed with protobufjs), a number, or a decimal string (OTLP JSON int64). */
function int64(value: unknown): bigint | null {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? BigInt(Math.trunc(value)) : null;
  if (typeof value === 'string') return /^-?\d+$/.test(value) ? BigInt(value) : null;
  if (value !== null && typeof value === 'object' && 'low' in value && 'high' in value) {
    const long = value as { low: number; high: number; unsigned?: boolean };
    const n = (BigInt(long.high | 0) << 32n) + BigInt(long.low >>> 0);
    return long.unsigned ? BigInt.asUintN(64, n) : n;
  }
  return null;
}

function uint64(value: unknown, path: string): bigint {
  if (value == null) return 0n;
  const n = int64(value);
  if (n === null || n < 0n) invalid(path, 'should be an unsigned 64-bit integer');
  return n;
}

function attributes(value: unknown): OtlpAttributes {
  const out: OtlpAttributes = new Map();
  if (!Array.isArray(value)) return out;
  for (const kv of value) {
    if (kv === null || typeof kv !== 'object') continue;
    const { key, value: v } = kv as { key?: unknown; value?: unknown };
    if (typeof key === 'string' && key) out.set(key, anyValue(v));
  }
  return out;
}

/** AnyValue to plain JSON. Lenient: a value of an unexpected shape reads as null, never fails the batch. */
function anyValue(raw: unknown): OtlpValue {
  if (raw === null || typeof raw !== 'object') return null;
  const v = raw as Record<string, unknown>;
  if (v.stringValue != null) return String(v.stringValue);
  if (v.boolValue != null) return v.boolValue === true || v.boolValue === 'true';
  if (v.intValue != null) {
    const n = int64(v.intValue);
    if (n === null) return null;
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString();
  }
  if (v.doubleValue != null) {
    const n = Number(v.doubleValue);
    return Number.isFinite(n) ? n : String(v.doubleValue);
  }
  if (v.arrayValue != null) {
    const values = (v.arrayValue as { values?: unknown }).values;
    return Array.isArray(values) ? values.map(anyValue) : [];
  }
  if (v.kvlistValue != null) return Object.fromEntries(attributes((v.kvlistValue as { values?: unknown }).values));
  if (v.bytesValue != null) return v.bytesValue instanceof Uint8Array ? Buffer.from(v.bytesValue).toString('base64') : String(v.bytesValue);
  return null;
}

// ---- mapping onto ingest spans (GenAI and general semantic conventions).

/** Metadata keys kept per span: span attributes first, then resource attributes, then the scope. */
export const MAX_OTLP_METADATA_KEYS = 128;

const GEN_AI_OPERATION_KINDS: Record<string, string> = {
  chat: 'llm',
  text_completion: 'llm',
  generate_content: 'llm',
  embeddings: 'embedding',
  execute_tool: 'tool',
  invoke_agent: 'agent',
  create_agent: 'agent',
};

export function otlpToSpans(request: OtlpTraceRequest): SpanInput[] {
  const spans: SpanInput[] = [];
  for (const rs of request.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) spans.push(mapSpan(span, rs.resource, ss.scope.name));
    }
  }
  return spans;
}

/**
 * One OTLP span as an ingest span. Each field reads the first attribute present among its
 * conventions; an attribute used for a field leaves the metadata, the others stay in it. Values
 * that don't fit a field (a negative token count, a non-numeric cost) are left in metadata rather
 * than getting the whole span rejected: an OTLP exporter can't fix one span.
 */
function mapSpan(span: OtlpSpan, resource: OtlpAttributes, scopeName: string): SpanInput {
  const attrs = new Map(span.attributes);
  const res = new Map(resource);

  const kindValue = takeText(attrs, ['sightline.span.kind', 'gen_ai.operation.name', 'openinference.span.kind']);
  const kind = kindValue ? (GEN_AI_OPERATION_KINDS[kindValue.toLowerCase()] ?? kindValue.toLowerCase()) : 'custom';

  // Status: ERROR, or an exception event unless the span was explicitly set OK (OTel: OK is final).
  const exception = span.events.filter((e) => e.name === 'exception').at(-1);
  const statusCode = span.status.code;
  const status = statusCode === 2 || (exception && statusCode !== 1) ? 'error' : statusCode === 1 ? 'ok' : 'unset';
  const exceptionAttrs = new Map(exception?.attributes);
  const errorType = takeText(exceptionAttrs, ['exception.type']) ?? takeText(attrs, ['error.type']);
  const errorMessage = takeText(exceptionAttrs, ['exception.message']) ?? (status === 'error' && span.status.message ? span.status.message : undefined);
  const stacktrace = takeText(exceptionAttrs, ['exception.stacktrace']);

  const input: SpanInput = {
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId || null,
    name: span.name.slice(0, MAX_NAME_LENGTH),
    kind: kind.slice(0, MAX_KIND_LENGTH) || 'custom',
    // 0 means "not set" in OTLP; validateSpans rejects the empty start_time.
    start_time: span.startTimeUnixNano > 0n ? nanosToIso(span.startTimeUnixNano) : '',
    end_time: span.endTimeUnixNano > 0n ? nanosToIso(span.endTimeUnixNano) : null,
    status,
    error_type: cap(errorType, MAX_SHORT_TEXT_LENGTH),
    error_message: cap(errorMessage, MAX_ERROR_MESSAGE_LENGTH),
    model_name: cap(takeText(attrs, ['gen_ai.request.model', 'gen_ai.response.model']), MAX_SHORT_TEXT_LENGTH),
    environment: cap(
      takeText(attrs, ['deployment.environment.name', 'deployment.environment']) ?? takeText(res, ['deployment.environment.name', 'deployment.environment']),
      MAX_SHORT_TEXT_LENGTH,
    ),
    user_id: cap(takeText(attrs, ['user.id', 'enduser.id']), MAX_SHORT_TEXT_LENGTH),
    session_id: cap(takeText(attrs, ['session.id', 'gen_ai.conversation.id']), MAX_SHORT_TEXT_LENGTH),
    input: take(attrs, ['gen_ai.input.messages', 'gen_ai.prompt', 'input.value']),
    output: take(attrs, ['gen_ai.output.messages', 'gen_ai.completion', 'output.value']),
    cost: takeNumber(attrs, ['gen_ai.usage.cost', 'sightline.cost'], false),
    input_tokens: takeNumber(attrs, ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt'], true),
    output_tokens: takeNumber(attrs, ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.token_count.completion'], true),
    total_tokens: takeNumber(attrs, ['gen_ai.usage.total_tokens', 'llm.token_count.total'], true),
    evaluation_run_id: cap(takeText(attrs, ['sightline.evaluation_run_id']), MAX_SHORT_TEXT_LENGTH),
  };

  if (stacktrace) attrs.set('exception.stacktrace', stacktrace);
  if (scopeName) attrs.set('otel.scope.name', scopeName);
  input.metadata = toMetadata([attrs, res]);
  return input;
}

function nanosToIso(nanos: bigint): string {
  return new Date(Number(nanos / 1_000_000n)).toISOString();
}

function take(attrs: OtlpAttributes, keys: readonly string[]): OtlpValue | undefined {
  for (const key of keys) {
    const value = attrs.get(key);
    if (value != null) {
      attrs.delete(key);
      return value;
    }
  }
  return undefined;
}

/** First of `keys` holding a non-empty scalar, as text. */
function takeText(attrs: OtlpAttributes, keys: readonly string[]): string | undefined {
  for (const key of keys) {
    const value = attrs.get(key);
    if ((typeof value === 'string' && value !== '') || typeof value === 'number' || typeof value === 'boolean') {
      attrs.delete(key);
      return String(value);
    }
  }
  return undefined;
}

/** First of `keys` holding a number ≥ 0 (an integer when `integer`), possibly as a numeric string. */
function takeNumber(attrs: OtlpAttributes, keys: readonly string[], integer: boolean): number | undefined {
  for (const key of keys) {
    const value = attrs.get(key);
    const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
    if (Number.isFinite(n) && n >= 0 && (!integer || Number.isSafeInteger(n))) {
      attrs.delete(key);
      return n;
    }
  }
  return undefined;
}

function cap(value: string | undefined, max: number): string | undefined {
  return value === undefined ? undefined : value.slice(0, max);
}

function toMetadata(sources: readonly OtlpAttributes[]): Record<string, string> {
  const metadata: Record<string, string> = {};
  let count = 0;
  for (const source of sources) {
    for (const [key, value] of source) {
      if (count >= MAX_OTLP_METADATA_KEYS) return metadata;
      if (value === null || key.length > MAX_METADATA_KEY_LENGTH || key === '__proto__' || Object.hasOwn(metadata, key)) continue;
      metadata[key] = (typeof value === 'string' ? value : JSON.stringify(value)).slice(0, MAX_METADATA_VALUE_LENGTH);
      count++;
    }
  }
  return metadata;
}
