import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClickHouseStore } from './clickhouse.js';
import { clusterLedgerStatement, clusterMigrations, type MigrationStatements } from './cluster-migrations.js';
import type { PostgresStore } from './postgres.js';

/** The repository root: migrations live in `postgres/` and `clickhouse/` beside `src/`. */
export const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export type Migration = { version: number; name: string; sql: string };

/** Reads `NNNN_name.sql` files of a folder, ordered by their number. */
export function readMigrations(dir: string): Migration[] {
  if (!fs.existsSync(dir)) return [];
  const seen = new Set<number>();
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .map((f) => {
      const version = Number(f.slice(0, 4));
      if (seen.has(version)) throw new Error(`two migrations share version ${version} in ${dir}`);
      seen.add(version);
      return { version, name: f.slice(5, -4), sql: fs.readFileSync(path.join(dir, f), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
}

/**
 * Splits a migration into statements at semicolons that end a line, outside quotes.
 * ClickHouse's HTTP interface takes one statement per request.
 */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (quote) {
      current += ch;
      if (ch === '\\') current += sql[++i] ?? '';
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end - 1;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    if (ch === ';') {
      if (current.trim()) statements.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  if (current.trim()) statements.push(current.trim());
  return statements;
}

// Any constant works; it only has to be the same in every Sightline process.
const MIGRATION_LOCK_KEY = 0x5167_6c6e;

export type MigrationDirs = { postgres: string; clickhouse: string };

const DEFAULT_DIRS: MigrationDirs = {
  postgres: path.join(ROOT_DIR, 'postgres'),
  clickhouse: path.join(ROOT_DIR, 'clickhouse'),
};

/**
 * Applies the pending Postgres then ClickHouse migrations, each once, recording them.
 * A Postgres advisory lock serialises processes that start together (ClickHouse has no locks,
 * and every Sightline process shares the Postgres).
 */
export async function migrate(
  pg: PostgresStore,
  ch: ClickHouseStore,
  dirs: MigrationDirs = DEFAULT_DIRS,
): Promise<{ postgres: number; clickhouse: number }> {
  const client = await pg.pool.connect();
  try {
    // Migrations (and waiting for another process's) may take longer than a request's statement deadline.
    if (!pg.embedded) await client.query('SET statement_timeout = 0');
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const applied = new Set(
        (await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      let postgres = 0;
      for (const m of readMigrations(dirs.postgres)) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`postgres migration ${m.version}_${m.name} failed: ${(error as Error).message}`);
        }
        postgres++;
      }
      const clickhouse = await migrateClickHouse(ch, dirs.clickhouse);
      return { postgres, clickhouse };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    }
  } finally {
    if (!pg.embedded) await client.query('RESET statement_timeout').catch(() => {});
    client.release();
  }
}

/**
 * The ClickHouse migrations as they run on this store: the files' statements on one node, or their
 * clustered translation when CLICKHOUSE_CLUSTER names a cluster (src/stores/cluster-migrations.ts).
 */
export function clickHouseMigrations(
  dir: string,
  cluster?: { cluster: string; database: string },
): MigrationStatements[] {
  const plain = readMigrations(dir).map((m) => ({
    version: m.version,
    name: m.name,
    statements: splitStatements(m.sql),
  }));
  return cluster ? clusterMigrations(plain, cluster) : plain;
}

async function migrateClickHouse(ch: ClickHouseStore, dir: string): Promise<number> {
  const cluster = ch.cluster ? { cluster: ch.cluster, database: ch.database } : undefined;
  // Translated before anything runs: a migration without a clustered form stops the start, untouched.
  const migrations = clickHouseMigrations(dir, cluster);
  await ch.client.command({
    query: cluster
      ? clusterLedgerStatement(cluster)
      : `CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime DEFAULT now())
            ENGINE = MergeTree ORDER BY version`,
  });
  const stored = await ch.rows<{ version: number }>({ query: 'SELECT version FROM schema_migrations' });
  const applied = new Set(stored.map((r) => Number(r.version)));
  let count = 0;
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    for (const statement of m.statements) {
      try {
        await ch.client.command({ query: statement });
      } catch (error) {
        throw new Error(`clickhouse migration ${m.version}_${m.name} failed: ${(error as Error).message}`);
      }
    }
    await ch.client.insert({
      table: 'schema_migrations',
      values: [{ version: m.version, name: m.name }],
      format: 'JSONEachRow',
    });
    count++;
  }
  return count;
}
