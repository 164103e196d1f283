import pg from 'pg';
import path from 'node:path';
import fs from 'node:fs';
import type { Config } from '../config.js';
import { serializeProtocolSequences } from './pglite-protocol.js';
import { activeTransactionScope, nestedTransaction, routeQueriesThroughScope } from './transaction-scope.js';

export type PostgresStore = {
  pool: pg.Pool;
  embedded: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
};

export type Queryable = Pick<pg.Pool, 'query'> | pg.PoolClient;

/**
 * The Postgres pool of a process: DATABASE_URL when set, otherwise an embedded PGlite served on a
 * loopback socket so that `pg` is the only client code path.
 *
 * Embedded PGlite is ONE session shared by every connection and runs one transaction at a time
 * (docs/design.md, "Known traps"): use `SET LOCAL` only, and inside a transaction use only its client.
 */
export async function openPostgres(config: Config, options: { dataDir?: string; url?: string } = {}): Promise<PostgresStore> {
  const url = options.url ?? config.databaseUrl;
  if (url) {
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000 });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing
    return wrap(pool, false, async () => pool.end());
  }
  const server = await startEmbeddedPostgres(path.resolve(options.dataDir ?? config.dataDir, 'postgres'));
  // One connection: PGlite is one session, and with several connections a query from one could land
  // inside another's open transaction (seen as spurious 401/403/500 under concurrent sign-ups).
  // PGlite runs one statement at a time anyway, so queueing in the pool costs nothing.
  const pool = new pg.Pool({ ...server.connection, max: 1, connectionTimeoutMillis: 30_000 });
  pool.on('error', () => {});
  return wrap(pool, true, async () => {
    await pool.end();
    await server.stop();
  });
}

function wrap(pool: pg.Pool, embedded: boolean, close: () => Promise<void>): PostgresStore {
  // Inside an idempotent create's transaction, the pool's queries join it (transaction-scope.ts).
  routeQueriesThroughScope(pool);
  return {
    pool,
    embedded,
    async ping() {
      await pool.query('SELECT 1');
    },
    close,
  };
}

export type EmbeddedPostgres = {
  connection: { host: string; port: number; user: string; database: string };
  stop(): Promise<void>;
};

/** Starts PGlite on `dir` and serves it on a random loopback port. */
export async function startEmbeddedPostgres(dir: string): Promise<EmbeddedPostgres> {
  fs.mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  const db = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 64 });
  // Connections share one session: keep each one's Parse…Sync sequence whole (pglite-protocol.ts).
  serializeProtocolSequences(server);
  await server.start();
  const [host, port] = server.getServerConn().split(':');
  return {
    connection: { host: host!, port: Number(port), user: 'postgres', database: 'postgres' },
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}

/**
 * Runs `fn` in a transaction on one client; rolls back on any error. Inside a transaction scope
 * (an idempotent create, transaction-scope.ts) it is a savepoint of the scope's transaction.
 */
export async function withTransaction<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const scope = activeTransactionScope();
  if (scope) return nestedTransaction(scope, fn);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
