import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * The recorded fixtures (test/fixtures/otlp/) are what the libraries really sent: the OTLP route takes
 * each one whole, one trace with every span, so they stay usable as ingest and mapping inputs.
 */

const h = useHarness();
const DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/otlp');
const FIXTURES = fs.readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();

type OtlpSpan = { traceId: string; spanId: string; startTimeUnixNano: string; endTimeUnixNano: string; events?: { timeUnixNano: string }[] };
type Fixture = { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };

/**
 * Moves the recording's times so that it starts a minute ago: spans older than a project's retention
 * (30 days by default) expire from the store.
 */
function shiftToNow(spans: OtlpSpan[]): void {
  const start = spans.reduce((min, s) => (BigInt(s.startTimeUnixNano) < min ? BigInt(s.startTimeUnixNano) : min), BigInt(spans[0]!.startTimeUnixNano));
  const delta = BigInt(Date.now() - 60_000) * 1_000_000n - start;
  const shift = (nanos: string) => String(BigInt(nanos) + delta);
  for (const s of spans) {
    s.startTimeUnixNano = shift(s.startTimeUnixNano);
    s.endTimeUnixNano = shift(s.endTimeUnixNano);
    for (const e of s.events ?? []) e.timeUnixNano = shift(e.timeUnixNano);
  }
}

describe('recorded OTLP fixtures', () => {
  it('has the five libraries', () => {
    expect(FIXTURES).toEqual(['langfuse.json', 'openinference-openai.json', 'otel-genai.json', 'traceloop.json', 'vercel-ai.json']);
  });

  it.each(FIXTURES)('%s is accepted whole by POST /otel/v1/traces as one trace', async (file) => {
    const body = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Fixture;
    const spans = body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const traceIds = [...new Set(spans.map((s) => s.traceId))];
    expect(traceIds).toHaveLength(1);
    shiftToNow(spans);

    const { key } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST', url: `${PUBLIC}/otel/v1/traces`, token: key.key, payload: body, headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});
    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceIds[0]}`, token: key.key });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().spans.map((s: { span_id: string }) => s.span_id).sort()).toEqual(spans.map((s) => s.spanId).sort());
  });
});
