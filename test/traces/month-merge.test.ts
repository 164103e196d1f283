import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';
import { monthsDue, runMonthMergePass, traceMonths, type MonthPartition } from '../../src/traces/month-merge.js';

/**
 * Closed months of the trace rollup merged once (src/traces/month-merge.ts): a due month becomes
 * one part, the lists answer the same before and after, a late span afterwards is a small part of
 * its own that FINAL merges on read (its trace's item changes) and does not make the month due again.
 */

const DAY = 86_400_000;
const month = (p: string, parts: number, rows: number, largestRows: number): MonthPartition => ({
  partition: p,
  parts,
  rows,
  largestRows,
  bytes: 1000,
  minLevel: parts === 1 && largestRows === rows ? 1 : 0,
});

describe('which months are due', () => {
  const now = Date.UTC(2026, 10, 28); // 28 November 2026
  it('takes closed months past the wait that are not one settled part, newest first', () => {
    const due = monthsDue(
      [
        month('202608', 4, 100, 30),
        month('202609', 1, 100, 100),
        month('202610', 3, 100, 50),
        month('202611', 5, 100, 20), // the current month
      ],
      now,
    );
    expect(due.map((m) => m.partition)).toEqual(['202610', '202608']);
  });
  it('waits the days after the month closes', () => {
    const months = [month('202610', 3, 100, 50)];
    expect(monthsDue(months, Date.UTC(2026, 10, 2), { afterDays: 3 })).toEqual([]);
    expect(monthsDue(months, Date.UTC(2026, 10, 4), { afterDays: 3 })).toHaveLength(1);
  });
  it('leaves a merged month with a few late rows alone', () => {
    expect(monthsDue([month('202610', 2, 1000, 950)], now)).toEqual([]);
    expect(monthsDue([month('202610', 2, 1000, 850)], now)).toHaveLength(1);
  });
  it('merges a month of one part as inserted, never one of a merge', () => {
    expect(monthsDue([{ ...month('202610', 1, 100, 100), minLevel: 0 }], now)).toHaveLength(1);
    expect(monthsDue([{ ...month('202610', 1, 100, 100), minLevel: 2 }], now)).toEqual([]);
  });
});

describe('the month merge', () => {
  const h = useHarness();
  let key = '';
  // Mid-month, two months back: a closed month whatever today's date.
  const now = new Date();
  const base = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 10);
  const partition = `${new Date(base).getUTCFullYear()}${String(new Date(base).getUTCMonth() + 1).padStart(2, '0')}`;
  const TRACES = 20;
  const spanOf = (t: number, s: number, startMs: number) => ({
    trace_id: `mm-${t}`,
    span_id: `s${s}`,
    ...(s > 0 ? { parent_span_id: 's0' } : {}),
    name: s === 0 ? `root ${t}` : 'child',
    start_time: iso(startMs),
    end_time: iso(startMs + 1000),
    cost: 0.01 * (s + 1),
  });
  const list = async () => {
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key,
      query: { start_after: iso(base - DAY), end_before: iso(base + 20 * DAY), limit: '100' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      data: { trace_id: string; span_count: number; total_cost: number }[];
      meta: { total: number };
    };
  };
  const partsOf = async () => (await traceMonths(h().ctx.ch)).find((m) => m.partition === partition);

  beforeAll(async () => {
    const owner = await signUp(h(), 'month-merge');
    const project = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token: owner.token,
      payload: { name: `mm-${Date.now()}`, workspace_id: owner.workspace.id, trace_ttl_days: 3650 },
    });
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects/${project.json().id}/api-keys`,
      token: owner.token,
      payload: { name: 'k' },
    });
    key = res.json().key;
    // Each trace in three inserts: three parts of the month, each trace's rows in all of them.
    for (const s of [0, 1, 2]) {
      const spans = Array.from({ length: TRACES }, (_, t) => spanOf(t, s, base + t * 3_600_000 + s * 1000));
      const sent = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans } });
      expect(sent.statusCode, sent.body).toBe(200);
    }
  });

  it('merges a due month into one part with the same answers', async () => {
    const before = await list();
    expect(before.meta.total).toBe(TRACES);
    expect(before.data.every((t) => t.span_count === 3)).toBe(true);
    const parts = await partsOf();
    const pass = await runMonthMergePass(h().ctx.ch);
    // Three inserts, three parts of a few rows each: too young and too few for a background merge.
    expect(parts).toMatchObject({ parts: 3, rows: 3 * TRACES });
    expect(pass.merged?.partition).toBe(partition);
    expect(await partsOf()).toMatchObject({ parts: 1, rows: TRACES });
    expect(await list()).toEqual(before);
  });

  it('merges late spans on read and leaves the month settled', async () => {
    const late = spanOf(3, 3, base + 3 * 3_600_000 + 5000);
    const sent = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key,
      payload: { spans: [late] },
    });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(await partsOf()).toMatchObject({ parts: 2, rows: TRACES + 1 });
    const after = await list();
    expect(after.meta.total).toBe(TRACES);
    expect(after.data.find((t) => t.trace_id === 'mm-3')).toMatchObject({ span_count: 4 });
    expect((await runMonthMergePass(h().ctx.ch)).merged).toBeUndefined();
    expect(await partsOf()).toMatchObject({ parts: 2 });
  });
});
