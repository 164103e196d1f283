import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { listTraces } from '../../src/traces/service.js';
import { countsByHour, type TraceListParams } from '../../src/traces/list-query.js';

/**
 * Lists without filters take their total from the hourly sets of trace ids and their page from the
 * newest hours (clickhouse/0012_trace_list_hours.sql, list-query.ts `hourCountsQuery`). Pinned here:
 * the hand-computed answers where hours alone would be wrong (a window's ends inside an hour, a root
 * that arrived late and starts an hour before the hour its trace is filed under, a trace that becomes
 * an evaluation trace in a later batch, a trace re-sent), and the same pages and totals as the
 * one-pass read for every window, page and size tried.
 */
const HOUR = 3_600_000;
const MIN = 60_000;
const H = Math.floor(Date.now() / HOUR) * HOUR - 6 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();
const span = (trace: string, id: string, start: number, extra: Record<string, unknown> = {}) => ({
  trace_id: trace,
  span_id: id,
  name: id,
  start_time: iso(start),
  end_time: iso(start + 1000),
  ...extra,
});

// Trace starts (the root's, or the earliest span's): three an hour from H, one late root.
const FIRST = [
  span('a1', 'a1', H + 5 * MIN),
  span('a2', 'a2', H + 30 * MIN),
  span('a3', 'a3', H + 55 * MIN),
  span('b1', 'b1', H + HOUR + 10 * MIN),
  span('b2', 'b2', H + HOUR + 40 * MIN),
  span('c1', 'c1', H + 2 * HOUR + 20 * MIN),
  span('c2', 'c2', H + 2 * HOUR + 45 * MIN),
  span('d1', 'd1', H + 3 * HOUR + 15 * MIN),
  // A child first: the trace is filed under H+4h, its root (SECOND) starts at H+3h50.
  span('late', 'late-child', H + 4 * HOUR + 5 * MIN, { parent_span_id: 'late-root' }),
  span('e1', 'e1', H + 4 * HOUR + 30 * MIN),
  // Becomes an evaluation trace with a span of SECOND.
  span('ev', 'ev-root', H + 2 * HOUR + 30 * MIN),
];
const SECOND = [
  span('late', 'late-root', H + 3 * HOUR + 50 * MIN),
  span('ev', 'ev-child', H + 2 * HOUR + 31 * MIN, { parent_span_id: 'ev-root', evaluation_run_id: 'run-1' }),
  // Re-sent: counted once.
  span('a2', 'a2', H + 30 * MIN),
];

describe('lists without filters, from the hourly counts', () => {
  const h = useHarness();
  let key = '';
  let projectId = '';
  beforeAll(async () => {
    const made = await projectWithKey(h(), 'list-hours');
    key = made.key.key;
    projectId = made.project.id;
    for (const spans of [FIRST, SECOND]) {
      const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  const list = (query: Record<string, string>): Promise<LightMyRequestResponse> =>
    call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key, query });
  const ids = (res: LightMyRequestResponse): string[] => res.json().data.map((t: { trace_id: string }) => t.trace_id);

  it('counts every trace once, newest first, evaluation traces only when asked', async () => {
    const all = await list({});
    expect(ids(all)).toEqual(['e1', 'late', 'd1', 'c2', 'c1', 'b2', 'b1', 'a3', 'a2', 'a1']);
    expect(all.json().meta.total).toBe(10);
    const withEvaluations = await list({ include_evaluations: 'true' });
    expect(ids(withEvaluations)).toEqual(['e1', 'late', 'd1', 'c2', 'ev', 'c1', 'b2', 'b1', 'a3', 'a2', 'a1']);
    expect(withEvaluations.json().meta.total).toBe(11);
  });

  it('counts the hours a window cuts trace by trace', async () => {
    const res = await list({ start_after: iso(H + 30 * MIN), end_before: iso(H + 2 * HOUR + 30 * MIN) });
    expect(ids(res)).toEqual(['c1', 'b2', 'b1', 'a3', 'a2']);
    expect(res.json().meta.total).toBe(5);
  });

  it('leaves out a late root filed under a whole hour of the window but starting before it', async () => {
    const after = await list({ start_after: iso(H + 4 * HOUR) });
    expect(ids(after)).toEqual(['e1']);
    expect(after.json().meta.total).toBe(1);
    const before = await list({ start_after: iso(H + 3 * HOUR + 30 * MIN), end_before: iso(H + 4 * HOUR) });
    expect(ids(before)).toEqual(['late']);
    expect(before.json().meta.total).toBe(1);
  });

  it('pages from the newest hours, and past a late root below them', async () => {
    const pages: string[][] = [];
    for (let page = 0; page < 6; page++) {
      const res = await list({ limit: '2', page: String(page) });
      expect(res.json().meta.total).toBe(10);
      pages.push(ids(res));
    }
    expect(pages).toEqual([['e1', 'late'], ['d1', 'c2'], ['c1', 'b2'], ['b1', 'a3'], ['a2', 'a1'], []]);
  });

  it('answers what the one-pass read answers, window by window and page by page', async () => {
    const ends = [undefined, ...[0, 5, 30, 60, 110, 150, 230, 240, 245, 265, 300].map((m) => H + m * MIN)];
    let compared = 0;
    for (const startAfter of ends)
      for (const endBefore of ends) {
        if (startAfter !== undefined && endBefore !== undefined && endBefore <= startAfter) continue;
        for (const [limit, page] of [
          [1, 0],
          [3, 0],
          [3, 1],
          [50, 0],
        ] as const)
          for (const includeEvaluations of [false, true]) {
            const params: TraceListParams = {
              projectId,
              limit,
              page,
              startAfter,
              endBefore,
              includeEvaluations,
              filters: [],
            };
            expect(countsByHour(params)).toBe(true);
            const [byHours, onePass] = [
              await listTraces(h().ctx, params),
              await listTraces(h().ctx, { ...params, onePass: true }),
            ];
            const label = JSON.stringify({ startAfter, endBefore, limit, page, includeEvaluations });
            expect(byHours.meta, label).toEqual(onePass.meta);
            expect(
              byHours.data.map((t) => t.trace_id),
              label,
            ).toEqual(onePass.data.map((t) => t.trace_id));
            compared++;
          }
      }
    expect(compared).toBeGreaterThan(500);
  });
});
