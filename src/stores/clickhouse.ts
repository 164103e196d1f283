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
  const client = createClient({ connection: createChdbConnection({ path: dir }) } as Parameters<typeof createClient>[0]);
  return wrap(client, client, 'default', true);
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
