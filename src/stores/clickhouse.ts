import { createClient, type ClickHouseClient } from '@clickhouse/client';
import path from 'node:path';
import fs from 'node:fs';
import type { Config } from '../config.js';

export type ClickHouseStore = {
  client: ClickHouseClient;
  /**
   * The client public SQL runs on: on a server, a dedicated read-only user with SELECT on the
   * contract's physical tables only (CLICKHOUSE_SQL_USER); otherwise the main client, where the
   * guard alone stands between callers and the engine.
   */
  sqlClient: ClickHouseClient;
  /** The database every table lives in (`default` inside the embedded engine). */
  database: string;
  embedded: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
};

/**
 * The one ClickHouse client of a process: HTTP to a server when CLICKHOUSE_URL is set, otherwise
 * the embedded chdb engine through `chdb/connection`. Everything above this module runs the same code.
 *
 * chdb keeps settings passed with a query on its connection (DESIGN.md, "Known traps"), so callers put
 * per-query settings in the SQL text (`SETTINGS ...`), never in `clickhouse_settings`.
 */
export async function openClickHouse(config: Config, options: { dataDir?: string } = {}): Promise<ClickHouseStore> {
  const { url, user, password, database, sqlUser, sqlPassword } = config.clickhouse;
  if (url) {
    const bootstrap = createClient({ url, username: user, password });
    try {
      await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    } finally {
      await bootstrap.close();
    }
    const client = createClient({ url, username: user, password, database, request_timeout: 60_000 });
    const sqlClient = sqlUser ? createClient({ url, username: sqlUser, password: sqlPassword, database, request_timeout: 60_000 }) : client;
    return wrap(client, sqlClient, database, false);
  }
  const dir = path.resolve(options.dataDir ?? config.dataDir, 'clickhouse');
  fs.mkdirSync(dir, { recursive: true });
  const { createChdbConnection } = await import('chdb/connection');
  // The engine ignores the client's `database` option; its tables live in `default`.
  const open = () => createClient({ connection: drainAfterFailure(createChdbConnection({ path: dir })) } as Parameters<typeof createClient>[0]);
  // Public SQL gets its own session: callers' failing queries stay away from ingest and lists.
  return wrap(open(), open(), 'default', true);
}

type ChdbConnection = ReturnType<typeof import('chdb/connection').createChdbConnection>;
const CALLS = new Set(['query', 'exec', 'command', 'insert', 'ping']);

/**
 * chdb 3.4 keeps the partial output of a query that fails mid-way in its session and hands it to
 * the NEXT query on that session as that query's answer (measured: a JSONEachRow query after a failed
 * one returned the failed query's first rows). So calls on one session run one at a time, and after
 * a failure a throwaway query takes the leftover before anyone else can. A session runs one query
 * at a time anyway (DESIGN.md, "Known traps"), so nothing is lost.
 */
function drainAfterFailure(connection: ChdbConnection): ChdbConnection {
  let tail: Promise<unknown> = Promise.resolve();
  const drain = connection as unknown as { command(params: { query: string }): Promise<unknown> };
  return new Proxy(connection, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      // Methods run on the real object: it keeps private fields a proxy can't reach.
      if (typeof property !== 'string' || !CALLS.has(property)) return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => {
        const run = tail.then(async () => {
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } catch (error) {
            await drain.command({ query: 'SELECT 1' }).catch(() => {});
            throw error;
          }
        });
        tail = run.catch(() => {});
        return run;
      };
    },
  });
}

function wrap(client: ClickHouseClient, sqlClient: ClickHouseClient, database: string, embedded: boolean): ClickHouseStore {
  return {
    client,
    sqlClient,
    database,
    embedded,
    async ping() {
      const result = await client.ping();
      if (!result.success) throw result.error;
    },
    close: async () => {
      if (sqlClient !== client) await sqlClient.close();
      await client.close();
    },
  };
}
