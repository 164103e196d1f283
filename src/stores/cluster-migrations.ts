/**
 * The clustered form of the ClickHouse migrations (CLICKHOUSE_CLUSTER; docs/scaling.md), derived
 * from the single-node files in `clickhouse/` statement by statement, so a new migration gets its
 * clustered counterpart without anyone writing it (test/stores/cluster-migrations.test.ts fails
 * when a statement has no translation, and names the override to add).
 *
 * The shape, for every table `t` of the single-node schema:
 *   t_local  Replicated*MergeTree (same columns, key, TTL, settings) on every node, ON CLUSTER;
 *   t        Distributed over t_local, sharded by sipHash64(project_id).
 * So every query in src/ keeps its table names and reads and writes the Distributed tables.
 * Materialized views are created on every node from t_local to u_local: each shard aggregates
 * its own spans, and an insert into `spans` (Distributed) fires them on the shard that stores the rows.
 *
 * Invariant that makes the single-node queries right on a cluster: every table shards on the same
 * key, the project. All rows of one project (and so of one trace, one rollup key, one finding) live
 * on one shard, so FINAL, GROUP BY trace, argMin roots and the rollup -Merge reads are exact per shard,
 * and subqueries/JOINs between tables may run shard-locally (`distributed_product_mode = 'local'`,
 * set by src/stores/clickhouse.ts).
 *
 * Rules (anything else throws, and needs an entry in OVERRIDES):
 * - CREATE TABLE t (...) ENGINE = XMergeTree(args) ...  → t_local ReplicatedXMergeTree + t Distributed
 *   (ENGINE = Null: a Null t_local, for ingest-only tables that feed views).
 * - CREATE TABLE a AS b                               → a_local with b's engine clause, written out
 *   (copying b_local's stored engine would copy its Keeper path) + a Distributed.
 * - CREATE MATERIALIZED VIEW v TO t AS SELECT ... FROM s → ON CLUSTER, TO t_local, FROM/JOIN s_local.
 * - CREATE VIEW v AS ...                              → ON CLUSTER; reads the Distributed tables.
 * - ALTER TABLE t <commands>                          → ON CLUSTER on t_local; column changes also on t.
 * - ALTER TABLE v MODIFY QUERY SELECT ... FROM s       → ON CLUSTER, FROM/JOIN s_local (v a view above).
 * - DROP TABLE / VIEW                                 → ON CLUSTER, both tables, SYNC.
 * - INSERT INTO t ... (backfills)                     → unchanged: once, through the Distributed tables.
 */

export type ClusterOptions = {
  /** Cluster name from <remote_servers>, or a macro such as `{cluster}`. */
  cluster: string;
  /** The database every table lives in (Distributed needs it spelled out). */
  database: string;
};

/** A migration split into its statements (src/stores/migrate.ts `splitStatements`). */
export type MigrationStatements = { version: number; name: string; statements: string[] };

/** What the translation knows about a table created by an earlier statement. */
type TableInfo = {
  /** `ReplacingMergeTree(ingested_at)` etc.: the single-node engine and its arguments. */
  engine: string;
  engineArgs: string;
  /** PARTITION BY / ORDER BY / TTL / SETTINGS after the engine, verbatim. */
  tail: string;
  shardingKey: string;
};

type Translation = { statements: string[] };
/** Tables and materialized views (by name → target table) created by earlier statements. */
type Context = { options: ClusterOptions; tables: Map<string, TableInfo>; views: Map<string, string> };

/**
 * Statements the rules can't translate, by `NNNN#i` (migration version, statement index from 0):
 * the clustered statements to run instead. Empty today; add an entry when the test names one.
 */
export const OVERRIDES: Record<string, (ctx: { on: string; options: ClusterOptions }) => string[]> = {};

/**
 * The sharding key of each table: the project, so one project's reads stay on one shard and every
 * table is co-located with the others (see the invariant above). A table without `project_id`
 * needs an entry here (and a reason why its rows need not meet the others').
 */
export const SHARDING_KEYS: Record<string, string> = {
  // 0006's one-row marker of when its view started (read as min(created_at) by the backfill through
  // the Distributed table, so whichever shard holds it, every reader sees it).
  span_rollup_meta_1h_since: '0',
};
const DEFAULT_SHARDING_KEY = 'sipHash64(project_id)';

/** The Keeper path of every replicated local table: one per shard, database and table. */
export const REPLICA_PATH = "'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'";

export const LOCAL_SUFFIX = '_local';

const CLUSTER_NAME = /^[A-Za-z0-9_.{}-]{1,128}$/;
const IDENT = '([A-Za-z_][A-Za-z0-9_]*)';

/** Translates every migration, in order (later statements refer to tables created by earlier ones). */
export function clusterMigrations(migrations: MigrationStatements[], options: ClusterOptions): MigrationStatements[] {
  if (!CLUSTER_NAME.test(options.cluster)) throw new Error(`invalid cluster name ${JSON.stringify(options.cluster)}`);
  const ctx: Context = { options, tables: new Map(), views: new Map() };
  return migrations.map((m) => ({
    version: m.version,
    name: m.name,
    statements: m.statements.flatMap((statement, i) => {
      const key = `${String(m.version).padStart(4, '0')}#${i}`;
      const override = OVERRIDES[key];
      if (override) return override({ on: onCluster(options), options });
      try {
        return translate(statement, ctx).statements;
      } catch (error) {
        throw new Error(
          `clickhouse migration ${key.replace('#', ' statement ')} (${m.name}) has no clustered translation: ${(error as Error).message}; ` +
            `add OVERRIDES['${key}'] in src/stores/cluster-migrations.ts`,
        );
      }
    }),
  }));
}

/** The statement that creates the migration ledger on every node of the cluster (replicated to all). */
export function clusterLedgerStatement(options: ClusterOptions): string {
  // No {shard} in the path: one ledger replicated to every node, so any node tells what is applied.
  // The replica name holds the shard too: replica macros often repeat across shards.
  return `CREATE TABLE IF NOT EXISTS schema_migrations ${onCluster(options)}
    (version UInt32, name String, applied_at DateTime DEFAULT now())
    ENGINE = ReplicatedMergeTree('/clickhouse/tables/all/{database}/schema_migrations', '{shard}-{replica}') ORDER BY version`;
}

export function onCluster(options: ClusterOptions): string {
  return `ON CLUSTER '${options.cluster}'`;
}

function translate(statement: string, ctx: Context): Translation {
  const s = statement.trim();
  if (/^CREATE\s+TABLE\b/i.test(s)) return createTable(s, ctx);
  if (/^CREATE\s+MATERIALIZED\s+VIEW\b/i.test(s)) return createMaterializedView(s, ctx);
  if (/^CREATE\s+(OR\s+REPLACE\s+)?VIEW\b/i.test(s)) return createView(s, ctx);
  if (/^ALTER\s+TABLE\b/i.test(s)) return alterTable(s, ctx);
  if (/^DROP\s+(TABLE|VIEW)\b/i.test(s)) return drop(s, ctx);
  if (/^INSERT\s+INTO\b/i.test(s)) return { statements: [s] };
  throw new Error(`unsupported statement "${s.slice(0, 40)}…"`);
}

function createTable(s: string, ctx: Context): Translation {
  const head = new RegExp(`^CREATE\\s+TABLE\\s+(IF\\s+NOT\\s+EXISTS\\s+)?${IDENT}\\s*`, 'i').exec(s);
  if (!head) throw new Error('CREATE TABLE without a plain table name');
  const ifNotExists = head[1] ? 'IF NOT EXISTS ' : '';
  const name = head[2]!;
  const rest = s.slice(head[0].length);
  const on = onCluster(ctx.options);

  const copy = new RegExp(`^AS\\s+${IDENT}\\s*$`, 'i').exec(rest);
  if (copy) {
    const source = ctx.tables.get(copy[1]!);
    if (!source)
      throw new Error(`CREATE TABLE ${name} AS ${copy[1]}: ${copy[1]} is not a table of an earlier migration`);
    ctx.tables.set(name, source);
    return {
      statements: [
        `CREATE TABLE ${ifNotExists}${name}${LOCAL_SUFFIX} ${on} AS ${copy[1]}${LOCAL_SUFFIX}\nENGINE = ${replicated(source)}\n${source.tail}`,
        distributed(name, ifNotExists, source.shardingKey, ctx),
      ],
    };
  }
  if (!rest.startsWith('(')) throw new Error(`CREATE TABLE ${name}: expected a column list or AS <table>`);
  const columnsEnd = matchingParen(rest, 0);
  const columns = rest.slice(0, columnsEnd + 1);
  const engineMatch = new RegExp(`^\\s*ENGINE\\s*=\\s*${IDENT}`, 'i').exec(rest.slice(columnsEnd + 1));
  if (!engineMatch) throw new Error(`CREATE TABLE ${name}: no ENGINE clause`);
  const engine = engineMatch[1]!;
  let after = rest.slice(columnsEnd + 1 + engineMatch[0].length);
  let engineArgs = '';
  if (after.startsWith('(')) {
    const end = matchingParen(after, 0);
    engineArgs = after.slice(1, end).trim();
    after = after.slice(end + 1);
  }
  const tail = after.trim();
  if (!/MergeTree$/.test(engine) && engine !== 'Null')
    throw new Error(`CREATE TABLE ${name}: engine ${engine} has no clustered rule`);
  if (/^Replicated/.test(engine)) throw new Error(`CREATE TABLE ${name}: single-node migrations use plain engines`);
  const shardingKey = SHARDING_KEYS[name] ?? DEFAULT_SHARDING_KEY;
  if (!SHARDING_KEYS[name] && !/(^|[(,\s])project_id\s/.test(columns))
    throw new Error(`CREATE TABLE ${name}: no project_id column to shard on; add SHARDING_KEYS['${name}']`);
  const info: TableInfo = { engine, engineArgs, tail, shardingKey };
  ctx.tables.set(name, info);
  return {
    statements: [
      `CREATE TABLE ${ifNotExists}${name}${LOCAL_SUFFIX} ${on}\n${columns}\nENGINE = ${replicated(info)}\n${tail}`,
      distributed(name, ifNotExists, shardingKey, ctx),
    ],
  };
}

function replicated(info: TableInfo): string {
  if (info.engine === 'Null') return 'Null';
  return `Replicated${info.engine}(${REPLICA_PATH}${info.engineArgs ? `, ${info.engineArgs}` : ''})`;
}

function distributed(name: string, ifNotExists: string, shardingKey: string, ctx: Context): string {
  const { cluster, database } = ctx.options;
  return `CREATE TABLE ${ifNotExists}${name} ${onCluster(ctx.options)} AS ${name}${LOCAL_SUFFIX}\nENGINE = Distributed('${cluster}', ${database}, ${name}${LOCAL_SUFFIX}, ${shardingKey})`;
}

function createMaterializedView(s: string, ctx: Context): Translation {
  const m = new RegExp(
    `^CREATE\\s+MATERIALIZED\\s+VIEW\\s+(IF\\s+NOT\\s+EXISTS\\s+)?${IDENT}\\s+TO\\s+${IDENT}\\s+AS\\s+`,
    'i',
  ).exec(s);
  if (!m) throw new Error('materialized views need TO <table> (an implicit inner table has no clustered rule)');
  const [, ifNotExists = '', view, target] = m;
  if (!ctx.tables.has(target!))
    throw new Error(`materialized view ${view}: target ${target} is not a table of an earlier migration`);
  const select = localTableReferences(s.slice(m[0].length), ctx);
  ctx.views.set(view!, target!);
  return {
    statements: [
      `CREATE MATERIALIZED VIEW ${ifNotExists ? 'IF NOT EXISTS ' : ''}${view} ${onCluster(ctx.options)} TO ${target}${LOCAL_SUFFIX} AS\n${select}`,
    ],
  };
}

/** FROM t / JOIN t of a known table → t_local: a view fires on the node whose local table took the insert. */
function localTableReferences(select: string, ctx: Context): string {
  return select.replace(
    new RegExp(`\\b(FROM|JOIN)(\\s+)${IDENT}\\b(?!\\s*\\()`, 'gi'),
    (whole, keyword: string, space: string, table: string) =>
      ctx.tables.has(table) ? `${keyword}${space}${table}${LOCAL_SUFFIX}` : whole,
  );
}

function createView(s: string, ctx: Context): Translation {
  const m = new RegExp(
    `^(CREATE\\s+(?:OR\\s+REPLACE\\s+)?VIEW\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?${IDENT})\\s+AS\\s+`,
    'i',
  ).exec(s);
  if (!m) throw new Error('CREATE VIEW without a plain name');
  // A plain view reads the Distributed tables by their usual names: it needs no rewrite.
  return { statements: [`${m[1]} ${onCluster(ctx.options)} AS\n${s.slice(m[0].length)}`] };
}

/** ALTER commands that change a table's columns: the Distributed table must follow. */
const COLUMN_COMMAND = /^(ADD|DROP|MODIFY|RENAME|COMMENT)\s+COLUMN\b/i;
/** ALTER commands that touch only the stored data or its indexes: the local tables alone. */
const LOCAL_COMMAND =
  /^(ADD|DROP|MATERIALIZE|CLEAR)\s+(INDEX|PROJECTION|STATISTICS)\b|^MODIFY\s+(TTL|SETTING|ORDER\s+BY|COMMENT)\b|^REMOVE\s+TTL\b|^MATERIALIZE\s+(TTL|COLUMN)\b|^(DELETE|UPDATE)\b|^(ADD|DROP)\s+CONSTRAINT\b|^CLEAR\s+COLUMN\b/i;

function alterTable(s: string, ctx: Context): Translation {
  const m = new RegExp(`^ALTER\\s+TABLE\\s+${IDENT}\\s+`, 'i').exec(s);
  if (!m) throw new Error('ALTER TABLE without a plain table name');
  const table = m[1]!;
  const body = s.slice(m[0].length);
  const modifyQuery = /^MODIFY\s+QUERY\s+/i.exec(body);
  if (ctx.views.has(table) && modifyQuery) {
    return {
      statements: [
        `ALTER TABLE ${table} ${onCluster(ctx.options)} MODIFY QUERY\n${localTableReferences(body.slice(modifyQuery[0].length), ctx)}`,
      ],
    };
  }
  if (!ctx.tables.has(table))
    throw new Error(
      `ALTER TABLE ${table}: not a table of an earlier migration (a view's MODIFY QUERY needs an override)`,
    );
  const commands = splitTopLevel(body, ',');
  const columnCommands: string[] = [];
  for (const command of commands) {
    if (COLUMN_COMMAND.test(command)) columnCommands.push(command);
    else if (!LOCAL_COMMAND.test(command))
      throw new Error(`ALTER TABLE ${table}: command "${command.slice(0, 30)}…" has no clustered rule`);
  }
  const on = onCluster(ctx.options);
  const statements = [`ALTER TABLE ${table}${LOCAL_SUFFIX} ${on} ${commands.join(', ')}`];
  if (columnCommands.length > 0) statements.push(`ALTER TABLE ${table} ${on} ${columnCommands.join(', ')}`);
  return { statements };
}

function drop(s: string, ctx: Context): Translation {
  const m = new RegExp(`^DROP\\s+(TABLE|VIEW)\\s+(IF\\s+EXISTS\\s+)?${IDENT}\\s*(SYNC)?$`, 'i').exec(s);
  if (!m) throw new Error('DROP without a plain name');
  const [, kind, ifExists = '', name] = m;
  const on = onCluster(ctx.options);
  const exists = ifExists ? 'IF EXISTS ' : '';
  ctx.views.delete(name!);
  if (kind!.toUpperCase() === 'TABLE' && ctx.tables.has(name!)) {
    ctx.tables.delete(name!);
    return {
      statements: [`DROP TABLE ${exists}${name} ${on} SYNC`, `DROP TABLE ${exists}${name}${LOCAL_SUFFIX} ${on} SYNC`],
    };
  }
  return { statements: [`DROP ${kind!.toUpperCase()} ${exists}${name} ${on} SYNC`] };
}

/** Index of the parenthesis closing the one at `open`, skipping quoted text. */
function matchingParen(text: string, open: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) return i;
  }
  throw new Error('unbalanced parentheses');
}

/** Splits at `sep` outside parentheses and quotes. */
function splitTopLevel(text: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = null;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === sep && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}
