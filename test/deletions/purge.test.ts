import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { purgeProjects } from '../../src/deletions/service.js';
import { useHarness } from '../support/harness.js';
import { waitUntil } from '../support/wait.js';

const h = useHarness();

async function countByProject(table: string): Promise<Record<string, number>> {
  const result = await h().ctx.ch.client.query({
    query: `SELECT project_id, count() AS n FROM ${table} GROUP BY project_id`,
    format: 'JSONEachRow',
  });
  return Object.fromEntries(
    (await result.json<{ project_id: string; n: string | number }>()).map((r) => [r.project_id, Number(r.n)]),
  );
}

describe('purging a hard-deleted workspace’s ClickHouse rows', () => {
  it('removes the named projects’ rows from every table with a project_id, and only those', async () => {
    const table = `purge_probe_${crypto.randomBytes(4).toString('hex')}`;
    const { client } = h().ctx.ch;
    await client.command({
      query: `CREATE TABLE ${table} (project_id String, v UInt32) ENGINE = MergeTree ORDER BY project_id`,
    });
    try {
      const [gone, kept] = [crypto.randomUUID(), crypto.randomUUID()];
      await client.insert({
        table,
        values: [
          { project_id: gone, v: 1 },
          { project_id: gone, v: 2 },
          { project_id: kept, v: 3 },
        ],
        format: 'JSONEachRow',
      });
      expect(await purgeProjects(h().ctx, [gone])).toBeGreaterThanOrEqual(1);
      // Mutations finish in the background; wait for this one.
      await waitUntil(async () => !(await countByProject(table))[gone], 'the purge mutation to finish');
      expect(await countByProject(table)).toEqual({ [kept]: 1 });
      // A retried job deletes nothing more.
      await purgeProjects(h().ctx, [gone]);
      expect(await countByProject(table)).toEqual({ [kept]: 1 });
    } finally {
      await client.command({ query: `DROP TABLE IF EXISTS ${table} SYNC` });
    }
  });
});
