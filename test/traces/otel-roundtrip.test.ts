import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * The real OpenTelemetry JS SDK exporting to the running API over HTTP (docs/spans.md, OTLP), then
 * the trace read back through the public reads.
 */

const h = useHarness();
let otlpUrl: string;

beforeAll(async () => {
  await h().api.listen({ port: 0, host: '127.0.0.1' });
  otlpUrl = `http://127.0.0.1:${(h().api.server.address() as AddressInfo).port}${PUBLIC}/otel/v1/traces`;
});

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];
/** `ExportResultCode` of @opentelemetry/core (not a direct dependency). */
const ExportResultCode = { SUCCESS: 0, FAILED: 1 } as const;

/** Passes every export through and keeps its result, so a refused export fails the test. */
class RecordingExporter implements SpanExporter {
  readonly results: ExportResult[] = [];
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      this.results.push(result);
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Records an agent root with a failing chat child and exports it; returns the ids and times. */
async function recordGenAiTrace(exporter: SpanExporter, batch: boolean) {
  const recording = new RecordingExporter(exporter);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout-bot', 'deployment.environment.name': 'staging' }),
    spanProcessors: [batch ? new BatchSpanProcessor(recording) : new SimpleSpanProcessor(recording)],
  });
  const tracer = provider.getTracer('sightline-roundtrip', '1.0.0');
  const startMs = Date.now();
  const root = tracer.startSpan('invoke_agent planner', {
    startTime: startMs,
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
      startTime: startMs + 5,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 120,
        'gen_ai.usage.output_tokens': 30,
        'gen_ai.usage.cost': 0.0042,
        'http.status_code': 500,
      },
    },
    trace.setSpan(ROOT_CONTEXT, root),
  );
  child.recordException(new TypeError('upstream refused'));
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'chat failed' });
  child.end(startMs + 250);
  root.setStatus({ code: SpanStatusCode.OK });
  root.end(startMs + 400);
  await provider.forceFlush();
  await provider.shutdown();
  expect(recording.results.length).toBeGreaterThan(0);
  for (const r of recording.results) expect(r.code, String(r.error)).toBe(ExportResultCode.SUCCESS);
  return {
    traceId: root.spanContext().traceId,
    rootId: root.spanContext().spanId,
    childId: child.spanContext().spanId,
    startMs,
  };
}

async function assertReadBack(token: string, projectId: string, ids: Awaited<ReturnType<typeof recordGenAiTrace>>) {
  const list = async (filters: unknown[]) => {
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token,
      query: { filters: JSON.stringify(filters) },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const all = [
    { field: 'model_name', op: 'in', value: ['gpt-4o'] },
    { field: 'environment', op: 'in', value: ['staging'] },
    { field: 'status', op: 'in', value: ['error'] },
  ];
  const found = await list(all);
  expect(found.meta.total).toBe(1);
  for (const one of all) expect((await list([one])).meta.total).toBe(1);
  expect((await list([{ field: 'model_name', op: 'in', value: ['claude-3'] }])).meta.total).toBe(0);
  expect((await list([{ field: 'environment', op: 'in', value: ['production'] }])).meta.total).toBe(0);

  const item = found.data[0];
  expect(item).toMatchObject({
    trace_id: ids.traceId,
    project_id: projectId,
    name: 'invoke_agent planner',
    trace_start_time: new Date(ids.startMs).toISOString(),
    user_id: 'user-42',
    session_id: 'sess-7',
    span_count: 2,
    duration_ms: 400,
    error_count: 1,
    input: 'plan my trip',
    total_input_tokens: 120,
    total_output_tokens: 30,
  });
  expect(item.total_cost).toBeCloseTo(0.0042, 9);
  // Resource attributes are kept apart from the spans' metadata (issue 19), so they don't flood metadata_map.
  expect(item.metadata_map['service.name']).toBeUndefined();

  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${ids.traceId}`, token });
  expect(res.statusCode).toBe(200);
  const { spans, comment_count: comments, ...detail } = res.json();
  expect(comments).toBe(0);
  expect(detail).toEqual(item);
  expect(spans.map((s: { span_id: string }) => s.span_id)).toEqual([ids.rootId, ids.childId]);
  expect(spans[0]).toMatchObject({
    parent_span_id: null,
    kind: 'agent',
    status: 'ok',
    user_id: 'user-42',
    session_id: 'sess-7',
    environment: 'staging',
  });
  expect(spans[1]).toMatchObject({
    parent_span_id: ids.rootId,
    name: 'chat gpt-4o',
    kind: 'llm',
    model_name: 'gpt-4o',
    input_tokens: 120,
    output_tokens: 30,
    total_tokens: 150,
    status: 'error',
    error_type: 'TypeError',
    error_message: 'upstream refused',
    environment: 'staging',
    duration_ms: 245,
  });
  expect(spans[1].attributes).toMatchObject({ 'http.status_code': '500' });
  expect(spans[1].metadata['service.name']).toBeUndefined();

  const session = await call(h().api, { method: 'GET', url: `${PUBLIC}/sessions/sess-7`, token });
  expect(session.json()).toMatchObject({
    session_id: 'sess-7',
    trace_count: 1,
    user_id: 'user-42',
    total_input_tokens: 120,
  });
}

describe('OpenTelemetry SDK to Sightline over HTTP', () => {
  it('protobuf exporter with a batch processor', async () => {
    const { key, project } = await projectWithKey(h());
    const exporter = new ProtoExporter({ url: otlpUrl, headers: { Authorization: `Bearer ${key.key}` } });
    const ids = await recordGenAiTrace(exporter, true);
    await assertReadBack(key.key, project.id, ids);
  });

  it('JSON exporter with a simple processor', async () => {
    const { key, project } = await projectWithKey(h());
    const exporter = new JsonExporter({ url: otlpUrl, headers: { Authorization: `Bearer ${key.key}` } });
    const ids = await recordGenAiTrace(exporter, false);
    await assertReadBack(key.key, project.id, ids);
  });

  it('an export without a valid API key stores nothing', async () => {
    const { key, owner } = await projectWithKey(h());
    const attempts: Record<string, string>[] = [{}, { Authorization: `Bearer ${owner.token}` }];
    for (const headers of attempts) {
      const recording = new RecordingExporter(new JsonExporter({ url: otlpUrl, headers }));
      const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(recording)] });
      provider.getTracer('t').startSpan('refused').end();
      // The processor reports the refused export by rejecting the flush; the result is what we check.
      await provider.forceFlush().catch(() => {});
      await provider.shutdown();
      expect(recording.results.map((r) => r.code)).toEqual([ExportResultCode.FAILED]);
    }
    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
    expect(list.json().meta.total).toBe(0);
  });
});

describe('OTLP JSON posted by hand', () => {
  const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
  const span = (spanId: string, startMs: number | null) => ({
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId,
    name: `span ${spanId}`,
    ...(startMs === null ? {} : { startTimeUnixNano: nanos(startMs), endTimeUnixNano: nanos(startMs + 50) }),
    attributes: [{ key: 'gen_ai.request.model', value: { stringValue: 'gpt-4o-mini' } }],
  });
  const body = (spans: unknown[]) => ({
    resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 'hand' }, spans }] }],
  });
  const post = (token: string | undefined, payload: unknown) =>
    call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces`,
      token,
      payload: payload as Record<string, unknown>,
      headers: { 'content-type': 'application/json' },
    });

  it('answers {} when every span is stored, and a partial success naming the rejected ones', async () => {
    const { key } = await projectWithKey(h());
    const t0 = Date.now() - 60_000;
    const ok = await post(key.key, body([span('b7ad6b7169203331', t0)]));
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({});

    const partial = await post(key.key, body([span('00f067aa0ba902b7', null), span('00f067aa0ba902b8', t0 + 10)]));
    expect(partial.statusCode).toBe(200);
    const { partialSuccess } = partial.json();
    expect(Number(partialSuccess.rejectedSpans)).toBe(1);
    expect(typeof partialSuccess.errorMessage).toBe('string');
    expect(partialSuccess.errorMessage.length).toBeGreaterThan(0);

    const detail = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces/0af7651916cd43dd8448eb211c80319c`,
      token: key.key,
    });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().spans.map((s: { span_id: string }) => s.span_id)).toEqual([
      'b7ad6b7169203331',
      '00f067aa0ba902b8',
    ]);
    expect(detail.json().spans[1].model_name).toBe('gpt-4o-mini');
  });

  it('answers 401 without an API key', async () => {
    const { owner } = await projectWithKey(h());
    const payload = body([span('b7ad6b7169203331', Date.now())]);
    expect((await post(undefined, payload)).statusCode).toBe(401);
    expect((await post(owner.token, payload)).statusCode).toBe(401);
  });
});
