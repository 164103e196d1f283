import { expect } from 'vitest';
import type { Harness } from './harness.js';
import { call, PUBLIC } from './harness.js';

/** Helpers for tests that ingest spans of chosen sizes through the API. */

export const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Sends spans with an API key in requests of `batch` spans, all of which must be accepted. Choose the
 * batch to fit the ingest limits (10,000 spans, 10 MiB): large spans need smaller batches, a trace of
 * thousands of spans may go in one request.
 */
export async function ingestBatched(
  h: Harness,
  key: string,
  spans: Record<string, unknown>[],
  batch = 1000,
): Promise<void> {
  for (let i = 0; i < spans.length; i += batch) {
    const res = await call(h.api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key,
      payload: { spans: spans.slice(i, i + batch) },
    });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200);
    expect(res.json().rejected).toEqual([]);
  }
}
