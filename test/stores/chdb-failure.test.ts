import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { tempDataDir, testConfig } from '../support/harness.js';

/**
 * chdb 3.4 hands the partial output of a query that failed mid-way to the next query of the same
 * session. The store drains it; without that, the next caller would read someone else's rows.
 */
let dir: string;
let store: ClickHouseStore;
beforeAll(async () => {
  dir = tempDataDir('chdb-failure');
  store = await openClickHouse(testConfig({ DATA_DIR: dir, CLICKHOUSE_URL: undefined }));
});
afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const FAILS_MIDWAY =
  'SELECT number FROM numbers(1000000) WHERE throwIf(number = 500000) = 0 SETTINGS max_block_size = 1000';

describe('a query that fails mid-way', () => {
  for (const which of ['client', 'SQL session 0', 'SQL session 1'] as const) {
    it(`leaves nothing for the next query on ${which}, even one sent at the same moment`, async () => {
      const client = which === 'client' ? store.client : store.sqlClients[Number(which.at(-1))]!;
      const [failed, next] = await Promise.allSettled([
        client.query({ query: FAILS_MIDWAY, format: 'JSONEachRow' }).then((r) => r.json()),
        client.query({ query: 'SELECT 42 AS answer', format: 'JSONEachRow' }).then((r) => r.json()),
      ]);
      expect(failed.status).toBe('rejected');
      expect(next).toEqual({ status: 'fulfilled', value: [{ answer: 42 }] });
      const after = await client.query({ query: 'SELECT 7 AS again', format: 'JSONEachRow' });
      expect(await after.json()).toEqual([{ again: 7 }]);
    });
  }
});
