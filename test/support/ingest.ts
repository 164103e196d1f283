import { expect } from 'vitest';
import { call, PUBLIC, type Harness } from './harness.js';

/** Sends spans through the public ingest route in requests of 1,000, expecting every one accepted. */
export async function ingestSpans(h: Harness, apiKey: string, spans: unknown[]): Promise<void> {
  for (let i = 0; i < spans.length; i += 1000) {
    const res = await call(h.api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: apiKey,
      payload: { spans: spans.slice(i, i + 1000) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rejected).toEqual([]);
  }
}
