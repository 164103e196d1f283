import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDataDir, testConfig } from './harness.js';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';

/**
 * An embedded ClickHouse in a data directory of its own, left unmigrated, for a test that runs the
 * migrations step by step (data stored under the old ones, then the one under test): opened before the
 * file's tests, closed and removed after them.
 */
export function useMigrationStore(name: string) {
  let dir = '';
  let store: ClickHouseStore | undefined;
  const migrations = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'));
  beforeAll(async () => {
    dir = tempDataDir(name);
    store = await openClickHouse(testConfig({ DATA_DIR: dir }), { dataDir: dir });
  });
  afterAll(async () => {
    await store?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const client = () => store!.client;
  return {
    migrations,
    client,
    /** Runs every statement of the migrations whose version `versions` keeps, in order. */
    run: async (versions: (v: number) => boolean) => {
      for (const m of migrations.filter((x) => versions(x.version)))
        for (const query of m.statements) await client().command({ query });
    },
    /** The first row of `query`. */
    one: async (query: string) =>
      (await (await client().query({ query, format: 'JSONEachRow' })).json<Record<string, string | number>>())[0]!,
  };
}
