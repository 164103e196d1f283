// The generated protobufjs root of the OTLP protos. Pinned to 0.52.x on purpose: later lines of
// otlp-transformer only encode (docs/design.md, "Dependencies"). The package has no "exports" map, and
// this CommonJS build is the one Node can load from ESM.
import otlpRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { BadRequestError } from '../errors.js';
import type { OtlpAttributes, OtlpSpan, OtlpTraceRequest, OtlpValue } from './otlp-types.js';

/**
 * OTLP/HTTP trace export (docs/spans.md, "OTLP"): decoding of protobuf and JSON bodies into one plain
 * shape. Pure: no I/O. A body that is not a well-formed ExportTraceServiceRequest throws
 * BadRequestError (400); attribute values are read leniently. The mapping of the decoded spans onto
 * ingest spans (the instrumentation conventions) is in otlp-mapping.ts.
 */

export { MAX_OTLP_METADATA_KEYS, otlpToSpans } from './otlp-mapping.js';

export type { OtlpAttributes, OtlpSpan, OtlpTraceRequest, OtlpValue } from './otlp-types.js';

type ProtoType = {
  decode(bytes: Uint8Array): unknown;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: unknown): unknown;
};
const collector = (
  otlpRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: Record<string, ProtoType> } } } } }
).opentelemetry.proto.collector.trace.v1;
const ExportTraceServiceRequest = collector.ExportTraceServiceRequest!;
const ExportTraceServiceResponse = collector.ExportTraceServiceResponse!;

export function decodeOtlpProtobuf(buf: Uint8Array): OtlpTraceRequest {
  let message: unknown;
  try {
    message = ExportTraceServiceRequest.decode(buf);
  } catch (error) {
    throw new BadRequestError(
      `request body is not a valid OTLP protobuf ExportTraceServiceRequest: ${(error as Error).message}`,
    );
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

export function otlpJsonResponse(
  rejectedSpans: number,
  errorMessage = '',
): { partialSuccess?: { rejectedSpans: number; errorMessage: string } } {
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
            scope: {
              name: text(scope.name, `${ssPath}.scope.name`),
              version: text(scope.version, `${ssPath}.scope.version`),
            },
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
        droppedAttributesCount: count(event.droppedAttributesCount),
      };
    }),
    links: list(span.links, `${path}.links`).map((linkRaw, i) => {
      const link = object(linkRaw, `${path}.links[${i}]`) ?? {};
      return {
        traceId: id(link.traceId, `${path}.links[${i}].traceId`),
        spanId: id(link.spanId, `${path}.links[${i}].spanId`),
        attributes: attributes(link.attributes),
        droppedAttributesCount: count(link.droppedAttributesCount),
      };
    }),
    status: {
      code: enumValue(status.code, STATUS_CODES, `${path}.status.code`),
      message: text(status.message, `${path}.status.message`),
    },
    droppedAttributesCount: count(span.droppedAttributesCount),
    droppedEventsCount: count(span.droppedEventsCount),
    droppedLinksCount: count(span.droppedLinksCount),
  };
}

const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
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

/** A dropped_*_count (uint32): read leniently, a value of the wrong shape counts as 0. */
function count(value: unknown): number {
  const n = int64(value);
  return n !== null && n > 0n && n <= 0xffffffffn ? Number(n) : 0;
}

/**
 * How deep an attribute's arrays and key-value lists are read (docs/limits.md, "Bounded by cost"):
 * values below it read as null. The reading recurses, and a value nested 20,000 deep (a 500 KB body)
 * overflowed the stack and failed the request with a 500; no producer nests anywhere near this.
 */
export const MAX_ATTRIBUTE_DEPTH = 64;

function attributes(value: unknown, depth = 0): OtlpAttributes {
  const out: OtlpAttributes = new Map();
  if (!Array.isArray(value)) return out;
  for (const kv of value) {
    if (kv === null || typeof kv !== 'object') continue;
    const { key, value: v } = kv as { key?: unknown; value?: unknown };
    if (typeof key === 'string' && key) out.set(key, anyValue(v, depth));
  }
  return out;
}

/** AnyValue to plain JSON. Lenient: a value of an unexpected shape reads as null, never fails the batch. */
function anyValue(raw: unknown, depth = 0): OtlpValue {
  if (raw === null || typeof raw !== 'object' || depth >= MAX_ATTRIBUTE_DEPTH) return null;
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
    return Array.isArray(values) ? values.map((item) => anyValue(item, depth + 1)) : [];
  }
  if (v.kvlistValue != null)
    return Object.fromEntries(attributes((v.kvlistValue as { values?: unknown }).values, depth + 1));
  if (v.bytesValue != null)
    return v.bytesValue instanceof Uint8Array ? Buffer.from(v.bytesValue).toString('base64') : String(v.bytesValue);
  return null;
}
