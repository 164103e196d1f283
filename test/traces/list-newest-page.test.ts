import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

/**
 * A newest-first list over a long window reads its page from the newest hours that hold it
 * (src/traces/service.ts `chooseNewestPage`): that must answer as a read of the whole window does, also when a trace is
 * filed hours after it started (its root arrived after a later span), so that it sorts below
 * traces filed before the first hour read.
 */

const HOUR = 3_600_000;
const H = Math.floor(Date.now() / HOUR) * HOUR;
const span = (trace: string, id: string, startMs: number, parent?: string) => ({
  trace_id: trace,
  span_id: id,
  ...(parent ? { parent_span_id: parent } : {}),
  name: `${trace} ${id}`,
  start_time: iso(startMs),
  end_time: iso(startMs + 500),
});

// Start order, newest first: y1 (H-2h+30m), y2 (H-4h), late (H-6h, filed at H-2h), y3 (H-8h).
const FIRST = [
  span('n-late', 'l1', H - 2 * HOUR + 10 * 60_000, 'l0'),
  span('n-y1', 'a0', H - 2 * HOUR + 30 * 60_000),
  span('n-y2', 'b0', H - 4 * HOUR),
  span('n-y3', 'c0', H - 8 * HOUR),
];
const SECOND = [span('n-late', 'l0', H - 6 * HOUR)];

describe('newest-first pages read from the newest hours', () => {
  const h = useHarness();
  let key = '';
  beforeAll(async () => {
    key = (await projectWithKey(h(), 'list-newest')).key.key;
    for (const spans of [FIRST, SECOND]) {
      const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  const page = async (limit: number, p: number) => {
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key,
      // No `start_after`: a window long enough to be read in two steps (list-query.ts splitsNewestPage).
      query: { limit: String(limit), page: String(p) },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json() as { data: { trace_id: string; start_time: string }[]; meta: { total: number } };
    return { ids: body.data.map((t) => t.trace_id), total: body.meta.total };
  };

  it('orders by start time, the late-filed trace below traces filed before its hour', async () => {
    // The two newest hours with traces (H-2h: y1 and late) hold a page of 2; late started at H-6h.
    expect(await page(2, 0)).toEqual({ ids: ['n-y1', 'n-y2'], total: 4 });
    expect(await page(2, 1)).toEqual({ ids: ['n-late', 'n-y3'], total: 4 });
    expect(await page(3, 0)).toEqual({ ids: ['n-y1', 'n-y2', 'n-late'], total: 4 });
    expect(await page(1, 0)).toEqual({ ids: ['n-y1'], total: 4 });
    expect(await page(10, 0)).toEqual({ ids: ['n-y1', 'n-y2', 'n-late', 'n-y3'], total: 4 });
    expect(await page(3, 1)).toEqual({ ids: ['n-y3'], total: 4 });
    expect(await page(2, 5)).toEqual({ ids: [], total: 4 });
  });
});
