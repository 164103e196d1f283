import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { otlpTracesUrl, RESOURCE, type Target } from './scenario.js';

/**
 * The OpenTelemetry plumbing a Node app sets up next to an instrumentation library: an async context
 * manager (so child spans find their parent across awaits) and a provider exporting OTLP/HTTP JSON to
 * Sightline with the API key as Bearer token (docs/integrations/).
 */

let contextReady = false;
export function useAsyncContext(): void {
  if (contextReady) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  contextReady = true;
}

type ExportResult = Parameters<Parameters<SpanExporter['export']>[1]>[0];

/** Passes every export through and keeps its result, so a refused export fails the scenario. */
export class RecordingExporter implements SpanExporter {
  readonly results: ExportResult[] = [];
  readonly spans: ReadableSpan[] = [];
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans.push(...spans);
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
  /** Distinct trace ids of the exported spans, in export order. */
  traceIds(): string[] {
    return [...new Set(this.spans.map((s) => s.spanContext().traceId))];
  }
  /** Throws unless at least one export happened and every one succeeded (ExportResultCode 0). */
  assertExported(): void {
    if (this.results.length === 0) throw new Error('the library exported nothing');
    const failed = this.results.find((r) => r.code !== 0);
    if (failed) throw new Error(`an export failed: ${String(failed.error)}`);
  }
}

export function otlpJsonProvider(target: Target) {
  const exporter = new RecordingExporter(
    new OTLPTraceExporter({ url: otlpTracesUrl(target), headers: { Authorization: `Bearer ${target.apiKey}` } }),
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(RESOURCE),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { provider, exporter };
}
