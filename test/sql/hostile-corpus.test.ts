import { describe, expect, it } from 'vitest';
import { CONTRACT_TABLES } from '../../src/sql/contract.js';
import { useHarness } from '../support/harness.js';
import {
  corpus,
  integrity,
  MA,
  MB,
  OUTFILE,
  OUTFILE_REL,
  useWorld,
  type Answer,
  type Case,
} from './hostile-fixture.js';

/**
 * Hostile public SQL, part 1 (docs/sql.md, docs/design.md decision 5): positive controls, system and
 * information_schema tables, table functions, physical tables outside the contract, statements other
 * than one SELECT, SETTINGS / FORMAT / INTO OUTFILE. Part 2 is hostile-corpus-2.test.ts.
 * Verdicts: hostile-fixture.ts (400 `{detail}` leaking nothing, or 200 with A's rows only; never 500).
 */

const h = useHarness();
const w = useWorld(h);

const names = (table: string) => CONTRACT_TABLES.get(table)!.columns.map((c) => c.name);
const col = (b: Answer, name: string) => b.rows.map((r) => r[b.columns.findIndex((c) => c.name === name)]);
const onlyA = (name: string) => (b: Answer) => {
  for (const v of col(b, name)) expect(String(v).startsWith(MA), `${name} ${String(v)} is not A's`).toBe(true);
};
const counted = (n: (x: ReturnType<typeof w>) => number) => (b: Answer, x: ReturnType<typeof w>) =>
  expect(Number(b.rows[0]![0])).toBe(n(x));
const empty = (b: Answer) => expect(b.rows).toEqual([]);

describe('positive controls', () => {
  corpus(h, w, [
    { q: 'SELECT count() FROM traces', ok: true, check: counted((x) => x.aTraces) },
    { q: 'SELECT count() FROM spans', ok: true, check: counted((x) => x.aSpans) },
    { q: 'SELECT count() FROM findings', ok: true, check: counted((x) => x.aFindings) },
    {
      q: 'SELECT * FROM traces',
      ok: true,
      check: (b, x) => {
        expect(b.columns.map((c) => c.name)).toEqual(names('traces'));
        expect(b.row_count).toBe(x.aTraces);
        onlyA('trace_id')(b);
        onlyA('user_id')(b);
      },
    },
    {
      q: 'SELECT * FROM spans ORDER BY start_time LIMIT 50',
      ok: true,
      check: (b) => {
        expect(b.columns.map((c) => c.name)).toEqual(names('spans'));
        onlyA('span_id')(b);
      },
    },
    {
      q: 'SELECT * FROM findings',
      ok: true,
      check: (b) => {
        expect(b.columns.map((c) => c.name)).toEqual(names('findings'));
        onlyA('summary')(b);
      },
    },
    { q: `SELECT trace_id FROM spans WHERE trace_id = '${MB}-t1'`, ok: true, check: empty },
    {
      q: `SELECT count() FROM traces WHERE user_id LIKE 'Bmk%' OR has(model_names, '${MB}-model')`,
      ok: true,
      check: counted(() => 0),
    },
  ]);
});

const SYSTEM_TABLES = [
  'system.tables',
  'system.one',
  'system.users',
  'system.databases',
  'system.settings',
  'system.processes',
  'system.query_log',
  'system.parts',
  'system.disks',
  'system.build_options',
  'system.functions',
  'system.columns',
  'system.numbers',
  'system.macros',
  'system.clusters',
  'system.server_settings',
  'system.dictionaries',
  'system.grants',
  'system.errors',
  'INFORMATION_SCHEMA.TABLES',
  'information_schema.tables',
  'information_schema.columns',
  'INFORMATION_SCHEMA.SCHEMATA',
  'pg_catalog.pg_tables',
  'pg_tables',
  'information_schema.tables AS t',
];

describe('system and information_schema tables', () => {
  corpus(h, w, [
    ...SYSTEM_TABLES.map((t) => ({ q: `SELECT * FROM ${t}` })),
    { q: 'SELECT name FROM system.tables WHERE 1 = 1' },
    { q: 'SELECT t.trace_id, s.name FROM traces AS t JOIN system.tables AS s ON 1 = 1' },
    { q: 'SELECT t.trace_id FROM traces AS t LEFT JOIN system.one AS o ON o.dummy = 0' },
    { q: 'SELECT trace_id FROM traces WHERE trace_id IN (SELECT name FROM system.tables)' },
    { q: 'SELECT trace_id, (SELECT name FROM system.users LIMIT 1) AS u FROM traces' },
    { q: 'SELECT trace_id FROM traces UNION ALL SELECT name FROM system.tables' },
    { q: 'WITH x AS (SELECT name FROM system.tables) SELECT * FROM x' },
    { q: 'SELECT * FROM (SELECT * FROM (SELECT name FROM INFORMATION_SCHEMA.TABLES) AS a) AS b' },
    { q: 'SELECT trace_id FROM traces WHERE EXISTS (SELECT 1 FROM system.one)' },
    { q: 'SELECT count() FROM traces, system.one' },
    { q: 'SELECT * FROM system.tables AS traces' },
    { q: 'SELECT * FROM traces AS system, system.tables' },
  ]);
});

/** Every table function, with arguments that would do harm if run. */
const TABLE_FUNCTIONS = [
  "file('/etc/passwd', 'LineAsString')",
  "url('http://127.0.0.1:9/x', 'CSV', 'a String')",
  "s3('http://127.0.0.1:9/b/k.csv', 'CSV', 'a String')",
  "s3Cluster('default', 'http://127.0.0.1:9/b/k.csv', 'CSV', 'a String')",
  "remote('127.0.0.1', 'default', 'spans')",
  "remoteSecure('127.0.0.1', 'default', 'spans')",
  "cluster('default', 'default', 'spans')",
  "clusterAllReplicas('default', 'default', 'spans')",
  "input('a String')",
  "executable('cat', 'TabSeparated', 'a String')",
  "mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')",
  "postgresql('127.0.0.1:5432', 'test', 'projects', 'postgres', 'postgres')",
  "jdbc('jdbc:mysql://127.0.0.1/db', 't')",
  "odbc('DSN=x', 't')",
  "hdfs('hdfs://127.0.0.1:9000/x', 'CSV', 'a String')",
  'numbers(10)',
  'numbers_mt(10)',
  'zeros(10)',
  'zeros_mt(10)',
  "generateRandom('a String', 1, 10)",
  "merge('default', '.*')",
  "merge('.*')",
  "loop('default', 'spans')",
  'view(SELECT * FROM default.spans)',
  "values('a String', 'x')",
  'format(JSONEachRow, \'{"a": 1}\')',
  "azureBlobStorage('DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k', 'c', 'b')",
  "iceberg('http://127.0.0.1:9/x')",
  "deltaLake('http://127.0.0.1:9/x')",
  "hudi('http://127.0.0.1:9/x')",
  "sqlite('/etc/x.db', 't')",
  "mongodb('127.0.0.1:27017', 'db', 'c', 'u', 'p', 'a String')",
  "redis('127.0.0.1:6379', 'k', 'k String, v String')",
  "null('a String')",
  "dictionary('d')",
  'generate_series(1, 10)',
  "mergeTreeIndex('default', 'spans')",
  "fileCluster('default', '/etc/passwd', 'LineAsString')",
  "urlCluster('default', 'http://127.0.0.1:9/x', 'CSV', 'a String')",
  "gcs('http://127.0.0.1:9/b/k.csv', 'CSV', 'a String')",
  "fuzzJSON('{}', 1)",
];

describe('table functions in FROM, JOIN, subqueries and CTEs', () => {
  const cases: Case[] = [];
  for (const f of TABLE_FUNCTIONS) {
    cases.push({ q: `SELECT * FROM ${f}` });
    cases.push({ q: `SELECT t.trace_id FROM traces AS t JOIN ${f} AS x ON 1 = 1` });
    cases.push({ q: `SELECT trace_id FROM traces WHERE trace_id IN (SELECT * FROM ${f})` });
    cases.push({ q: `WITH x AS (SELECT * FROM ${f}) SELECT * FROM x` });
  }
  cases.push({ q: 'SELECT * FROM (SELECT * FROM numbers(10)) AS n, traces' });
  cases.push({ q: "SELECT * FROM traces AS t, LATERAL file('/etc/passwd', 'LineAsString') AS f" });
  corpus(h, w, cases);
});

describe('dictionaries', () => {
  corpus(h, w, [
    { q: "SELECT dictGet('d', 'v', toUInt64(1))" },
    { q: "SELECT dictGetString('d', 'v', toUInt64(1)) FROM traces" },
    { q: "SELECT dictGetOrDefault('d', 'v', toUInt64(1), 'x')" },
    { q: "SELECT dictHas('d', toUInt64(1))" },
    { q: "SELECT joinGet('default.spans', 'trace_id', 'x')" },
    { q: 'SELECT * FROM system.dictionaries' },
  ]);
});

describe('physical tables outside the contract, and spellings of contract names', () => {
  corpus(h, w, [
    { q: 'SELECT * FROM default.spans' },
    { q: 'SELECT * FROM default.traces' },
    { q: 'SELECT * FROM default.findings' },
    { q: 'SELECT * FROM sightline.traces' },
    { q: 'SELECT * FROM sightline.spans' },
    { q: 'SELECT * FROM schema_migrations' },
    { q: 'SELECT * FROM traces_mv' },
    { q: 'SELECT * FROM default.traces_mv' },
    { q: 'SELECT * FROM public.traces' },
    { q: 'SELECT * FROM _local.spans' },
    { q: 'SELECT * FROM "default"."spans"' },
    { q: 'SELECT * FROM `default`.`spans`' },
    { q: 'SELECT * FROM "default".spans' },
    { q: 'SELECT * FROM "sightline"."traces"' },
    { q: 'SELECT trace_id FROM "traces"', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT trace_id FROM `traces`', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT trace_id FROM TRACES', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT trace_id FROM Traces', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT trace_id FROM "Traces"', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT trace_id FROM "TRACES"', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT span_id FROM SPANS', ok: true, check: onlyA('span_id') },
    { q: 'SELECT count() FROM spans AS s JOIN default.spans AS p ON s.span_id = p.span_id' },
    { q: 'SELECT trace_id FROM traces WHERE trace_id IN (SELECT trace_id FROM default.spans)' },
    { q: 'SELECT (SELECT count() FROM default.spans) AS n' },
    { q: 'SELECT trace_id FROM traces UNION ALL SELECT trace_id FROM default.spans' },
    { q: 'SELECT project_id FROM spans' },
    { q: "SELECT * FROM spans WHERE project_id != ''" },
    { q: 'SELECT p_trace_id FROM spans' },
    { q: 'SELECT p_root FROM traces' },
    { q: 'SELECT root, metadata_pairs FROM traces' },
    { q: 'SELECT ingested_at, ttl_days, trace_start_hour FROM spans' },
    { q: 'SELECT _part, _partition_id, _table, _database FROM spans' },
    { q: 'SELECT _database, _table' },
    { q: 'SELECT trace_id FROM traces AS __sl_t_0' },
    { q: 'SELECT trace_id FROM __sl_t_0' },
  ]);
});

describe('statements other than one SELECT', () => {
  corpus(h, w, [
    { q: 'SELECT 1; DROP TABLE spans' },
    { q: 'SELECT 1; SELECT 2' },
    { q: ';SELECT 1' },
    { q: 'SELECT 1;;' },
    { q: 'SELECT count() FROM traces;', ok: true, check: counted((x) => x.aTraces) },
    { q: 'SELECT 1 ; -- trailing\nDROP TABLE spans' },
    { q: 'CREATE TABLE pwn (a String) ENGINE = Memory' },
    { q: 'CREATE TABLE pwn ENGINE = Memory AS SELECT * FROM spans' },
    { q: 'CREATE VIEW v AS SELECT * FROM default.spans' },
    {
      q: "CREATE DICTIONARY d (k UInt64, v String) PRIMARY KEY k SOURCE(CLICKHOUSE(TABLE 'spans')) LAYOUT(FLAT()) LIFETIME(0)",
    },
    { q: 'CREATE FUNCTION f AS (x) -> x' },
    { q: "CREATE USER eve IDENTIFIED BY 'x'" },
    { q: 'DROP TABLE spans' },
    { q: 'DROP TABLE IF EXISTS traces SYNC' },
    { q: 'DROP DATABASE default' },
    { q: 'ALTER TABLE spans DELETE WHERE 1 = 1' },
    { q: "ALTER TABLE spans UPDATE name = 'x' WHERE 1 = 1" },
    { q: 'ALTER TABLE spans ADD COLUMN x String' },
    { q: "INSERT INTO spans (trace_id) VALUES ('x')" },
    { q: 'INSERT INTO spans SELECT * FROM spans' },
    { q: "INSERT INTO FUNCTION file('/etc/pwn.csv', 'CSV') SELECT 1" },
    { q: 'DELETE FROM spans WHERE 1 = 1' },
    { q: "UPDATE spans SET name = 'x' WHERE 1 = 1" },
    { q: 'TRUNCATE TABLE spans' },
    { q: 'TRUNCATE spans' },
    { q: 'RENAME TABLE spans TO spans_old' },
    { q: 'ATTACH TABLE spans' },
    { q: 'DETACH TABLE spans' },
    { q: 'EXCHANGE TABLES spans AND traces' },
    { q: 'SYSTEM DROP DNS CACHE' },
    { q: 'SYSTEM STOP MERGES spans' },
    { q: 'SYSTEM SHUTDOWN' },
    { q: 'KILL QUERY WHERE 1 = 1' },
    { q: 'SET readonly = 0' },
    { q: 'SET max_execution_time = 0' },
    { q: 'OPTIMIZE TABLE spans FINAL' },
    { q: 'SHOW TABLES' },
    { q: 'SHOW DATABASES' },
    { q: 'SHOW CREATE TABLE spans' },
    { q: 'SHOW GRANTS' },
    { q: 'SHOW PROCESSLIST' },
    { q: 'DESCRIBE spans' },
    { q: 'DESC TABLE traces' },
    { q: 'EXPLAIN SELECT * FROM spans' },
    { q: 'EXPLAIN SYNTAX SELECT * FROM traces' },
    { q: 'USE system' },
    { q: 'GRANT ALL ON *.* TO default' },
    { q: 'REVOKE ALL ON *.* FROM default' },
    { q: 'EXISTS TABLE spans' },
    { q: 'CHECK TABLE spans' },
    { q: "BACKUP TABLE spans TO File('/etc/b')" },
    { q: 'UNDROP TABLE spans' },
    { q: 'BEGIN TRANSACTION' },
    { q: 'WITH d AS (DELETE FROM spans RETURNING *) SELECT * FROM d' },
    { q: 'SELECT * INTO pwn FROM traces' },
    { q: 'SELECT * FROM traces FOR UPDATE' },
    { q: 'TABLE traces' },
    { q: 'VALUES (1)' },
    { q: "COPY spans TO '/etc/x'" },
    { q: '' },
    { q: '   ' },
    { q: '-- only a comment' },
  ]);
});

describe('SETTINGS, FORMAT and INTO OUTFILE', () => {
  corpus(h, w, [
    { q: 'SELECT 1 SETTINGS readonly = 0' },
    { q: 'SELECT count() FROM spans SETTINGS max_execution_time = 0' },
    { q: 'SELECT count() FROM spans SETTINGS max_result_rows = 0, max_memory_usage = 0' },
    { q: "SELECT * FROM traces SETTINGS additional_table_filters = {'traces': '1'}" },
    { q: "WITH '{A_PROJECT}' AS project_id SELECT trace_id FROM traces SETTINGS allow_experimental_analyzer = 0" },
    { q: 'SELECT * FROM traces FORMAT JSON' },
    { q: 'SELECT 1 FORMAT TabSeparated' },
    { q: 'SELECT * FROM spans FORMAT Native' },
    { q: `SELECT * FROM traces INTO OUTFILE '${OUTFILE}'` },
    { q: `SELECT 1 INTO OUTFILE '${OUTFILE}' FORMAT CSV` },
    { q: `SELECT * FROM spans INTO OUTFILE '${OUTFILE}' TRUNCATE` },
    { q: `SELECT 1 INTO OUTFILE '${OUTFILE_REL}'` },
    { q: `SELECT * FROM traces INTO OUTFILE '${OUTFILE}' APPEND COMPRESSION 'gzip'` },
  ]);
});

describe('after part 1', () => {
  it('left both projects, the tables and the file system untouched', async () => {
    await integrity(h(), w(), [OUTFILE, OUTFILE_REL]);
  });
});
