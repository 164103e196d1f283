import pg from 'pg';
import path from 'node:path';
import fs from 'node:fs';
import type { Config } from '../config.js';
import { serializeProtocolSequences } from './pglite-protocol.js';
import { activeTransactionScope, nestedTransaction, routeQueriesThroughScope } from './transaction-scope.js';

export type PostgresStore = {
  /** Request work, workers and migrations. On a server each statement stops at STATEMENT_TIMEOUT_MS. */
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
export async function openPostgres(
  config: Config,
  options: { dataDir?: string; url?: string } = {},
): Promise<PostgresStore> {
  const url = options.url ?? config.databaseUrl;
  if (url) {
    // A statement of request work stops at its deadline instead of holding a connection for ever, and
    // so does a transaction left idle (e.g. waiting on the engine between its statements).
    const pool = new pg.Pool({
      connectionString: url,
      max: 10,
      connectionTimeoutMillis: 5_000,
      statement_timeout: STATEMENT_TIMEOUT_MS,
      idle_in_transaction_session_timeout: STATEMENT_TIMEOUT_MS,
    });
    const auth = new pg.Pool({
      connectionString: url,
      max: 2,
      connectionTimeoutMillis: 5_000,
      statement_timeout: AUTH_STATEMENT_TIMEOUT_MS,
    });
    pool.on('error', () => {}); // idle-client errors surface on the next query instead of crashing
    auth.on('error', () => {});
    return wrap(pool, auth, false, async () => {
      await Promise.all([pool.end(), auth.end()]);
    });
  }
  const server = await startEmbeddedPostgres(path.resolve(options.dataDir ?? config.dataDir, 'postgres'));
  // One connection for request work: PGlite is one session and runs one statement at a time, so
  // queueing in the pool costs nothing. Authentication has a connection of its own: its statements
  // join the session's queue between the statements of whatever else runs (pglite-protocol.ts keeps
  // each connection's protocol sequence and open transaction whole), instead of waiting behind every
  // request queued in the pool. What bounds the wait is that no request's statement or transaction
  // holds the session for long (dataset versions are written in chunks: src/datasets/version-write.ts).
  const pool = new pg.Pool({ ...server.connection, max: 1, connectionTimeoutMillis: 30_000 });
  const auth = new pg.Pool({ ...server.connection, max: 1, connectionTimeoutMillis: 30_000 });
  pool.on('error', () => {});
  auth.on('error', () => {});
  return wrap(pool, auth, true, async () => {
    await Promise.all([pool.end(), auth.end()]);
    await server.stop();
  });
}

/** Deadline of one request-work statement on a Postgres server (embedded PGlite can't interrupt one). */
export const STATEMENT_TIMEOUT_MS = 60_000;
/** Deadline of one authentication statement: a lookup by a unique index. */
const AUTH_STATEMENT_TIMEOUT_MS = 5_000;

/**
 * The pool reserved for authentication and logins (issue 20), kept beside the request pool it was
 * opened with: no request's work waits in its queue, so a caller whose requests hold every connection
 * of `pool` can't keep anyone else from being recognised. Short statements only (a credential lookup,
 * a session insert). A store whose `pool` was swapped for another (a test's unreachable one) has no
 * reserved pool: its authentication uses that pool, and fails with it.
 */
const RESERVED_FOR_AUTH = new WeakMap<pg.Pool, pg.Pool>();

export function authPool(store: PostgresStore): Queryable {
  return RESERVED_FOR_AUTH.get(store.pool) ?? store.pool;
}

function wrap(pool: pg.Pool, auth: pg.Pool, embedded: boolean, close: () => Promise<void>): PostgresStore {
  RESERVED_FOR_AUTH.set(pool, auth);
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
