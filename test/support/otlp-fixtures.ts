import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The recorded OTLP exports of the real instrumentation libraries (test/fixtures/otlp/, with a README
 * saying how and with which versions they were recorded): one trace each, as OTLP JSON.
 */

const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/otlp');
export const OTLP_FIXTURES = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .sort();

type OtlpSpan = {
  traceId: string;
  spanId: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  events?: { timeUnixNano: string }[];
};
export type OtlpFixture = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

/**
 * A recording with its times moved so that it starts a minute ago: inside the list's default window,
 * and younger than a project's retention (30 days by default), past which spans expire.
 */
export function loadOtlpFixture(file: string): { body: OtlpFixture; spans: OtlpSpan[]; traceIds: string[] } {
  const body = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as OtlpFixture;
  const spans = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  const start = spans.reduce(
    (min, s) => (BigInt(s.startTimeUnixNano) < min ? BigInt(s.startTimeUnixNano) : min),
    BigInt(spans[0]!.startTimeUnixNano),
  );
  const delta = BigInt(Date.now() - 60_000) * 1_000_000n - start;
  const shift = (nanos: string) => String(BigInt(nanos) + delta);
  for (const s of spans) {
    s.startTimeUnixNano = shift(s.startTimeUnixNano);
    s.endTimeUnixNano = shift(s.endTimeUnixNano);
    for (const e of s.events ?? []) e.timeUnixNano = shift(e.timeUnixNano);
  }
  return { body, spans, traceIds: [...new Set(spans.map((s) => s.traceId))] };
}
