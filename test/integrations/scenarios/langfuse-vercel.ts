import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LangfuseExporter } from 'langfuse-vercel';
import { RecordingExporter, useAsyncContext } from '../support/otel.js';
import { RESOURCE, type ScenarioResult, type Target } from '../support/scenario.js';
import { generateTravelAnswer } from './vercel-ai.js';

/**
 * The Vercel AI SDK scenario (./vercel-ai.ts) exported by Langfuse's `langfuse-vercel` 3.x: its
 * LangfuseExporter turns the AI SDK's OpenTelemetry spans into Langfuse ingestion events and posts them
 * to `${baseUrl}/api/public/ingestion` with Basic auth (any public key, a Sightline API key as secret).
 * It is a batch exporter: it finds a trace's root among the spans of one export, so it runs behind a
 * BatchSpanProcessor (as NodeSDK's `traceExporter` does), flushed once the call is over.
 *
 * The exporter keeps one Langfuse client per process (a static), so a process plays this once.
 */
export async function runLangfuseVercel(target: Target): Promise<ScenarioResult> {
  useAsyncContext();
  const exporter = new RecordingExporter(
    new LangfuseExporter({ publicKey: 'pk-lf-anything', secretKey: target.apiKey, baseUrl: target.origin }),
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(RESOURCE),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  await generateTravelAnswer(provider.getTracer('ai'));
  await provider.forceFlush();
  await provider.shutdown();
  exporter.assertExported();
  return { traceId: exporter.traceIds()[0]! };
}
