import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * Tags as a trace field (issue 37: Langfuse tags landed as one metadata string): a span's `tags`,
 * a trace's the union of its spans', answered on list items and the detail, and filtered with
 * `tags in [...]` (any of them).
 */

const h = useHarness();
let key = '';
const T0 = Date.now() - 3_600_000;

const span = (trace: string, id: string, extra: Record<string, unknown> = {}) => ({
  trace_id: trace,
  span_id: id,
  name: id,
  start_time: iso(T0 + 1000),
  end_time: iso(T0 + 2000),
  ...extra,
});

beforeAll(async () => {
  key = (await projectWithKey(h(), 'tags')).key.key;
  await ingestSpans(h(), key, [
    span('tg-1', 'root', { tags: ['prod', 'beta', 'prod'] }),
    span('tg-1', 'llm', { parent_span_id: 'root', tags: ['vip', 'beta'], model_name: 'gpt-4o' }),
    span('tg-2', 'root', { model_name: 'claude-3' }),
    span('tg-2', 'tool', { parent_span_id: 'root', tags: ['vip'] }),
    span('tg-3', 'root', { cost: 0.5, end_time: iso(T0 + 9000) }),
  ]);
});

const list = (filters?: unknown[]) =>
  call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/traces`,
    token: key,
    query: filters ? { filters: JSON.stringify(filters) } : {},
  });

describe('tags', () => {
  it("answers a trace's tags (its spans' union) and models on list items and the detail", async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const byId = Object.fromEntries(
      (res.json().data as { trace_id: string; tags: string[]; model_names: string[] }[]).map((t) => [t.trace_id, t]),
    );
    expect(byId['tg-1']).toMatchObject({ tags: ['beta', 'prod', 'vip'], model_names: ['gpt-4o'] });
    expect(byId['tg-2']).toMatchObject({ tags: ['vip'], model_names: ['claude-3'] });
    expect(byId['tg-3']).toMatchObject({ tags: [], model_names: [] });
    // Tags are a field, not metadata.
    expect(byId['tg-1']!).not.toHaveProperty(['metadata_map', 'tags']);

    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/tg-1`, token: key });
    expect(detail.json()).toMatchObject({ tags: ['beta', 'prod', 'vip'], model_names: ['gpt-4o'] });
    const spans = detail.json().spans as { span_id: string; tags: string[] }[];
    expect(spans.find((s) => s.span_id === 'root')!.tags).toEqual(['prod', 'beta']);
    expect(spans.find((s) => s.span_id === 'llm')!.tags).toEqual(['vip', 'beta']);
  });

  it('filters the list with tags in [...]: a trace with any of them', async () => {
    const ids = async (value: string[]) =>
      ((await list([{ field: 'tags', op: 'in', value }])).json().data as { trace_id: string }[])
        .map((t) => t.trace_id)
        .sort();
    expect(await ids(['vip'])).toEqual(['tg-1', 'tg-2']);
    expect(await ids(['prod'])).toEqual(['tg-1']);
    expect(await ids(['prod', 'vip'])).toEqual(['tg-1', 'tg-2']);
    expect(await ids(['nope'])).toEqual([]);
    const bad = await list([{ field: 'tags', op: 'eq', value: 'vip' }]);
    expect(bad.statusCode).toBe(400);
  });

  it('rejects a span with an empty or overlong tag, or more than 50', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key,
      payload: {
        spans: [
          span('tg-bad', 'a', { tags: [''] }),
          span('tg-bad', 'b', { tags: ['x'.repeat(201)] }),
          span('tg-bad', 'c', { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }),
          span('tg-bad', 'd', { tags: ['fine'] }),
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().accepted).toBe(1);
    expect(res.json().rejected.map((r: { span_id: string }) => r.span_id)).toEqual(['a', 'b', 'c']);
  });
});

describe('sorting the list', () => {
  const sorted = async (query: Record<string, string>) =>
    (
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key, query })).json().data as {
        trace_id: string;
      }[]
    )
      .map((t) => t.trace_id)
      // The rejection test's trace (one span) is left out: the three fixture traces are compared.
      .filter((id) => id !== 'tg-bad');

  it('sorts by a column, descending by default or ascending, ties newest first (issue 37)', async () => {
    // tg-3 costs 0.5, the others 0; all three start together, so ties fall back to the id, newest first.
    expect((await sorted({ sort: 'total_cost' }))[0]).toBe('tg-3');
    expect((await sorted({ sort: 'total_cost', order: 'asc' })).at(-1)).toBe('tg-3');
    expect(await sorted({ sort: 'duration_ms' })).toEqual(['tg-3', 'tg-2', 'tg-1']);
    expect(await sorted({ sort: 'span_count', order: 'asc' })).toEqual(['tg-3', 'tg-2', 'tg-1']);
    const bad = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key,
      query: { sort: 'input' },
    });
    expect(bad.statusCode).toBe(422);
  });
});
