import crypto from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { withTransaction } from '../../src/stores/postgres.js';
import { newTransactionScope, runInTransactionScope } from '../../src/stores/transaction-scope.js';

/**
 * The plumbing under idempotent creates (src/stores/transaction-scope.ts), on the real Postgres: inside a
 * scope, `pool.query` and `withTransaction` join the scope's transaction, a failing nested transaction
 * rolls back alone, and whatever the scope left running goes back to the pool once it is closed.
 */

const h = useHarness();
const tables: string[] = [];
afterAll(async () => {
  for (const table of tables) await h().ctx.pg.pool.query(`DROP TABLE IF EXISTS ${table}`);
});

async function probeTable(): Promise<string> {
  const table = `scope_probe_${crypto.randomBytes(4).toString('hex')}`;
  await h().ctx.pg.pool.query(`CREATE TABLE ${table} (v text PRIMARY KEY)`);
  tables.push(table);
  return table;
}

async function values(table: string): Promise<string[]> {
  const { rows } = await h().ctx.pg.pool.query<{ v: string }>(`SELECT v FROM ${table} ORDER BY v`);
  return rows.map((r) => r.v);
}

/** Runs `fn` in a scope on a new transaction, then commits or rolls back as told; closes the scope. */
async function inScope(end: 'COMMIT' | 'ROLLBACK', fn: () => Promise<void>) {
  const client = await h().ctx.pg.pool.connect();
  await client.query('BEGIN');
  const scope = newTransactionScope(client);
  try {
    await runInTransactionScope(scope, fn);
  } finally {
    scope.open = false;
    await client.query(end);
    client.release();
  }
}

describe('a transaction scope', () => {
  it("takes the pool's queries and nested transactions into its transaction: a rollback undoes them all", async () => {
    const table = await probeTable();
    const pool = h().ctx.pg.pool;
    await inScope('ROLLBACK', async () => {
      await pool.query(`INSERT INTO ${table} VALUES ('plain')`);
      await withTransaction(pool, async (tx) => void (await tx.query(`INSERT INTO ${table} VALUES ('nested')`)));
      // The scope's own uncommitted rows are visible to its queries.
      expect((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n).toBe(2);
    });
    expect(await values(table)).toEqual([]);
    await inScope('COMMIT', async () => {
      await pool.query(`INSERT INTO ${table} VALUES ('plain')`);
      await withTransaction(pool, async (tx) => void (await tx.query(`INSERT INTO ${table} VALUES ('nested')`)));
    });
    expect(await values(table)).toEqual(['nested', 'plain']);
  });

  it('rolls a failing nested transaction back alone, as its own transaction would be, and goes on', async () => {
    const table = await probeTable();
    const pool = h().ctx.pg.pool;
    await inScope('COMMIT', async () => {
      await pool.query(`INSERT INTO ${table} VALUES ('before')`);
      const failing = withTransaction(pool, async (tx) => {
        await tx.query(`INSERT INTO ${table} VALUES ('undone')`);
        await tx.query(`INSERT INTO ${table} VALUES ('before')`); // a duplicate key: the nested part fails
      });
      await expect(failing).rejects.toMatchObject({ code: '23505' });
      // Nested inside nested runs at once (it would wait forever for its own turn otherwise).
      await withTransaction(pool, (tx) =>
        withTransaction(pool, async () => void (await tx.query(`INSERT INTO ${table} VALUES ('deep')`))),
      );
      await pool.query(`INSERT INTO ${table} VALUES ('after')`);
    });
    expect(await values(table)).toEqual(['after', 'before', 'deep']);
  });

  it('once closed, sends what its code still runs to the pool, outside the finished transaction', async () => {
    const table = await probeTable();
    const pool = h().ctx.pg.pool;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let detached!: Promise<unknown>;
    await inScope('ROLLBACK', async () => {
      await pool.query(`INSERT INTO ${table} VALUES ('rolled back')`);
      // Started inside the scope, run after it closed: a pool query of its own, committed.
      detached = gate.then(() => pool.query(`INSERT INTO ${table} VALUES ('after the scope')`));
    });
    open();
    await detached;
    expect(await values(table)).toEqual(['after the scope']);
  });
});
