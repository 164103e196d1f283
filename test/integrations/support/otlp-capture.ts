import http from 'node:http';
import type { AddressInfo } from 'node:net';
import otlpRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';

/**
 * A stand-in OTLP/HTTP receiver on loopback that keeps every export request as it arrived, for
 * recording what an instrumentation library really sends (scripts/record-otlp-fixtures.ts). Answers
 * like a collector: `{}` to JSON, an empty ExportTraceServiceResponse to protobuf.
 */
export interface CapturedRequest {
  path: string;
  contentType: string;
  /** The Authorization scheme only (`Bearer`, `Basic`): credentials are never kept. */
  authScheme: string | null;
  body: Buffer;
}

export interface OtlpCapture {
  origin: string;
  requests: CapturedRequest[];
  close(): Promise<void>;
}

export async function startOtlpCapture(): Promise<OtlpCapture> {
  const requests: CapturedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = String(req.headers['content-type'] ?? '');
      const auth = req.headers.authorization;
      requests.push({
        path: req.url ?? '',
        contentType,
        authScheme: auth ? auth.split(' ')[0]! : null,
        body: Buffer.concat(chunks),
      });
      const json = contentType.includes('json');
      res.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : Buffer.alloc(0));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type ProtoType = {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
};
const ExportTraceServiceRequest = (
  otlpRoot as unknown as { opentelemetry: { proto: { collector: { trace: { v1: Record<string, ProtoType> } } } } }
).opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest!;

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Base64 ids (protobufjs) to the lowercase hex of the OTLP JSON encoding, everywhere in the tree. */
function hexIds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(hexIds);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node))
    out[k] = ID_FIELDS.has(k) && typeof v === 'string' ? Buffer.from(v, 'base64').toString('hex') : hexIds(v);
  return out;
}

/**
 * One captured request as an OTLP JSON ExportTraceServiceRequest: JSON bodies as sent, protobuf ones
 * decoded into the OTLP/JSON mapping (hex ids, 64-bit integers as strings, enums as numbers).
 */
export function toOtlpJson(request: CapturedRequest): { resourceSpans: unknown[] } {
  if (request.contentType.includes('json')) return JSON.parse(request.body.toString('utf8'));
  const message = ExportTraceServiceRequest.decode(request.body);
  const object = ExportTraceServiceRequest.toObject(message, {
    longs: String,
    enums: Number,
    bytes: String,
    defaults: false,
    arrays: true,
  });
  return hexIds(object) as { resourceSpans: unknown[] };
}
