import { expect } from 'vitest';
import { call, PUBLIC, type Harness } from './harness.js';

/** Helpers for tests that send spans through the public ingest route. */

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Sends spans with an API key in requests of `batch` spans, every one of which must be accepted. Choose
 * the batch to fit the ingest limits (10,000 spans, 10 MiB): large spans need smaller batches, a trace of
 * thousands of spans may go in one request.
 */
export async function ingestSpans(h: Harness, key: string, spans: readonly unknown[], batch = 1000): Promise<void> {
  for (let i = 0; i < spans.length; i += batch) {
    const sent = spans.slice(i, i + batch);
    const res = await call(h.api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans: sent } });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    expect(res.json()).toEqual({ accepted: sent.length, rejected: [] });
  }
}
