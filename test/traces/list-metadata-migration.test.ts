import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir, testConfig } from '../support/harness.js';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { selectTracesQuery } from '../../src/traces/list-query.js';
import { KEYS_LIMITS } from '../../src/traces/read-bounds.js';
import type { Predicate } from '../../src/traces/filters.js';
import { CASES, FIRST, H, HOUR, MIN, SECOND, T, type Span } from './list-metadata-fixtures.js';
import { iso } from '../support/ingest.js';

/**
 * A store migrated to 0004 holds traces, then 0005 runs (its backfill), then more spans arrive. The
 * same store emptied and migrated to the end first, then given the same inserts, must merge to the
 * same rollup rows and list the same traces. (One embedded data directory per process: the two
 * passes share one store, emptied between them.)
 */
describe('traces stored before migration 0005', () => {
  const PROJECT = 'p-migration';
  let dir = '';
  let store: ClickHouseStore;
  const migrations = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'));
  const LATER: Span[] = [
    {
      trace_id: 'tr-late',
      span_id: 'l-grandchild',
      parent_span_id: 'l-child',
      name: 'grandchild',
      start_time: iso(T.late + 200),
      end_time: iso(T.late + 300),
      metadata: { tier: 'grandchild-tier', only_later: 'z' },
    },
    {
      trace_id: 'tr-new',
      span_id: 'n-root',
      name: 'New',
      start_time: iso(H + MIN),
      end_time: iso(H + 2 * MIN),
      metadata: { team: 'payments' },
    },
  ];
  const FILTERS = [
    ...CASES.filter(([name]) => !/re-sen/.test(name)),
    [
      'a key of spans stored after the migration',
      [{ field: 'metadata', op: 'eq', key: 'only_later', value: 'z' }],
      ['tr-late'],
    ],
    [
      'a value on both sides of the migration',
      [{ field: 'metadata', op: 'eq', key: 'team', value: 'payments' }],
      ['tr-new', 'tr-resent'],
    ],
  ] as [string, Predicate[], string[]][];
  type Pass = { merged: Record<string, unknown>[]; lists: Record<string, unknown>[][] };
  const passes: Pass[] = [];

  async function rows(query: string, query_params: Record<string, unknown> = {}) {
    return (await store.client.query({ query, query_params, format: 'JSONEachRow' })).json<Record<string, unknown>>();
  }
  async function run(versions: (v: number) => boolean): Promise<void> {
    for (const m of migrations.filter((m) => versions(m.version)))
      for (const query of m.statements) await store.client.command({ query });
  }
  /** Rows as the span writer stores them: a trace is filed under the hour of its first batch's earliest span. */
  async function insert(spans: Span[], hours: Map<string, number>): Promise<void> {
    const rows = spans.map((s) => {
      const trace = s.trace_id as string;
      if (!hours.has(trace)) {
        const earliest = Math.min(
          ...spans.filter((o) => o.trace_id === trace).map((o) => Date.parse(o.start_time as string)),
        );
        hours.set(trace, Math.floor(earliest / HOUR) * HOUR);
      }
      return {
        project_id: PROJECT,
        trace_id: trace,
        span_id: s.span_id,
        parent_span_id: s.parent_span_id ?? '',
        name: s.name,
        kind: 'span',
        start_time: chTime(s.start_time),
        end_time: chTime(s.end_time),
        status: 'ok',
        metadata: s.metadata ?? {},
        cost: s.cost ?? 0,
        user_id: s.user_id ?? '',
        session_id: s.session_id ?? '',
        trace_start_hour: hours.get(trace)! / 1000,
        ttl_days: 30,
      };
    });
    await store.client.insert({ table: 'spans', values: rows, format: 'JSONEachRow' });
  }
  const chTime = (isoTime: unknown) => (isoTime as string).replace('T', ' ').replace('Z', '');
  async function capture(): Promise<Pass> {
    const merged = await rows(
      `SELECT trace_id, root_head, user_head, session_head, arraySort(metadata_kv) AS kv, span_count, total_cost, start_time, end_time, ttl_days,
              finalizeAggregation(root).1 AS root_name
         FROM traces FINAL WHERE project_id = {p:String} ORDER BY trace_id`,
      { p: PROJECT },
    );
    const lists = [];
    for (const [, filters] of FILTERS) {
      const { query, query_params } = selectTracesQuery(
        { projectId: PROJECT, limit: 50, page: 0, includeEvaluations: true, filters },
        KEYS_LIMITS,
      );
      lists.push(await rows(query, query_params));
    }
    return { merged, lists };
  }
  async function empty(): Promise<void> {
    const objects = await rows(
      "SELECT name, engine FROM system.tables WHERE database = currentDatabase() ORDER BY engine = 'MaterializedView' DESC",
    );
    for (const o of objects)
      await store.client.command({
        query: `DROP ${o.engine === 'MaterializedView' ? 'VIEW' : 'TABLE'} ${String(o.name)} SYNC`,
      });
  }

  beforeAll(async () => {
    dir = tempDataDir('migration');
    store = await openClickHouse(testConfig({ DATA_DIR: dir, CLICKHOUSE_URL: undefined }));
    // The re-sent spans of SECOND are left out: the writer drops them before they reach the table.
    for (const migratedFirst of [false, true]) {
      await empty();
      const hours = new Map<string, number>();
      await run(migratedFirst ? () => true : (v) => v < 5);
      await insert(FIRST, hours);
      await insert(SECOND.slice(0, 1), hours);
      if (!migratedFirst) await run((v) => v >= 5);
      await insert(LATER, hours);
      passes.push(await capture());
    }
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('merges to the same rollup rows', () => {
    const [before, after] = passes;
    expect(before!.merged).toHaveLength(6);
    expect(before!.merged).toEqual(after!.merged);
    expect(before!.merged.find((r) => r.trace_id === 'tr-late')).toMatchObject({
      span_count: 3,
      root_name: 'Late Root',
      user_head: expect.stringMatching(/u-root$/),
      session_head: expect.stringMatching(/s-child$/),
    });
  });

  it.each(FILTERS.map((f, i) => [...f, i] as const))('lists alike: %s', (_name, _filters, expected, i) => {
    const [before, after] = passes;
    expect(before!.lists[i]!.map((r) => r.trace_id)).toEqual(expected);
    expect(before!.lists[i]).toEqual(after!.lists[i]);
  });
});
