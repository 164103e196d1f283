import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir, testConfig } from '../support/harness.js';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { payloadValues, withPayload } from '../../src/traces/span-payload.js';
import { EDGES } from './span-payload-fixtures.js';

/**
 * A store holding spans written before clickhouse/0016 (input and output stored columns) migrated to
 * the end: each span's input and output read back exactly from `io`, beside spans written since.
 * (Its own store and no harness: the embedded engine opens one data directory per process.)
 */
describe('spans stored before clickhouse/0016', () => {
  let dir = '';
  let store: ClickHouseStore;
  const migrations = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'));
  const run = async (versions: (v: number) => boolean) => {
    for (const m of migrations.filter((m) => versions(m.version)))
      for (const query of m.statements) await store.client.command({ query });
  };
  const row = (spanId: string, input: string | null, output: string | null) => ({
    project_id: 'p-io',
    trace_id: 'tr-io',
    span_id: spanId,
    name: spanId,
    kind: 'llm',
    start_time: '2026-11-01 10:00:00.000',
    trace_start_hour: '2026-11-01 10:00:00',
    ttl_days: 30,
    input,
    output,
  });
  const read = async () =>
    (
      await store.client.query({
        query: "SELECT span_id, input, output FROM spans WHERE project_id = 'p-io' ORDER BY span_id",
        format: 'JSONEachRow',
      })
    ).json<{ span_id: string; input: string | null; output: string | null }>();
  const expected = (prefix: string) =>
    EDGES.map(([input, output], i) => ({ span_id: `${prefix}-${String(i).padStart(2, '0')}`, input, output }));

  beforeAll(async () => {
    dir = tempDataDir('span-payload');
    store = await openClickHouse(testConfig({ DATA_DIR: dir, CLICKHOUSE_URL: undefined }));
    await run((v) => v < 16);
    await store.client.insert({
      table: 'spans',
      values: EDGES.map(([input, output], i) => row(`a-${String(i).padStart(2, '0')}`, input, output)),
      format: 'JSONEachRow',
    });
    await run((v) => v >= 16);
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads them back exactly after the migration, beside spans written the new way', async () => {
    await store.client.insert({
      table: 'spans',
      values: EDGES.map(([input, output], i) => withPayload(row(`b-${String(i).padStart(2, '0')}`, input, output))),
      format: 'JSONEachRow',
    });
    expect(await read()).toEqual([...expected('a'), ...expected('b')]);
    // The migration's own computation of the three columns agrees with the writer's.
    const stored = await store.rows<{ span_id: string; io: string; io_split: number; io_nulls: number }>({
      query:
        "SELECT span_id, io, io_split, io_nulls FROM spans WHERE project_id = 'p-io' AND startsWith(span_id, 'a-') ORDER BY span_id",
    });
    expect(stored.map((r) => [r.io, Number(r.io_split), Number(r.io_nulls)])).toEqual(
      EDGES.map(([input, output]) => payloadValues(input, output)),
    );
  });

  it('takes no input or output by name: an insert naming them fails instead of dropping them', async () => {
    await expect(
      store.client.insert({
        table: 'spans (project_id, trace_id, span_id, input)',
        values: [['p-io', 'tr-io', 'c-00', 'lost?']],
        format: 'JSONCompactEachRow',
      }),
    ).rejects.toThrow();
    expect((await read()).some((r) => r.span_id === 'c-00')).toBe(false);
  });
});
