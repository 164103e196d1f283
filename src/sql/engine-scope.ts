import type { ClickHouseStore } from '../stores/clickhouse.js';
import { CONTRACT } from './contract.js';

/**
 * The engine's own fence around public SQL (defense in depth: one guard bug must not be a leak).
 *
 * Every public SQL query carries `additional_table_filters`, a per-query setting the engine applies
 * to each read of a named table wherever it appears in the query: the contract's physical tables keep
 * only the caller's project's rows, and every other table the engine knows (the rollups, `system`,
 * `information_schema`) keeps none, but `system.one`, the one-row table a SELECT without FROM reads. Callers can't change it: SETTINGS is refused by the lexer, and
 * it is set after the caller's text. This is the embedded engine's stand-in for row policies: chdb's
 * default user has no access management (measured on chdb 3.4 / ClickHouse 26.7: CREATE USER and
 * CREATE ROW POLICY are refused with ACCESS_DENIED, and custom settings are unknown), while this
 * setting works there and on a server alike. On a server, row policies are added (README, "Public
 * SQL").
 */

/** Project ids are UUIDs (src/ids.ts newId); anything else never reaches an SQL literal. */
const PROJECT_ID = /^[0-9A-Za-z-]{1,64}$/;

export function projectLiteral(projectId: string): string {
  if (!PROJECT_ID.test(projectId)) throw new Error('unexpected project id');
  return `'${projectId}'`;
}

type Catalog = { scoped: string[]; closed: string[] };
const catalogs = new WeakMap<ClickHouseStore, Promise<Catalog>>();

/** The tables of the engine, read once per store (tables are created by migrations, before serving). */
function catalog(ch: ClickHouseStore): Promise<Catalog> {
  let pending = catalogs.get(ch);
  if (!pending) {
    pending = readCatalog(ch);
    pending.catch(() => catalogs.delete(ch));
    catalogs.set(ch, pending);
  }
  return pending;
}

async function readCatalog(ch: ClickHouseStore): Promise<Catalog> {
  const rows = await ch.rows<{ database: string; name: string }>({
    query: `SELECT database, name FROM system.tables
      WHERE database IN ('system', 'information_schema', 'INFORMATION_SCHEMA', currentDatabase(), {db:String})`,
    query_params: { db: ch.database },
  });
  const physical = new Set(CONTRACT.map((t) => t.name));
  // On a cluster the contract tables are Distributed over `<name>_local`, and a shard runs the query it
  // is sent, with these settings, against `<name>_local`: those get the project's filter too, or every
  // shard would answer nothing (src/stores/cluster-migrations.ts).
  if (ch.cluster) for (const name of [...physical]) physical.add(`${name}_local`);
  const scoped: string[] = [];
  const closed: string[] = [];
  for (const { database, name } of rows) {
    // A SELECT without FROM reads system.one, one row holding 0: it stays open.
    if (database === 'system' && name === 'one') continue;
    const keys = database === ch.database ? [`${database}.${name}`, name] : [`${database}.${name}`];
    (database === ch.database && physical.has(name) ? scoped : closed).push(...keys);
  }
  // A contract table must always be fenced, even if the catalog read missed it.
  for (const name of physical) if (!scoped.includes(name)) scoped.push(`${ch.database}.${name}`, name);
  return { scoped, closed };
}

/** `additional_table_filters` for one project: a ClickHouse map literal of table → condition. */
export async function tableFilters(ch: ClickHouseStore, projectId: string): Promise<string> {
  const { scoped, closed } = await catalog(ch);
  const own = `project_id = ${projectLiteral(projectId)}`.replaceAll("'", "''");
  const entries = [...scoped.map((t) => `'${quote(t)}': '${own}'`), ...closed.map((t) => `'${quote(t)}': '0'`)];
  return `{${entries.join(', ')}}`;
}

/** A table name inside a map key literal: names here come from the engine's catalog, so only quotes need care. */
function quote(name: string): string {
  return name.replaceAll('\\', '\\\\').replaceAll("'", "\\'");
}
