import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

/**
 * The trace list's shortcuts must not change an answer (src/traces/list-query.ts):
 * - a metadata predicate takes its traces from the pair index `trace_metadata_kv`
 *   (clickhouse/0014_trace_metadata_kv.sql), filled by a view on the `traces` block, and FINAL
 *   merges only those: pairs of every insert of a trace count, the root still wins when it arrives
 *   last, two metadata predicates intersect, the window bounds the index's hours;
 * - `name` and `search_query` search `root_head` as it is before parsing its JSON when the query has
 *   no character JSON escapes: a name with slashes, quotes and non-ASCII letters in other cases
 *   matches the same either way.
 */

const HOUR = 3_600_000;
const H = Math.floor(Date.now() / HOUR) * HOUR;
const span = (s: Record<string, unknown>) => ({
  end_time: iso(Number(Date.parse(s.start_time as string)) + 500),
  ...s,
});

// Newest last, each trace in an hour of its own; `old` far outside a one-day window.
const FIRST = [
  // The root's value wins over its child's.
  span({
    trace_id: 'c-root-wins',
    span_id: 'a0',
    name: 'Étape/Ü "quoted"',
    start_time: iso(H - 6 * HOUR),
    metadata: { team: 'a/b"c' },
  }),
  span({
    trace_id: 'c-root-wins',
    span_id: 'a1',
    parent_span_id: 'a0',
    name: 'child',
    start_time: iso(H - 6 * HOUR + 10),
    metadata: { team: 'x' },
  }),
  // A root without the key: any span's value matches; the second child arrives in the second batch.
  span({
    trace_id: 'c-no-key',
    span_id: 'b0',
    name: 'plain',
    start_time: iso(H - 5 * HOUR),
    metadata: { region: 'eu' },
  }),
  span({
    trace_id: 'c-no-key',
    span_id: 'b1',
    parent_span_id: 'b0',
    name: 'child',
    start_time: iso(H - 5 * HOUR + 10),
    metadata: { team: 'x' },
  }),
  // An orphan until its root arrives (second batch) with another value.
  span({
    trace_id: 'c-late-root',
    span_id: 'c1',
    parent_span_id: 'c0',
    name: 'orphan child',
    start_time: iso(H - 4 * HOUR + 10),
    metadata: { team: 'p' },
  }),
  span({
    trace_id: 'c-old',
    span_id: 'd0',
    name: 'old',
    start_time: iso(H - 72 * HOUR),
    metadata: { team: 'x', region: 'eu' },
  }),
];
const SECOND = [
  span({
    trace_id: 'c-no-key',
    span_id: 'b2',
    parent_span_id: 'b0',
    name: 'child',
    start_time: iso(H - 5 * HOUR + 20),
    metadata: { team: 'y' },
  }),
  span({
    trace_id: 'c-late-root',
    span_id: 'c0',
    name: 'Late',
    start_time: iso(H - 4 * HOUR),
    metadata: { team: 'q', region: 'eu' },
  }),
];

describe('trace list shortcuts answer as the merged rows do', () => {
  const h = useHarness();
  let key = '';
  beforeAll(async () => {
    key = (await projectWithKey(h(), 'list-candidates')).key.key;
    for (const spans of [FIRST, SECOND]) {
      const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans } });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  const list = (query: Record<string, string>): Promise<LightMyRequestResponse> =>
    call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key, query });
  const ids = async (query: Record<string, string>): Promise<string[]> => {
    const res = await list(query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().meta.total).toBe(res.json().data.length);
    return res.json().data.map((t: { trace_id: string }) => t.trace_id);
  };
  const meta = (...filters: { op: string; key: string; value: string }[]) => ({
    filters: JSON.stringify(filters.map((f) => ({ field: 'metadata', ...f }))),
  });

  it.each([
    ['the root wins over its child', [{ op: 'eq', key: 'team', value: 'x' }], ['c-no-key', 'c-old']],
    ["the root's own value, with a slash and a quote", [{ op: 'eq', key: 'team', value: 'a/b"c' }], ['c-root-wins']],
    ['a value of a child stored by a later insert', [{ op: 'eq', key: 'team', value: 'y' }], ['c-no-key']],
    ['the late root replaces the orphan child', [{ op: 'eq', key: 'team', value: 'p' }], []],
    ["the late root's value", [{ op: 'eq', key: 'team', value: 'q' }], ['c-late-root']],
    ['contains, root wins', [{ op: 'contains', key: 'team', value: '/b' }], ['c-root-wins']],
    ['contains, any child when the root lacks the key', [{ op: 'contains', key: 'team', value: 'y' }], ['c-no-key']],
    [
      'two metadata predicates intersect',
      [
        { op: 'eq', key: 'team', value: 'x' },
        { op: 'eq', key: 'region', value: 'eu' },
      ],
      ['c-no-key', 'c-old'],
    ],
    ['a key nobody has', [{ op: 'eq', key: 'nope', value: 'x' }], []],
  ] as const)('%s', async (_name, filters, expected) => {
    expect(await ids(meta(...filters))).toEqual(expected);
  });

  it("answers each item from all of the trace's inserts", async () => {
    const res = await list(meta({ op: 'eq', key: 'team', value: 'y' }));
    expect(res.json().data[0]).toMatchObject({ trace_id: 'c-no-key', name: 'plain', span_count: 3 });
    const late = await list(meta({ op: 'eq', key: 'team', value: 'q' }));
    expect(late.json().data[0]).toMatchObject({ trace_id: 'c-late-root', name: 'Late', span_count: 2 });
  });

  it('bounds the pair index by the window, and pages through its matches', async () => {
    const day = { start_after: new Date(H - 24 * HOUR).toISOString() };
    expect(await ids({ ...meta({ op: 'eq', key: 'team', value: 'x' }), ...day })).toEqual(['c-no-key']);
    expect(
      await ids({
        ...meta({ op: 'eq', key: 'region', value: 'eu' }),
        end_before: new Date(H - 4 * HOUR).toISOString(),
      }),
    ).toEqual(['c-no-key', 'c-old']);
    const second = await list({ ...meta({ op: 'eq', key: 'region', value: 'eu' }), limit: '1', page: '1' });
    expect(second.json().data.map((t: { trace_id: string }) => t.trace_id)).toEqual(['c-no-key']);
    expect(second.json().meta.total).toBe(3);
  });

  it('finds names by search and name filter with and without characters JSON escapes', async () => {
    for (const q of ['étape/ü', 'ÉTAPE', 'ü "QUOTED"', 'e/Ü "q', 'quoted'])
      expect(await ids({ name: q }), q).toEqual(['c-root-wins']);
    for (const q of ['étape/ü', 'ÉTAPE', '"quoted"'])
      expect(await ids({ search_query: q }), q).toEqual(['c-root-wins']);
    // `root_head` holds the rank and the metadata too: neither matches as a name.
    expect(await ids({ name: 'a/b' })).toEqual([]);
    expect(await ids({ name: 'team' })).toEqual([]);
    expect(await ids({ search_query: '0000' })).toEqual([]);
  });
});
