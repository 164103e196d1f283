import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { CASES, FIRST, SECOND } from './list-metadata-fixtures.js';

/**
 * The metadata, name and search filters of list traces read `root_head` and `metadata_kv`
 * (clickhouse/0005_trace_list_filters.sql), not the root's whole state. These tests pin what that
 * representation must keep: the root's value wins over other spans' even when the root arrives
 * last, re-sent spans change nothing, keys and values with the encoding's own characters (':',
 * digits, quotes, backslashes, control characters, non-ASCII) match exactly, and traces stored
 * before the migration answer exactly as traces stored after it (list-metadata-migration.test.ts).
 */

describe('metadata filters through the API', () => {
  const h = useHarness();
  let key = '';
  beforeAll(async () => {
    key = (await projectWithKey(h(), 'list-metadata')).key.key;
    for (const batch of [FIRST, SECOND]) {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/traces`,
        token: key,
        payload: { spans: batch },
      });
      expect(res.statusCode, res.body).toBe(200);
    }
  });
  const list = (query: Record<string, string>): Promise<LightMyRequestResponse> =>
    call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key, query });
  const ids = (res: LightMyRequestResponse): string[] => res.json().data.map((t: { trace_id: string }) => t.trace_id);

  it.each(CASES)('%s', async (_name, filters, expected) => {
    const res = await list({ filters: JSON.stringify(filters) });
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual(expected);
    expect(res.json().meta.total).toBe(expected.length);
  });

  it("shows the name and metadata of the span the filters matched: the late root's, all spans' merged", async () => {
    const item = (
      await list({ filters: JSON.stringify([{ field: 'metadata', op: 'eq', key: 'tier', value: 'root-tier' }]) })
    ).json().data[0];
    expect(item.name).toBe('Late Root');
    expect(item.metadata_map).toEqual({ tier: 'root-tier', only_child: 'yes' });
    expect(item.span_count).toBe(2);
  });

  it('searches and filters by the name of the root, or of the earliest span of an orphan trace', async () => {
    expect(ids(await list({ name: 'late ROOT' }))).toEqual(['tr-late']);
    expect(ids(await list({ name: 'odd ✓' }))).toEqual(['tr-odd']);
    expect(ids(await list({ name: 'early' }))).toEqual(['tr-orphan']);
    expect(ids(await list({ name: 'later' }))).toEqual([]);
    expect(ids(await list({ search_query: 'colon root' }))).toEqual(['tr-colon']);
  });

  it("takes the late root's user over its child's, and the child's session while the root has none", async () => {
    expect(ids(await list({ user_id: 'u-root' }))).toEqual(['tr-late']);
    expect(ids(await list({ user_id: 'u-child' }))).toEqual([]);
    expect(ids(await list({ search_query: 'S-CHILD' }))).toEqual(['tr-late']);
    expect(ids(await list({ search_query: 'u-child' }))).toEqual([]);
    const item = (await list({ user_id: 'u-root' })).json().data[0];
    expect(item).toMatchObject({ user_id: 'u-root', session_id: 's-child' });
  });
});
