import { describe, expect, it } from 'vitest';
import { existingSpansQuery, type ExistingTraceRow } from '../../src/traces/queries.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * Ingest's exactly-once check reads one row per stored trace of a batch, holding only the batch's own
 * span ids: appending to a large trace does not pull the trace's every span into the process.
 */

const h = useHarness();

describe("ingest's stored-span check", () => {
  it('answers a batch appending to a trace of 3,000 spans with one row naming only the resent spans, and counts exactly once', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 3_600_000;
    const span = (i: number) => ({
      trace_id: 'big',
      span_id: `s${i}`,
      parent_span_id: i === 0 ? null : 's0',
      name: `step ${i}`,
      start_time: iso(t0 + i),
      cost: 0.001,
    });
    await ingestSpans(
      h(),
      key.key,
      Array.from({ length: 3000 }, (_, i) => span(i)),
      3000,
    );

    const ch = h().ctx.ch.client;
    const q = existingSpansQuery(
      project.id,
      ['big', 'new-trace'],
      [
        ['big', 's7'],
        ['big', 's2999'],
        ['big', 's3000'],
        ['new-trace', 'x'],
      ],
    );
    const rows = await (await ch.query({ ...q, format: 'JSONEachRow' })).json<ExistingTraceRow>();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.trace_id).toBe('big');
    expect([...rows[0]!.stored_span_ids].sort()).toEqual(['s2999', 's7']);
    expect(Number(rows[0]!.trace_start_hour) * 1000).toBe(t0 - (t0 % 3_600_000));

    // Two spans sent again and one new: the trace counts 3,001 spans.
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      payload: { spans: [span(7), span(2999), span(3000)] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces?limit=1`, token: key.key });
    expect(detail.json().data[0]).toMatchObject({ trace_id: 'big', span_count: 3001 });
    expect(detail.json().data[0].total_cost).toBeCloseTo(3.001, 9);
  });
});
