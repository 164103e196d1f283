import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import otlpRoot from '@opentelemetry/otlp-transformer/build/src/generated/root.js';
import { BadRequestError } from '../../src/errors.js';
import {
  countOtlpSpans,
  decodeOtlpJson,
  decodeOtlpProtobuf,
  encodeOtlpProtobufResponse,
  otlpJsonResponse,
  otlpToSpans,
  type OtlpTraceRequest,
} from '../../src/traces/otlp.js';
import { validateSpans, type NormalizedSpan } from '../../src/traces/span-input.js';

/** A loopback collector that records what the real OpenTelemetry exporters send. */
type Captured = { contentType: string; body: Buffer };
let server: http.Server;
let baseUrl: string;
const captured: Captured[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      captured.push({ contentType: String(req.headers['content-type']), body });
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Records one GenAI trace (an agent root with a failing chat child) through `exporter`; returns the bodies it sent. */
async function exportGenAiTrace(
  exporter: SpanExporter,
  path: string,
): Promise<{ captures: Captured[]; traceId: string; rootId: string; childId: string }> {
  const before = captured.length;
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout-bot', 'deployment.environment.name': 'staging' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('sightline-test', '1.2.3');

  const root = tracer.startSpan('invoke_agent planner', {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'user.id': 'user-42',
      'session.id': 'sess-7',
      'input.value': 'plan my trip',
    },
  });
  const child = tracer.startSpan(
    'chat gpt-4o',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.model': 'gpt-4o-2024-08-06',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.usage.cost': 0.0042,
        'gen_ai.prompt': JSON.stringify([{ role: 'user', content: 'hi' }]),
        'http.status_code': 500,
        'retry.attempts': [1, 2],
        'sightline.evaluation_run_id': 'run-1',
      },
    },
    trace.setSpan(ROOT_CONTEXT, root),
  );
  const error = new TypeError('upstream refused');
  child.recordException(error);
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'chat failed' });
  child.end();
  root.setStatus({ code: SpanStatusCode.OK });
  root.end();

  await provider.forceFlush();
  await provider.shutdown();
  const captures = captured.slice(before);
  expect(captures.length, `the exporter should have posted to ${path}`).toBeGreaterThan(0);
  return {
    captures,
    traceId: root.spanContext().traceId,
    rootId: root.spanContext().spanId,
    childId: child.spanContext().spanId,
  };
}

function decodeAll(captures: Captured[], decode: (body: Buffer) => OtlpTraceRequest): NormalizedSpan[] {
  const inputs = captures.flatMap((c) => otlpToSpans(decode(c.body)));
  const { accepted, rejected } = validateSpans(inputs);
  expect(rejected).toEqual([]);
  return accepted;
}

function assertGenAiTrace(spans: NormalizedSpan[], ids: { traceId: string; rootId: string; childId: string }) {
  expect(spans).toHaveLength(2);
  const root = spans.find((s) => s.span_id === ids.rootId)!;
  const child = spans.find((s) => s.span_id === ids.childId)!;
  expect(root).toBeDefined();
  expect(child).toBeDefined();

  expect(root.trace_id).toBe(ids.traceId);
  expect(root.trace_id).toMatch(/^[0-9a-f]{32}$/);
  expect(root.parent_span_id).toBe('');
  expect(root.name).toBe('invoke_agent planner');
  expect(root.kind).toBe('agent');
  expect(root.status).toBe('ok');
  expect(root.user_id).toBe('user-42');
  expect(root.session_id).toBe('sess-7');
  expect(root.input).toBe('plan my trip');
  expect(root.environment).toBe('staging');
  // Resource attributes are the producer's, kept apart from the span's metadata (issue 19).
  expect(root.metadata['service.name']).toBeUndefined();
  expect(root.resource['service.name']).toBe('checkout-bot');
  expect(root.metadata['user.id']).toBeUndefined();

  expect(child.trace_id).toBe(ids.traceId);
  expect(child.parent_span_id).toBe(ids.rootId);
  expect(child.kind).toBe('llm');
  expect(child.model_name).toBe('gpt-4o');
  expect(child.input_tokens).toBe(120);
  expect(child.output_tokens).toBe(30);
  expect(child.total_tokens).toBe(150);
  expect(child.cost).toBeCloseTo(0.0042, 10);
  expect(child.status).toBe('error');
  expect(child.error_type).toBe('TypeError');
  expect(child.error_message).toBe('upstream refused');
  expect(child.input).toBe('[{"role":"user","content":"hi"}]');
  expect(child.output).toBeNull();
  expect(child.evaluation_run_id).toBe('run-1');
  expect(child.environment).toBe('staging');
  // Unmapped attributes stay on the span: the user's own (`retry.attempts`) as metadata, the
  // conventions' and the unused alternative model as attributes (docs/traces.md, "Metadata and
  // attributes"); the resource and the instrumentation scope in `resource`.
  expect(child.metadata).toEqual({ 'retry.attempts': '[1,2]' });
  expect(child.attributes).toMatchObject({
    'gen_ai.response.model': 'gpt-4o-2024-08-06',
    'http.status_code': '500',
  });
  expect(child.resource).toMatchObject({
    'service.name': 'checkout-bot',
    'otel.scope.name': 'sightline-test',
    'otel.scope.version': '1.2.3',
  });
  expect(Object.keys(child.metadata)).not.toContain('service.name');
  expect(child.attributes['exception.stacktrace']).toContain('upstream refused');
  expect(Object.keys(child.metadata)).not.toContain('gen_ai.request.model');
  expect(Object.keys(child.metadata)).not.toContain('deployment.environment.name');

  // Times: real clock, child inside root, epoch ms.
  expect(Math.abs(root.start_time - Date.now())).toBeLessThan(60_000);
  // The SDK stamps each span from its own performance.now() anchor, so a child started right after
  // its parent can read up to a millisecond earlier; the decoder itself is exact (BigInt nanos).
  expect(child.start_time).toBeGreaterThanOrEqual(root.start_time - 1);
  expect(root.end_time).not.toBeNull();
  expect(root.end_time!).toBeGreaterThanOrEqual(child.end_time! - 1);
}

describe('OTLP protobuf (exporter-trace-otlp-proto)', () => {
  it('maps a GenAI trace sent by the real exporter', async () => {
    const exporter = new ProtoExporter({ url: `${baseUrl}/v1/traces` });
    const { captures, ...ids } = await exportGenAiTrace(exporter, 'protobuf');
    for (const c of captures) expect(c.contentType).toBe('application/x-protobuf');
    assertGenAiTrace(decodeAll(captures, decodeOtlpProtobuf), ids);
    expect(countOtlpSpans(decodeOtlpProtobuf(captures[0]!.body))).toBe(2);
  });

  it('refuses a corrupt body with a BadRequestError', async () => {
    const { captures } = await exportGenAiTrace(new ProtoExporter({ url: `${baseUrl}/v1/traces` }), 'protobuf');
    const body = captures[0]!.body;
    const truncated = body.subarray(0, body.length - 7);
    expect(() => decodeOtlpProtobuf(truncated)).toThrow(BadRequestError);
    // Wire type 7 does not exist.
    expect(() => decodeOtlpProtobuf(Buffer.from([0x0f, 0xff, 0xff, 0xff]))).toThrow(BadRequestError);
    try {
      decodeOtlpProtobuf(Buffer.from('not protobuf at all, just text'));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).status).toBe(400);
    }
  });

  it('decodes links and the dropped counts the producer reports', () => {
    const types = (
      otlpRoot as unknown as {
        opentelemetry: {
          proto: {
            collector: {
              trace: {
                v1: Record<string, { fromObject(o: unknown): unknown; encode(m: unknown): { finish(): Uint8Array } }>;
              };
            };
          };
        };
      }
    ).opentelemetry.proto.collector.trace.v1;
    const Request = types.ExportTraceServiceRequest!;
    const hexBytes = (hex: string) => Buffer.from(hex, 'hex');
    const body = Request.encode(
      Request.fromObject({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: hexBytes('0af7651916cd43dd8448eb211c80319c'),
                    spanId: hexBytes('b7ad6b7169203331'),
                    name: 'linked',
                    startTimeUnixNano: '1700000000000000000',
                    droppedAttributesCount: 3,
                    droppedEventsCount: 2,
                    droppedLinksCount: 1,
                    events: [{ name: 'chunk', timeUnixNano: '1700000000001000000', droppedAttributesCount: 4 }],
                    links: [
                      {
                        traceId: hexBytes('0af7651916cd43dd8448eb211c80319d'),
                        spanId: hexBytes('00f067aa0ba902b7'),
                        droppedAttributesCount: 5,
                        attributes: [{ key: 'k', value: { stringValue: 'v' } }],
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      }),
    ).finish();
    const [span] = decodeOtlpProtobuf(body).resourceSpans[0]!.scopeSpans[0]!.spans;
    expect(span).toMatchObject({ droppedAttributesCount: 3, droppedEventsCount: 2, droppedLinksCount: 1 });
    expect(span!.links).toEqual([
      {
        traceId: '0af7651916cd43dd8448eb211c80319d',
        spanId: '00f067aa0ba902b7',
        attributes: new Map([['k', 'v']]),
        droppedAttributesCount: 5,
      },
    ]);
    const [mapped] = otlpToSpans(decodeOtlpProtobuf(body));
    expect(mapped).toMatchObject({
      events: [{ name: 'chunk', time: '2023-11-14T22:13:20.001Z', attributes: {} }],
      links: [{ trace_id: '0af7651916cd43dd8448eb211c80319d', span_id: '00f067aa0ba902b7', attributes: { k: 'v' } }],
      dropped_attributes_count: 3 + 2 + 1 + 4 + 5,
    });
  });

  it('reads an empty body as an empty request', () => {
    expect(decodeOtlpProtobuf(Buffer.alloc(0))).toEqual({ resourceSpans: [] });
  });

  it('encodes the partial-success answer OTLP clients expect', () => {
    const types = (
      otlpRoot as unknown as {
        opentelemetry: {
          proto: { collector: { trace: { v1: Record<string, { decode(b: Uint8Array): { toJSON(): unknown } }> } } };
        };
      }
    ).opentelemetry.proto.collector.trace.v1;
    const decoded = types
      .ExportTraceServiceResponse!.decode(encodeOtlpProtobufResponse(3, '3 spans rejected'))
      .toJSON();
    expect(decoded).toEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: '3 spans rejected' } });
    expect(encodeOtlpProtobufResponse(0)).toHaveLength(0);
    expect(otlpJsonResponse(0)).toEqual({});
    expect(otlpJsonResponse(2, 'x')).toEqual({ partialSuccess: { rejectedSpans: 2, errorMessage: 'x' } });
  });
});

describe('OTLP JSON (exporter-trace-otlp-http)', () => {
  it('maps a GenAI trace sent by the real exporter', async () => {
    const exporter = new JsonExporter({ url: `${baseUrl}/v1/traces` });
    const { captures, ...ids } = await exportGenAiTrace(exporter, 'json');
    for (const c of captures) expect(c.contentType).toBe('application/json');
    // As the route gets it: already parsed by Fastify's JSON parser.
    assertGenAiTrace(
      decodeAll(captures, (body) => decodeOtlpJson(JSON.parse(body.toString('utf8')))),
      ids,
    );
    // Raw text works too.
    expect(countOtlpSpans(decodeOtlpJson(captures[0]!.body.toString('utf8')))).toBe(2);
  });

  it('takes hand-written OTLP JSON: uppercase hex, numeric nanos, enum names, openinference kinds', () => {
    const request = decodeOtlpJson({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'deployment.environment', value: { stringValue: 'prod' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'EEE19B7EC3C1B174',
                  parentSpanId: '',
                  name: 'retrieve',
                  kind: 'SPAN_KIND_INTERNAL',
                  startTimeUnixNano: 1_700_000_000_123_456_789,
                  endTimeUnixNano: '1700000001123456789',
                  attributes: [
                    { key: 'openinference.span.kind', value: { stringValue: 'RETRIEVER' } },
                    { key: 'enduser.id', value: { intValue: '77' } },
                    { key: 'gen_ai.conversation.id', value: { stringValue: 'conv-1' } },
                    { key: 'gen_ai.usage.prompt_tokens', value: { intValue: 5 } },
                    { key: 'gen_ai.usage.completion_tokens', value: { intValue: '-1' } },
                    { key: 'flag', value: { boolValue: true } },
                    { key: 'nested', value: { kvlistValue: { values: [{ key: 'a', value: { doubleValue: 1.5 } }] } } },
                  ],
                  status: { code: 'STATUS_CODE_ERROR', message: 'timed out' },
                },
              ],
            },
          ],
        },
      ],
    });
    const [span] = otlpToSpans(request);
    expect(span).toMatchObject({
      trace_id: '5b8efff798038103d269b633813fc60c',
      span_id: 'eee19b7ec3c1b174',
      parent_span_id: null,
      kind: 'retriever',
      start_time: '2023-11-14T22:13:20.123Z',
      end_time: '2023-11-14T22:13:21.123Z',
      status: 'error',
      error_message: 'timed out',
      environment: 'prod',
      user_id: '77',
      session_id: 'conv-1',
      input_tokens: 5,
    });
    // A negative count is not a count: left in attributes, never gets the span rejected.
    expect(span!.output_tokens).toBeUndefined();
    expect(span!.metadata).toEqual({ flag: 'true', nested: '{"a":1.5}' });
    expect(span!.attributes).toEqual({ 'gen_ai.usage.completion_tokens': '-1' });
    expect(validateSpans([span]).accepted[0]).toMatchObject({
      total_tokens: 5,
      output_tokens: 0,
      start_time: 1_700_000_000_123,
    });
  });

  it('maps exception events to an error unless the span was explicitly OK, and caps metadata', () => {
    const attrs = Array.from({ length: 200 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } }));
    const exception = {
      name: 'exception',
      attributes: [{ key: 'exception.type', value: { stringValue: 'ValueError' } }],
    };
    const span = (statusCode: number) => ({
      traceId: '01',
      spanId: '02',
      name: 'tool call',
      startTimeUnixNano: '1700000000000000000',
      attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'execute_tool' } }, ...attrs],
      events: [exception],
      status: { code: statusCode },
    });
    const spans = otlpToSpans(decodeOtlpJson({ resourceSpans: [{ scopeSpans: [{ spans: [span(0), span(1)] }] }] }));
    expect(spans[0]).toMatchObject({ kind: 'tool', status: 'error', error_type: 'ValueError', end_time: null });
    expect(spans[1]).toMatchObject({ status: 'ok', error_type: 'ValueError' });
    expect(Object.keys(spans[0]!.metadata!)).toHaveLength(128);
  });

  it('leaves an unknown operation lowercase, defaults to custom, and rejects a span with no start time', () => {
    const base = { traceId: 'aa', spanId: 'bb', name: 'x' };
    const spans = otlpToSpans(
      decodeOtlpJson({
        resourceSpans: [
          {
            scopeSpans: [
              {
                spans: [
                  {
                    ...base,
                    startTimeUnixNano: '1',
                    attributes: [{ key: 'gen_ai.operation.name', value: { stringValue: 'Rerank' } }],
                  },
                  {
                    ...base,
                    startTimeUnixNano: '1',
                    attributes: [
                      { key: 'sightline.span.kind', value: { stringValue: 'chain' } },
                      { key: 'gen_ai.operation.name', value: { stringValue: 'chat' } },
                    ],
                  },
                  { ...base, startTimeUnixNano: '1' },
                  { ...base },
                ],
              },
            ],
          },
        ],
      }),
    );
    expect(spans.map((s) => s.kind)).toEqual(['rerank', 'chain', 'custom', 'custom']);
    expect(spans[1]!.metadata).toEqual({});
    expect(spans[1]!.attributes).toEqual({ 'gen_ai.operation.name': 'chat' });
    const { accepted, rejected } = validateSpans(spans);
    expect(accepted).toHaveLength(3);
    expect(rejected).toEqual([{ index: 3, span_id: 'bb', errors: ['start_time: Invalid ISO date-time'] }]);
  });

  it('refuses malformed JSON requests with a BadRequestError', () => {
    expect(() => decodeOtlpJson('{not json')).toThrow(BadRequestError);
    expect(() => decodeOtlpJson({ resourceSpans: {} })).toThrow(/resourceSpans should be an array/);
    expect(() =>
      decodeOtlpJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'zz-not-hex!' }] }] }] }),
    ).toThrow(/resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]\.traceId/);
    expect(() =>
      decodeOtlpJson({ resourceSpans: [{ scopeSpans: [{ spans: [{ startTimeUnixNano: 'soon' }] }] }] }),
    ).toThrow(BadRequestError);
    expect(() => decodeOtlpJson([])).toThrow(BadRequestError);
    expect(decodeOtlpJson({})).toEqual({ resourceSpans: [] });
  });
});
