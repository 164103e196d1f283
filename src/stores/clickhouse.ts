import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import path from 'node:path';
import fs from 'node:fs';
import type { Config } from '../config.js';

/** A read: SQL text and the values of its `{name:Type}` parameters (src/query builds them). */
export type Read = { query: string; query_params?: Record<string, unknown> };

export type ClickHouseStore = {
  client: ClickHouseClient;
  /**
   * The clients public SQL runs on, one query at a time each (src/sql/scheduler.ts shares them out).
   * On a server: the dedicated read-only user with row policies (CLICKHOUSE_SQL_USER; README,
   * "Public SQL"), else the main user; the server runs their queries side by side. Embedded: engine
   * sessions of their own on the same data directory, apart from ingest and lists, running
   * side by side (their queries carry no query parameters, which chdb would serialise).
   */
  sqlClients: ClickHouseClient[];
  /**
   * Embedded: an engine session of its own for long maintenance statements (the month merge,
   * src/traces/month-merge.ts), so the main session's ingest and lists do not wait behind them.
   * On a server the main client (the server runs statements side by side).
   */
  maintenance: ClickHouseClient;
  /** True when public SQL runs as the read-only user whose row policies read SQL_sightline_project. */
  sqlRowPolicies: boolean;
  /** The database every table lives in (`default` inside the embedded engine). */
  database: string;
  /** CLICKHOUSE_CLUSTER: the tables are Distributed over replicated `*_local` tables (docs/scaling.md). */
  cluster?: string;
  embedded: boolean;
  /** Runs a read on the main client; its rows as objects by column name (JSONEachRow). */
  rows<T>(read: Read): Promise<T[]>;
  /** Runs a read on the main client; its rows as arrays in column order (JSONCompactEachRow). */
  compactRows(read: Read): Promise<unknown[][]>;
  /**
   * Inserts rows given as arrays of `columns`' values (JSONCompactEachRow) into `table` with these
   * query `settings`, on the main client. Embedded, the rows are encoded straight into one byte buffer
   * the engine parses in place (see `insertCompact`); on a server, client.insert sends them.
   */
  insertCompact(insert: CompactInsert): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
};

export type CompactInsert = {
  table: string;
  columns: readonly string[];
  settings?: Record<string, number>;
  rows: readonly unknown[][];
};

/**
 * The one ClickHouse client of a process: HTTP to a server when CLICKHOUSE_URL is set, otherwise
 * the embedded chdb engine through `chdb/connection`. Everything above this module runs the same code.
 *
 * chdb keeps settings passed with a query on its connection (docs/design.md, "Known traps"), so callers put
 * per-query settings in the SQL text (`SETTINGS ...`), never in `clickhouse_settings`.
 */
export async function openClickHouse(config: Config, options: { dataDir?: string } = {}): Promise<ClickHouseStore> {
  const { url, user, password, database, sqlUser, sqlPassword, cluster } = config.clickhouse;
  if (url) {
    const bootstrap = createClient({ url, username: user, password });
    try {
      await bootstrap.command({
        query: `CREATE DATABASE IF NOT EXISTS ${database}${cluster ? ` ON CLUSTER '${cluster}'` : ''}`,
      });
    } finally {
      await bootstrap.close();
    }
    const clickhouse_settings = cluster ? CLUSTER_SETTINGS : undefined;
    const client = createClient({
      url,
      username: user,
      password,
      database,
      request_timeout: 60_000,
      clickhouse_settings,
    });
    const sqlClient = sqlUser
      ? createClient({
          url,
          username: sqlUser,
          password: sqlPassword,
          database,
          request_timeout: 60_000,
          clickhouse_settings,
        })
      : client;
    const store = wrap(
      client,
      Array.from({ length: config.sql.sessions }, () => sqlClient),
      database,
      false,
      !!sqlUser,
    );
    return cluster ? { ...store, cluster } : store;
  }
  const dir = path.resolve(options.dataDir ?? config.dataDir, 'clickhouse');
  fs.mkdirSync(dir, { recursive: true });
  const { createChdbConnection } = await import('chdb/connection');
  // The engine ignores the client's `database` option; its tables live in `default`.
  const open = () => {
    const connection = drainAfterFailure(createChdbConnection({ path: dir }));
    const client = createClient({ connection } as Parameters<typeof createClient>[0]);
    rawInserts.set(client, (params) => (connection as unknown as RawInserting)[RAW_INSERT](params));
    return client;
  };
  // Public SQL gets sessions of its own: callers' failing or slow queries stay away from ingest and lists.
  return wrap(open(), Array.from({ length: config.sql.sessions }, open), 'default', true, false, open());
}

/**
 * Settings of every query on a cluster (HTTP URL parameters, so none of chdb's sticky settings apply).
 * - insert_distributed_sync (distributed_foreground_insert): an insert into a Distributed table returns
 *   once every shard stored its rows, not when they are queued on the receiving node; the ingest
 *   answer promises the spans are stored (docs/design.md, decision 2).
 * - distributed_product_mode = 'local': IN/JOIN subqueries over Distributed tables run on each shard
 *   against its local tables; exact because every table is sharded by project and every query reads
 *   one project (src/stores/cluster-migrations.ts). The default, 'deny', refuses them.
 * - optimize_skip_unused_shards: `project_id = …` sends the query to that project's shard only.
 * - load_balancing = 'in_order', prefer_localhost_replica = 0: every process reads and writes the same
 *   (first healthy) replica of a shard, so the span writer's "already stored?" check sees the insert
 *   before it even while replication lags; another replica takes over only when the first fails.
 */
const CLUSTER_SETTINGS: ClickHouseSettings = {
  insert_distributed_sync: 1,
  distributed_product_mode: 'local',
  optimize_skip_unused_shards: 1,
  load_balancing: 'in_order',
  prefer_localhost_replica: 0,
};

type ChdbConnection = ReturnType<typeof import('chdb/connection').createChdbConnection>;
const CALLS = new Set(['query', 'exec', 'command', 'insert', 'ping']);
type RawInsertParams = Parameters<ChdbConnection['chdb']['rawInsert']>[0];
/** The engine's raw insert of a session, in turn with its other calls (`drainAfterFailure`). */
const RAW_INSERT = Symbol('rawInsert');
type RawInserting = { [RAW_INSERT](params: RawInsertParams): Promise<unknown> };
/**
 * The raw insert of an embedded client's session, by client: a client swapped in for another (a test
 * pointing the store at a refusing server) has none, and inserts through itself.
 */
const rawInserts = new WeakMap<ClickHouseClient, (params: RawInsertParams) => Promise<unknown>>();

/**
 * chdb 3.4 keeps the partial output of a query that fails mid-way in its session and hands it to
 * the NEXT query on that session as that query's answer (measured: a JSONEachRow query after a failed
 * one returned the failed query's first rows). So calls on one session run one at a time, and after
 * a failure a throwaway query takes the leftover before anyone else can. A session runs one query
 * at a time anyway (docs/design.md, "Known traps"), so nothing is lost.
 */
function drainAfterFailure(connection: ChdbConnection): ChdbConnection {
  let tail: Promise<unknown> = Promise.resolve();
  const drain = connection as unknown as { command(params: { query: string }): Promise<unknown> };
  return new Proxy(connection, {
    get(target, property, receiver) {
      if (property === RAW_INSERT)
        // The extension's getter reads a private field: it runs on the real object.
        return (params: RawInsertParams) => inTurn(() => target.chdb.rawInsert(params));
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      // Methods run on the real object: it keeps private fields a proxy can't reach.
      if (typeof property !== 'string' || !CALLS.has(property))
        return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) => inTurn(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
  function inTurn(call: () => Promise<unknown>): Promise<unknown> {
    const run = tail.then(async () => {
      try {
        return await call();
      } catch (error) {
        await drain.command({ query: 'SELECT 1' }).catch(() => {});
        throw error;
      }
    });
    tail = run.catch(() => {});
    return run;
  }
}

/**
 * JSONCompactEachRow bytes of `rows`: each row's JSON written into one growing buffer as it is made.
 * Joining the rows' strings instead (what client.insert does) keeps every row's text alive until the
 * join, then the joined text and the statement holding it: for spans of a few KB (a conversation's
 * input and output) that is two or three copies of the batch on the JS heap, which the garbage
 * collector copies again while they live; a row's string here dies young, and the buffer is
 * off-heap and handed to the engine as it is.
 */
export function compactEachRowBytes(rows: readonly unknown[][]): Buffer {
  // Room for rows of a few KB (a conversation's spans); a larger batch grows it by doubling.
  let buf = Buffer.allocUnsafe(Math.max(64 * 1024, rows.length * 4096));
  let at = 0;
  for (const row of rows) {
    const line = JSON.stringify(row);
    // A UTF-16 code unit takes at most 3 UTF-8 bytes: the exact count only when that may not fit.
    if (at + line.length * 3 + 1 > buf.length) {
      const need = at + Buffer.byteLength(line) + 1;
      if (need > buf.length) {
        const grown = Buffer.allocUnsafe(Math.max(buf.length * 2, need));
        buf.copy(grown, 0, 0, at);
        buf = grown;
      }
    }
    at += buf.write(line, at);
    buf[at++] = 0x0a;
  }
  return buf.subarray(0, at);
}

function wrap(
  client: ClickHouseClient,
  sqlClients: ClickHouseClient[],
  database: string,
  embedded: boolean,
  sqlRowPolicies: boolean,
  maintenance = client,
): ClickHouseStore {
  return {
    client,
    sqlClients,
    maintenance,
    sqlRowPolicies,
    database,
    embedded,
    async rows<T>(read: Read) {
      const result = await client.query({ query: read.query, query_params: read.query_params, format: 'JSONEachRow' });
      return result.json<T>();
    },
    async compactRows(read: Read) {
      const result = await client.query({
        query: read.query,
        query_params: read.query_params,
        format: 'JSONCompactEachRow',
      });
      return (await result.json()) as unknown as unknown[][];
    },
    async insertCompact({ table, columns, settings, rows }: CompactInsert) {
      if (rows.length === 0) return;
      // `this.client`: the store's client now (a test may have swapped it).
      const raw = rawInserts.get(this.client);
      if (raw) {
        await raw({
          table,
          columns,
          settings,
          format: 'JSONCompactEachRow',
          values: compactEachRowBytes(rows),
        });
        return;
      }
      // client.insert puts the table text before FORMAT: the columns and settings ride in it.
      const set = Object.entries(settings ?? {}).map(([k, v]) => `${k} = ${v}`);
      const target = `${table} (${columns.join(', ')})${set.length ? ` SETTINGS ${set.join(', ')}` : ''}`;
      await this.client.insert({ table: target, values: rows as unknown[][], format: 'JSONCompactEachRow' });
    },
    async ping() {
      const result = await client.ping();
      if (!result.success) throw result.error;
    },
    close: async () => {
      await Promise.all([...new Set([...sqlClients, maintenance])].filter((c) => c !== client).map((c) => c.close()));
      await client.close();
    },
  };
}
