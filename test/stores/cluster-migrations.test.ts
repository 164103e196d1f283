import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClickHouse, type ClickHouseStore } from '../../src/stores/clickhouse.js';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { clusterMigrations, LOCAL_SUFFIX, SHARDING_KEYS } from '../../src/stores/cluster-migrations.js';
import { loadSpans } from '../../bench/load-spans.js';
import { tableFilters } from '../../src/sql/engine-scope.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { tempDataDir, testConfig } from '../support/harness.js';

/**
 * The clustered ClickHouse schema (CLICKHOUSE_CLUSTER) checked as far as one embedded engine can:
 * every single-node migration has a clustered translation, every clustered statement parses, every
 * single-node table has a Replicated `_local` twin with the same columns, key and TTL and a Distributed
 * table under its own name, every view has its twin on the local tables; then the clustered schema,
 * with ON CLUSTER, Keeper paths and Distributed tables taken out, runs beside the single-node one
 * and the same spans give the same rollups. Nothing here reaches a real cluster (docs/scaling.md).
 */
const DIR = path.join(ROOT_DIR, 'clickhouse');
const CLUSTER = { cluster: 'sightline_cluster', database: 'sightline' };
const single = clickHouseMigrations(DIR);
const clustered = clickHouseMigrations(DIR, CLUSTER);

let dir: string;
let ch: ClickHouseStore;
beforeAll(async () => {
  dir = tempDataDir('cluster-migrations');
  ch = await openClickHouse(testConfig({ DATA_DIR: dir, CLICKHOUSE_URL: undefined, CLICKHOUSE_CLUSTER: undefined }));
});
afterAll(async () => {
  await ch?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The engine's own one-line rendering of a statement: it parses, or this throws. */
async function format(statement: string): Promise<string> {
  const result = await ch.client.query({
    query: 'SELECT formatQuerySingleLine({q:String}) AS f',
    query_params: { q: statement },
    format: 'JSONEachRow',
  });
  return (await result.json<{ f: string }>())[0]!.f;
}

/** The parenthesised text starting at `open` (quotes skipped). */
function parenthesised(text: string, open: number): string {
  let depth = 0;
  let quote: string | null = null;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '`') quote = c;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  throw new Error(`unbalanced: ${text}`);
}

type Created = { kind: 'table' | 'view' | 'alter' | 'other'; name: string; text: string };

/** What a formatted statement does: CREATE TABLE x / CREATE MATERIALIZED VIEW x / ALTER TABLE x. */
function describeStatement(text: string): Created {
  const table = /^CREATE TABLE (?:IF NOT EXISTS )?(\w+)/.exec(text);
  if (table) return { kind: 'table', name: table[1]!, text };
  const view = /^CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?(\w+)/.exec(text);
  if (view) return { kind: 'view', name: view[1]!, text };
  const alter = /^ALTER TABLE (\w+)/.exec(text);
  if (alter) return { kind: 'alter', name: alter[1]!, text };
  return { kind: 'other', name: '', text };
}

let singleFormatted: Created[][] = [];
let clusteredFormatted: Created[][] = [];

describe('clustered migrations', () => {
  it('cover every single-node migration, version for version', () => {
    expect(single.length).toBeGreaterThanOrEqual(4);
    expect(clustered.map((m) => [m.version, m.name])).toEqual(single.map((m) => [m.version, m.name]));
    for (const m of clustered) expect(m.statements.length, `${m.version}_${m.name}`).toBeGreaterThan(0);
  });

  it('parse, every statement, in the engine', async () => {
    singleFormatted = [];
    clusteredFormatted = [];
    for (const m of single)
      singleFormatted.push(await Promise.all(m.statements.map(async (s) => describeStatement(await format(s)))));
    for (const m of clustered)
      clusteredFormatted.push(await Promise.all(m.statements.map(async (s) => describeStatement(await format(s)))));
    expect(clusteredFormatted.flat().length).toBeGreaterThan(singleFormatted.flat().length);
  });

  it('run every DDL statement ON CLUSTER, and store rows only in Replicated engines sharded by project', () => {
    for (const { kind, name, text } of clusteredFormatted.flat()) {
      if (kind === 'other' && !/^INSERT /.test(text)) expect(text, text).toMatch(/ ON CLUSTER /);
      if (kind === 'alter') expect(text).toMatch(/^ALTER TABLE \w+ ON CLUSTER /);
      if (kind !== 'table') continue;
      expect(text).toMatch(/^CREATE TABLE IF NOT EXISTS \w+ ON CLUSTER sightline_cluster /);
      const engine = /ENGINE = (\w+)\(/.exec(text)?.[1];
      if (name.endsWith(LOCAL_SUFFIX)) {
        expect(engine, name).toMatch(/^Replicated\w*MergeTree$/);
        expect(text).toContain(`('/clickhouse/tables/{shard}/{database}/{table}', '{replica}'`);
      } else {
        const base = name;
        const key = SHARDING_KEYS[base] ?? 'sipHash64(project_id)';
        expect(text, name).toContain(
          `AS ${base}_local ENGINE = Distributed('sightline_cluster', sightline, ${base}_local, ${key})`,
        );
      }
    }
  });

  it('give every single-node table a Replicated _local twin with the same columns, key and TTL, and a Distributed table under its name', () => {
    const all = clusteredFormatted.flat();
    const tables = singleFormatted.flat().filter((s) => s.kind === 'table');
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(['spans', 'traces', 'findings', 'span_rollup_1m', 'evaluation_results']),
    );
    const definitions = new Map<string, { columns: string; tail: string }>();
    for (const t of tables) {
      const local = all.find((s) => s.kind === 'table' && s.name === `${t.name}${LOCAL_SUFFIX}`);
      const dist = all.find((s) => s.kind === 'table' && s.name === t.name);
      expect(local, `${t.name}${LOCAL_SUFFIX}`).toBeDefined();
      expect(dist, t.name).toBeDefined();
      expect(dist!.text).toContain(`ENGINE = Distributed(`);
      const copy = / AS (\w+)$/.exec(t.text);
      // CREATE TABLE a AS b: same columns as b; the clustered twin copies b_local and writes out b's engine.
      const own = copy
        ? definitions.get(copy[1]!)!
        : { columns: parenthesised(t.text, t.text.indexOf('(')), tail: tailAfterEngine(t.text) };
      expect(own, t.name).toBeDefined();
      definitions.set(t.name, own);
      if (copy) expect(local!.text).toContain(` AS ${copy[1]}${LOCAL_SUFFIX} ENGINE = `);
      else expect(parenthesised(local!.text, local!.text.indexOf('('))).toBe(own.columns);
      expect(tailAfterEngine(local!.text), t.name).toBe(own.tail);
      expect(engineOf(local!.text)).toBe(`Replicated${engineOf(copy ? findCreate(tables, copy[1]!).text : t.text)}`);
    }
  });

  it('give every materialized view a twin on the local tables, with the same SELECT', () => {
    const all = clusteredFormatted.flat();
    for (const v of singleFormatted.flat().filter((s) => s.kind === 'view')) {
      const twin = all.find((s) => s.kind === 'view' && s.name === v.name);
      expect(twin, v.name).toBeDefined();
      const target = / TO (\w+) AS /.exec(v.text)![1];
      expect(twin!.text).toContain(` ON CLUSTER sightline_cluster TO ${target}${LOCAL_SUFFIX} AS `);
      const select = (text: string) => text.slice(text.indexOf(' AS ') + 4);
      expect(select(twin!.text), v.name).toMatch(new RegExp(`FROM \\w+${LOCAL_SUFFIX}\\b`));
      expect(select(twin!.text).replace(new RegExp(`\\b(\\w+)${LOCAL_SUFFIX}\\b`, 'g'), '$1'), v.name).toBe(
        select(v.text),
      );
    }
  });

  it("apply every ALTER to the local tables, and every view's new query to its twin", () => {
    const all = clusteredFormatted.flat();
    const views = new Set(
      singleFormatted
        .flat()
        .filter((s) => s.kind === 'view')
        .map((v) => v.name),
    );
    for (const a of singleFormatted.flat().filter((s) => s.kind === 'alter')) {
      const commands = a.text.slice(`ALTER TABLE ${a.name} `.length);
      if (!views.has(a.name)) {
        expect(
          all.map((s) => s.text),
          a.text,
        ).toContain(`ALTER TABLE ${a.name}${LOCAL_SUFFIX} ON CLUSTER sightline_cluster ${commands}`);
        continue;
      }
      // The engine prints MODIFY QUERY in parentheses: `ALTER TABLE v (MODIFY QUERY SELECT …)`.
      // A view changed by several migrations has a twin for each (traces_mv: 0005, 0020).
      const twins = all.filter(
        (s) =>
          s.kind === 'alter' &&
          s.name === a.name &&
          s.text.startsWith(`ALTER TABLE ${a.name} ON CLUSTER sightline_cluster (MODIFY QUERY `),
      );
      expect(twins.length, a.text).toBeGreaterThan(0);
      const queries = twins.map((t) => t.text.slice(`ALTER TABLE ${a.name} ON CLUSTER sightline_cluster `.length));
      for (const query of queries) expect(query).toMatch(new RegExp(`FROM \\w+${LOCAL_SUFFIX}\\b`));
      expect(queries.map((q) => q.replace(new RegExp(`\\b(\\w+)${LOCAL_SUFFIX}\\b`, 'g'), '$1'))).toContain(commands);
    }
  });

  it('store the same columns and fill the same rollups as the single-node schema, run side by side on one node', async () => {
    for (const m of single) for (const s of m.statements) await ch.client.command({ query: s });
    const local = clustered
      .flatMap((m) => m.statements)
      .map(onOneNode)
      .filter((s): s is string => s !== null);
    for (const s of local) await ch.client.command({ query: s });

    const columns = async (table: string) => {
      const r = await ch.client.query({
        query:
          'SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = {t:String} ORDER BY position',
        query_params: { t: table },
        format: 'JSONEachRow',
      });
      return r.json<{ name: string; type: string }>();
    };
    const tables = singleFormatted
      .flat()
      .filter((s) => s.kind === 'table')
      .map((t) => t.name);
    for (const t of tables) expect(await columns(`${t}${LOCAL_SUFFIX}`), t).toEqual(await columns(t));

    // The same spans into both: the single-node views fill the plain tables, the clustered views the _local ones.
    await loadSpans(ch.client, {
      spans: 20_000,
      projects: ['p-a', 'p-b', 'p-c'],
      days: 3,
      nowMs: Date.parse('2026-11-01T00:00:00Z'),
    });
    await ch.client.command({ query: `INSERT INTO spans${LOCAL_SUFFIX} SELECT * FROM spans` });
    // The tables spans and their views fill (the others get rows from migrations' INSERTs, left out above).
    const filled = new Set([
      'spans',
      ...singleFormatted
        .flat()
        .filter((s) => s.kind === 'view')
        .map((v) => / TO (\w+) AS /.exec(v.text)![1]!),
    ]);
    expect(filled.size).toBeGreaterThan(5);
    for (const t of tables.filter((x) => filled.has(x))) {
      const numeric = (await columns(t))
        .filter((c) => /^(SimpleAggregateFunction\(\w+, )?(Nullable\()?(UInt|Int|Float)/.test(c.type))
        .map((c) => c.name);
      const engine = await ch.client.query({
        query: 'SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = {t:String}',
        query_params: { t },
        format: 'JSONEachRow',
      });
      // FINAL merges the rows of one key (replacing and aggregating engines); a plain MergeTree has none.
      const final = (await engine.json<{ engine: string }>())[0]!.engine === 'MergeTree' ? '' : ' FINAL';
      const summary = async (table: string) => {
        const sums = numeric.map((c) => `toString(round(sum(${c}), 6))`).join(', ');
        const r = await ch.client.query({
          query: `SELECT count() AS n${sums ? `, [${sums}] AS sums` : ''} FROM ${table}${final}`,
          format: 'JSONEachRow',
        });
        return r.json();
      };
      expect(await summary(`${t}${LOCAL_SUFFIX}`), t).toEqual(await summary(t));
    }
    const traces = await ch.client.query({
      query: 'SELECT toString(sum(span_count)) AS n FROM traces_local FINAL',
      format: 'JSONEachRow',
    });
    expect(await traces.json()).toEqual([{ n: '20000' }]);
  });
});

describe('public SQL on a cluster', () => {
  it("fences the contract's local tables with the project, not shut: shards read them under the same settings", async () => {
    // The side-by-side schema above left spans_local, traces_local, … in this engine.
    const project = '0b8a4c57-6f0e-4a55-9a8f-2b0f7f5e2c11';
    const own = `project_id = ''${project}''`;
    const clusteredFilters = await tableFilters({ ...ch, cluster: 'sightline_cluster' }, project);
    for (const t of ['spans', 'traces', 'findings', 'evaluation_results']) {
      expect(clusteredFilters).toContain(`'${t}_local': '${own}'`);
      expect(clusteredFilters).toContain(`'${t}': '${own}'`);
    }
    expect(clusteredFilters).toContain(`'span_rollup_1m_local': '0'`);
    // One node: a table named like a local twin stays shut, as before.
    expect(await tableFilters(ch, project)).toContain(`'spans_local': '0'`);
  });
});

describe('CLICKHOUSE_CLUSTER', () => {
  it('names a cluster of a ClickHouse server: refused with the embedded engine or with a name it cannot quote', () => {
    expect(loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: '{cluster}' }).clickhouse.cluster).toBe(
      '{cluster}',
    );
    expect(
      loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: ' ' }).clickhouse.cluster,
    ).toBeUndefined();
    expect(loadConfig({}).clickhouse.cluster).toBeUndefined();
    expect(() => loadConfig({ CLICKHOUSE_CLUSTER: 'sightline' })).toThrow(ConfigError);
    expect(() => loadConfig({ CLICKHOUSE_URL: 'http://ch:8123', CLICKHOUSE_CLUSTER: "a' b" })).toThrow(
      /CLICKHOUSE_CLUSTER/,
    );
  });
});

describe('a future migration', () => {
  const translate = (statements: string[]) =>
    clusterMigrations([...single, { version: 9999, name: 'future', statements }], CLUSTER).at(-1)!.statements;

  it('without a clustered rule stops the translation and names the override to add', () => {
    expect(() =>
      translate([
        'INSERT INTO traces SELECT * FROM traces LIMIT 0',
        'CREATE DICTIONARY d (k String) PRIMARY KEY k SOURCE(NULL()) LAYOUT(FLAT()) LIFETIME(0)',
      ]),
    ).toThrow(/9999 statement 1 \(future\) has no clustered translation: .*OVERRIDES\['9999#1'\]/);
    expect(() => translate(['CREATE TABLE t (a String) ENGINE = Memory'])).toThrow(
      /engine Memory has no clustered rule/,
    );
    expect(() => translate(['CREATE TABLE t (a String) ENGINE = MergeTree ORDER BY a'])).toThrow(
      /no project_id column to shard on; add SHARDING_KEYS\['t'\]/,
    );
    expect(() => translate(['ALTER TABLE spans MODIFY QUERY SELECT 1'])).toThrow(/has no clustered rule/);
  });

  it('that adds a column changes the local and the Distributed table; an index only the local one', () => {
    expect(
      translate([
        'ALTER TABLE spans ADD COLUMN IF NOT EXISTS x String, ADD INDEX ix x TYPE bloom_filter GRANULARITY 1',
      ]),
    ).toEqual([
      "ALTER TABLE spans_local ON CLUSTER 'sightline_cluster' ADD COLUMN IF NOT EXISTS x String, ADD INDEX ix x TYPE bloom_filter GRANULARITY 1",
      "ALTER TABLE spans ON CLUSTER 'sightline_cluster' ADD COLUMN IF NOT EXISTS x String",
    ]);
  });

  it('with an ingest-only Null table and a view reading it gets both on every node', () => {
    const out = translate([
      'CREATE TABLE IF NOT EXISTS spans_in (project_id String, x UInt8) ENGINE = Null',
      'CREATE MATERIALIZED VIEW IF NOT EXISTS spans_in_mv TO spans AS SELECT * FROM spans_in AS i JOIN numbers(1) AS n ON 1',
      'DROP TABLE IF EXISTS spans_in',
    ]);
    expect(out[0]).toMatch(
      /^CREATE TABLE IF NOT EXISTS spans_in_local ON CLUSTER 'sightline_cluster'\n\(project_id String, x UInt8\)\nENGINE = Null/,
    );
    expect(out[1]).toContain(
      "ENGINE = Distributed('sightline_cluster', sightline, spans_in_local, sipHash64(project_id))",
    );
    expect(out[2]).toBe(
      "CREATE MATERIALIZED VIEW IF NOT EXISTS spans_in_mv ON CLUSTER 'sightline_cluster' TO spans_local AS\nSELECT * FROM spans_in_local AS i JOIN numbers(1) AS n ON 1",
    );
    expect(out.slice(3)).toEqual([
      "DROP TABLE IF EXISTS spans_in ON CLUSTER 'sightline_cluster' SYNC",
      "DROP TABLE IF EXISTS spans_in_local ON CLUSTER 'sightline_cluster' SYNC",
    ]);
  });
});

function tailAfterEngine(text: string): string {
  const at = text.indexOf(' ENGINE = ');
  const open = text.indexOf('(', at);
  const name = /ENGINE = (\w+)/.exec(text.slice(at))![1]!;
  // Without arguments the engine name is followed directly by the next clause.
  const afterName = at + ' ENGINE = '.length + name.length;
  const end = open === afterName ? open + parenthesised(text, open).length : afterName;
  return text.slice(end).trim();
}

function engineOf(text: string): string {
  return /ENGINE = (\w+)/.exec(text)![1]!;
}

function findCreate(tables: Created[], name: string): Created {
  const t = tables.find((x) => x.name === name)!;
  const copy = / AS (\w+)$/.exec(t.text);
  return copy ? findCreate(tables, copy[1]!) : t;
}

/**
 * A clustered statement as one node without Keeper or remote_servers can run it, beside the
 * single-node schema: no ON CLUSTER, plain engines instead of Replicated (same arguments after the
 * Keeper path), views renamed so they don't meet the single-node ones; the Distributed tables, and
 * statements that address them (INSERT backfills, plain views, their column changes), are left out:
 * their names are the single-node tables'.
 */
function onOneNode(statement: string): string | null {
  if (/ENGINE = Distributed\(/.test(statement)) return null;
  if (/^(INSERT|CREATE\s+(OR\s+REPLACE\s+)?VIEW)\b/i.test(statement)) return null;
  const alter = /^ALTER TABLE (\w+) /.exec(statement);
  const modifyQuery = / MODIFY QUERY\n/.test(statement);
  if (alter && !modifyQuery && !alter[1]!.endsWith(LOCAL_SUFFIX)) return null;
  const drop = /^DROP TABLE (?:IF EXISTS )?(\w+) /.exec(statement);
  if (drop && !drop[1]!.endsWith(LOCAL_SUFFIX)) return null;
  return statement
    .replace(/ ON CLUSTER '[^']*'/, '')
    .replace(
      /Replicated(\w*MergeTree)\('\/clickhouse\/tables\/\{shard\}\/\{database\}\/\{table\}', '\{replica\}'(, )?/,
      '$1(',
    )
    .replace(/^(CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?)(\w+)/, '$1$2_on_cluster')
    .replace(/^(ALTER TABLE )(\w+)( MODIFY QUERY\n)/, '$1$2_on_cluster$3')
    .replace(/^(DROP VIEW (?:IF EXISTS )?)(\w+)/, '$1$2_on_cluster');
}
