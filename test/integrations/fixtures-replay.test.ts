import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { loadOtlpFixture, OTLP_FIXTURES } from '../support/otlp-fixtures.js';

/**
 * The recorded fixtures (test/fixtures/otlp/) are what the libraries really sent: the OTLP route takes
 * each one whole, one trace with every span, so they stay usable as ingest and mapping inputs.
 */

const h = useHarness();
const FIXTURES = OTLP_FIXTURES;

describe('recorded OTLP fixtures', () => {
  it('has the five libraries', () => {
    expect(FIXTURES).toEqual([
      'langfuse.json',
      'openinference-openai.json',
      'otel-genai.json',
      'traceloop.json',
      'vercel-ai.json',
    ]);
  });

  it.each(FIXTURES)('%s is accepted whole by POST /otel/v1/traces as one trace', async (file) => {
    const { body, spans, traceIds } = loadOtlpFixture(file);
    expect(traceIds).toHaveLength(1);

    const { key } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces`,
      token: key.key,
      payload: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});
    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceIds[0]}`, token: key.key });
    expect(detail.statusCode).toBe(200);
    expect(
      detail
        .json()
        .spans.map((s: { span_id: string }) => s.span_id)
        .sort(),
    ).toEqual(spans.map((s) => s.spanId).sort());
  });
});
