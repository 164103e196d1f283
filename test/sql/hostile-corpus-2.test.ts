import { describe, expect, it } from 'vitest';
import { call, PUBLIC, useHarness } from '../support/harness.js';
import { corpus, integrity, MA, MB, sql, useWorld, verdict, type Answer, type Case } from './hostile-fixture.js';

/**
 * Hostile public SQL, part 2: comment, quoting and lexer-differential tricks, case and unicode tricks,
 * functions that read server state, OR-true predicates, CTE and alias shadowing, IN over table names,
 * joins and subqueries, lambdas and casts, error oracles (a caller predicate evaluated on other
 * projects' rows), runtime errors, resource exhaustion, oversized queries, credential scoping.
 */

const h = useHarness();
const w = useWorld(h);

const col = (b: Answer, name: string) => b.rows.map((r) => r[b.columns.findIndex((c) => c.name === name)]);
const onlyA =
  (name: string, ...also: string[]) =>
  (b: Answer) => {
    for (const v of col(b, name))
      expect(String(v).startsWith(MA) || also.includes(String(v)), `${name} ${String(v)} is not A's`).toBe(true);
  };
const counted =
  (n: (x: ReturnType<typeof w>) => number, at = 0) =>
  (b: Answer, x: ReturnType<typeof w>) =>
    expect(Number(b.rows[0]![at])).toBe(n(x));
const BS = '\\';

describe('comments, quoting and lexer differentials', () => {
  corpus(h, w, [
    { q: 'SEL/**/ECT * FROM traces' },
    { q: 'SELECT * FROM sys/**/tem.tables' },
    { q: 'SELECT * FROM system/**/.tables' },
    { q: 'SELECT * FROM system./**/tables' },
    { q: 'SELECT name -- hidden\nFROM system.tables' },
    { q: 'SELECT count() FROM traces -- ; DROP TABLE spans', ok: true, check: counted((x) => x.aTraces) },
    { q: 'SELECT count() FROM traces /* ; DROP TABLE spans */', ok: true, check: counted((x) => x.aTraces) },
    {
      name: 'nested comment hides a line comment from one lexer',
      q: 'SELECT 1 /* /* */ -- */ , name FROM system.tables',
    },
    { q: 'SELECT 1 /* /* nested */ */ AS x' },
    { q: 'SELECT trace_id FROM traces /* unterminated' },
    { q: "SELECT '*/' AS a, name FROM system.tables /* '" },
    { q: "SELECT ';' AS a, count() FROM traces", ok: true, check: counted((x) => x.aTraces, 1) },
    { q: "SELECT 'x; DROP TABLE spans' AS a FROM traces", ok: true },
    { q: "SELECT '*/ DROP TABLE spans /*' AS a FROM traces", ok: true },
    { q: "SELECT '--' AS a, trace_id FROM traces", ok: true, check: onlyA('trace_id') },
    { q: "SELECT 'it''s' AS a, trace_id FROM traces", ok: true, check: onlyA('trace_id') },
    { name: '# comment in ClickHouse, operator in PostgreSQL', q: "SELECT 1 # '\n, name FROM system.tables -- '" },
    { q: 'SELECT 1 #!\n, name FROM system.tables' },
    {
      name: 'backslash-escaped quote inside a string (string ends earlier for PostgreSQL)',
      q: `SELECT 'x${BS}' AS a, ' AS b, (SELECT name FROM system.tables LIMIT 1) AS c, ' AS d FROM traces -- '`,
    },
    {
      name: 'backslash-escaped quote inside a quoted identifier',
      q: `SELECT 1 AS "${BS}", 2 AS " , (SELECT name FROM system.tables LIMIT 1) AS c, 3 AS " FROM traces -- "`,
    },
    { q: `SELECT E'${BS}'' AS a, trace_id FROM traces` },
    { q: `SELECT U&'${BS}0073ystem' AS a` },
    { q: `SELECT * FROM U&"${BS}0073ystem".tables` },
    { q: 'SELECT $$ FROM system.tables $$ AS a, trace_id FROM traces', ok: true, check: onlyA('trace_id') },
    { q: 'SELECT $a$ x $a$, name FROM system.tables' },
    { q: 'SELECT "system"."tables"."name" FROM "system"."tables"' },
    { q: 'SELECT * FROM "system".tables' },
    { q: 'SELECT * FROM `system`.`tables`' },
    { q: 'SELECT * FROM "sys""tem".tables' },
    { q: 'SELECT * FROM "system.tables"' },
    { q: 'SELECT * FROM [system].[tables]' },
    { q: 'SELECT * FROM "system" . "one"' },
    { q: 'SELECT * FROM "traces" AS "t" WHERE "t"."trace_id" != \'\'', ok: true, check: onlyA('trace_id') },
  ]);
});

describe('case and unicode tricks', () => {
  corpus(h, w, [
    { q: 'SELECT * FROM sYsTeM.tables' },
    { q: 'SELECT * FROM SYSTEM.TABLES' },
    { q: 'SELECT * FROM System.Tables' },
    { q: 'SELECT * FROM \uff53\uff59\uff53\uff54\uff45\uff4d.tables' },
    { q: 'SELECT * FROM \uff54\uff52\uff41\uff43\uff45\uff53' },
    { q: 'SELECT * FROM \u0455ystem.tables' },
    { q: 'SELECT * FROM tr\u0430ces' },
    { q: 'SELECT * FROM sys\u200btem.tables' },
    { q: 'SELECT * FROM system\u200b.tables' },
    { q: 'SELECT\u200b* FROM system.tables' },
    { q: 'SELECT name FROM\u00a0system.tables' },
    { q: 'SELECT count() FROM\u00a0traces', ok: true, check: counted((x) => x.aTraces) },
    { q: 'SELECT name FROM\u3000system.tables' },
    { q: 'SELECT 1\u0000; DROP TABLE spans' },
    { q: 'SELECT count() FROM traces\u0000', ok: true, check: counted((x) => x.aTraces) },
    { q: "SELECT '\u0000' AS a, trace_id FROM traces", ok: true, check: onlyA('trace_id') },
    { q: "SELECT count() FROM traces WHERE trace_id = '\u0000' OR 1 = 1", ok: true, check: counted((x) => x.aTraces) },
    { q: "SELECT 'sys\u0074em' AS a", ok: true },
    { q: "SELECT '\u202e' AS a, trace_id FROM traces", ok: true, check: onlyA('trace_id') },
    // Both lexers must read the rest of the line as comment: a 200 may only hold the column `1`.
    ...['\u2028', '\r', '\u0085', '\u000b', '\f'].map((sep): Case => ({
      q: `SELECT 1 --${sep}, name FROM system.tables`,
      ok: true,
      check: (b) => expect(b.columns.map((c) => c.name)).toEqual(['1']),
    })),
  ]);
});

describe('functions that read server state, files or the network', () => {
  const refused = [
    'hostName()',
    'fqdn()',
    'currentUser()',
    'user()',
    'currentDatabase()',
    'database()',
    'currentSchemas(true)',
    'version()',
    'uptime()',
    "getSetting('readonly')",
    "getSettingOrDefault('readonly', 1)",
    "getMacro('x')",
    "file('/etc/passwd')",
    'filesystemAvailable()',
    'filesystemCapacity()',
    'filesystemUnreserved()',
    'serverUUID()',
    "getServerPort('tcp_port')",
    'currentProfiles()',
    'enabledProfiles()',
    'currentRoles()',
    "getServerSetting('path')",
    "getMergeTreeSetting('index_granularity')",
    "hasColumnInTable('default', 'spans', 'project_id')",
    'buildId()',
    'revision()',
    'tcpPort()',
    'displayName()',
    'queryID()',
    'initialQueryID()',
    'serverTimezone()',
    'sleep(3)',
    'sleepEachRow(1)',
    "throwIf(1, 'x')",
    "globalVariable('max_allowed_packet')",
    "getClientHTTPHeader('authorization')",
    'transactionID()',
    'zookeeperSessionUptime()',
    "catboostEvaluate('/etc/m.bin', 1)",
    'addressToSymbol(toUInt64(1))',
    "demangle('x')",
    "url('http://127.0.0.1:9/')",
    'currentQueryID()',
    'getOSKernelVersion()',
    'rowNumberInAllBlocks()',
    "dictGet('d', 'v', 1)",
    "joinGet('spans', 'trace_id', 'x')",
    "evalMLMethod('x', 1)",
    "structureToCapnProtoSchema('a String')",
    'generateRandomStructure()',
  ];
  corpus(h, w, [
    ...refused.map((f) => ({ q: `SELECT ${f} AS x` })),
    { q: 'SELECT trace_id, version() AS v FROM traces' },
    { q: "SELECT count() FROM traces WHERE startsWith(version(), '2')" },
    { q: 'SELECT sum(sleepEachRow(1)) FROM spans' },
    { q: 'SELECT runningDifference(cost) AS d FROM spans', ok: true },
    { q: 'SELECT bar(1, 0, 10) AS b', ok: true },
  ]);
});

const B_FINDING_TUPLE =
  `tuple('{B_PROJECT}', '${MB}-sig', '${MB}-det', '${MB}-f1', '${MB}-t1', '${MB}-root1', toDateTime64('2026-01-02 03:04:05', 3, 'UTC'), ` +
  `toDateTime64('2026-01-02 03:04:05', 3, 'UTC'), '${MB}-finding')`;

describe('predicates, CTE and alias shadowing, IN over table names', () => {
  corpus(h, w, [
    {
      q: 'SELECT trace_id FROM traces WHERE 1=1 OR 1=1',
      ok: true,
      check: (b, x) => {
        expect(b.row_count).toBe(x.aTraces);
        onlyA('trace_id')(b);
      },
    },
    { q: "SELECT count() FROM spans WHERE 1 = 1 OR trace_id != ''", ok: true, check: counted((x) => x.aSpans) },
    { q: 'SELECT count() FROM spans WHERE NOT (1 = 0) OR true', ok: true, check: counted((x) => x.aSpans) },
    { q: "SELECT count() FROM traces WHERE trace_id = '' OR 1=1 --'", ok: true, check: counted((x) => x.aTraces) },
    { q: 'SELECT count() FROM traces WHERE 1 = 1) OR (1 = 1' },
    { q: 'SELECT trace_id FROM traces PREWHERE 1', ok: true, check: onlyA('trace_id') },
    { q: 'WITH traces AS (SELECT * FROM system.tables) SELECT * FROM traces' },
    { q: 'WITH spans AS (SELECT * FROM traces) SELECT count() FROM spans', ok: true, check: counted((x) => x.aTraces) },
    { q: 'WITH traces AS (SELECT * FROM traces) SELECT trace_id FROM traces', ok: true, check: onlyA('trace_id') },
    { q: 'WITH spans AS (SELECT * FROM spans) SELECT count() FROM spans', ok: true, check: counted((x) => x.aSpans) },
    {
      q: "WITH Traces AS (SELECT 'x' AS trace_id) SELECT trace_id FROM traces",
      ok: true,
      check: onlyA('trace_id', 'x'),
    },
    {
      q: 'WITH "TRACES" AS (SELECT \'x\' AS trace_id) SELECT trace_id FROM traces',
      ok: true,
      check: onlyA('trace_id', 'x'),
    },
    {
      q: "WITH traces AS (SELECT 'x' AS trace_id) SELECT trace_id FROM TRACES",
      ok: true,
      check: onlyA('trace_id', 'x'),
    },
    {
      q: "SELECT trace_id FROM (WITH x AS (SELECT 'x' AS trace_id) SELECT trace_id FROM x) AS s UNION ALL SELECT trace_id FROM traces",
      ok: true,
      check: onlyA('trace_id', 'x'),
    },
    {
      q: "SELECT trace_id FROM (WITH traces AS (SELECT 'x' AS trace_id) SELECT trace_id FROM traces) AS s UNION ALL SELECT trace_id FROM traces",
      ok: true,
      check: onlyA('trace_id', 'x'),
    },
    {
      q: 'WITH a AS (SELECT trace_id FROM traces), b AS (SELECT trace_id FROM a) SELECT * FROM b',
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      q: 'WITH a AS (SELECT trace_id FROM b), b AS (SELECT trace_id FROM traces) SELECT * FROM a',
      ok: true,
      check: onlyA('trace_id'),
    },
    { q: "WITH schema_migrations AS (SELECT 'x' AS v) SELECT * FROM schema_migrations", ok: true },
    {
      q: 'WITH traces_mv AS (SELECT trace_id FROM traces) SELECT trace_id FROM traces_mv',
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      q: "SELECT trace_id FROM traces WHERE trace_id IN (WITH spans AS (SELECT 'x' AS trace_id) SELECT trace_id FROM spans)",
      ok: true,
      check: onlyA('trace_id'),
    },
    { q: 'WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT * FROM r' },
    { q: "WITH '{A_PROJECT}' AS project_id SELECT trace_id FROM traces", ok: true, check: onlyA('trace_id') },
    { q: "WITH '{A_PROJECT}' AS project_id SELECT count() FROM spans", ok: true, check: counted((x) => x.aSpans) },
    {
      q: "SELECT '{B_PROJECT}' AS project_id, count() AS n FROM traces",
      ok: true,
      check: counted((x) => x.aTraces, 1),
    },
    {
      q: "SELECT trace_id AS project_id FROM spans WHERE project_id = '{B_PROJECT}'",
      ok: true,
      check: onlyA('project_id'),
    },
    ...[
      'AS FINAL',
      'FINAL',
      'AS ARRAY',
      'CROSS',
      'AS SETTINGS',
      '"SETTINGS"',
      'AS t SAMPLE 0.5',
      'AS GLOBAL',
      'AS PREWHERE',
      'AS FORMAT',
      'AS "default"',
      'AS INFORMATION_SCHEMA',
    ].map((a): Case => ({ q: `SELECT trace_id FROM traces ${a}`, ok: true, check: onlyA('trace_id') })),
    { q: 'SELECT 1 AS __sl_project' },
    { q: 'SELECT {__sl_project:String} AS p' },
    { q: 'SELECT count() FROM spans WHERE trace_id != {__sl_project:String}' },
    { q: 'SELECT {x:String} AS p' },
    { q: 'SELECT trace_id AS p_trace_id FROM traces', ok: true, check: onlyA('p_trace_id') },
    { q: 'SELECT count() FROM spans WHERE trace_id IN traces', ok: true, check: counted((x) => x.aSpans) },
    { q: 'SELECT 0 IN system.one AS x' },
    { q: 'SELECT count() FROM traces WHERE trace_id IN system.tables' },
    { q: 'SELECT count() FROM traces WHERE trace_id IN default.spans' },
    { q: 'SELECT count() FROM traces WHERE trace_id GLOBAL IN (SELECT name FROM system.tables)' },
    { name: 'in() as a function reads a physical table by name', q: "SELECT in('x', spans) AS v" },
    { q: "SELECT notIn('x', traces) AS v" },
    { q: 'SELECT count() FROM traces WHERE in(trace_id, findings)' },
    {
      name: "in(tuple(B's finding), findings): membership oracle over the unscoped physical table",
      q: `SELECT in(${B_FINDING_TUPLE}, findings) AS v`,
    },
    { q: `SELECT count() FROM spans WHERE in(${B_FINDING_TUPLE}, findings)` },
    {
      q: 'SELECT count() FROM spans AS s WHERE in(s.trace_id, traces)',
      ok: true,
      check: (b, x) =>
        expect(
          Number(b.rows[0]![0]),
          'LEAK: in(x, traces) was answered from the physical table, not the scoped one',
        ).toBe(x.aSpans),
    },
    { q: "SELECT 'x' IN (spans) AS v" },
    { q: 'SELECT count() FROM traces WHERE trace_id IN (findings)' },
    {
      name: "tuple(B's finding) IN (findings): the parenthesised form of the same oracle",
      q: `SELECT ${B_FINDING_TUPLE} IN (findings) AS v`,
    },
    { q: `SELECT ${B_FINDING_TUPLE} NOT IN (findings) AS v` },
    { q: 'SELECT in(0, one) AS v' },
    { q: "SELECT in('x', INFORMATION_SCHEMA.tables) AS v FROM traces AS INFORMATION_SCHEMA" },
    { q: 'SELECT in(trace_id, spans) AS v FROM spans', ok: true },
  ]);
});

describe('joins, subqueries, lambdas and casts', () => {
  corpus(h, w, [
    { q: 'SELECT count() FROM traces, spans', ok: true, check: counted((x) => x.aTraces * x.aSpans) },
    { q: 'SELECT count() FROM traces CROSS JOIN findings', ok: true, check: counted((x) => x.aTraces * x.aFindings) },
    {
      q: 'SELECT count() FROM traces AS t JOIN spans AS s ON 1 = 1',
      ok: true,
      check: counted((x) => x.aTraces * x.aSpans),
    },
    {
      q: 'SELECT count() FROM traces AS t LEFT JOIN spans AS s ON t.trace_id = s.trace_id OR 1 = 1',
      ok: true,
      check: counted((x) => x.aTraces * x.aSpans),
    },
    {
      q: 'SELECT count() FROM traces AS t FULL OUTER JOIN findings AS f ON 1 = 1',
      ok: true,
      check: counted((x) => x.aTraces * x.aFindings),
    },
    {
      q: 'SELECT s.span_id FROM traces AS t, spans AS s WHERE t.trace_id != s.trace_id OR 1 = 1 LIMIT 100',
      ok: true,
      check: onlyA('span_id'),
    },
    { q: 'SELECT count() FROM traces NATURAL JOIN spans', ok: true },
    { q: 'SELECT count() FROM traces AS a ANY LEFT JOIN spans AS b ON 1 = 1', ok: true },
    { q: 'SELECT count() FROM traces AS t PASTE JOIN spans AS s', ok: true },
    { q: 'SELECT m FROM traces AS t ARRAY JOIN model_names AS m', ok: true, check: onlyA('m') },
    {
      q: 'SELECT count() FROM traces AS t JOIN spans AS s USING (trace_id)',
      ok: true,
      check: counted((x) => x.aSpans),
    },
    { q: 'SELECT (SELECT max(trace_id) FROM traces) AS m', ok: true, check: onlyA('m') },
    {
      q: 'SELECT trace_id, (SELECT count() FROM spans AS s WHERE s.trace_id = t.trace_id) AS n FROM traces AS t',
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      q: 'SELECT trace_id FROM traces AS t WHERE EXISTS (SELECT 1 FROM spans AS s WHERE s.trace_id = t.trace_id)',
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      q: 'SELECT trace_id FROM traces WHERE trace_id IN (SELECT trace_id FROM spans WHERE 1 = 1 OR 1 = 1)',
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      q: 'SELECT span_id FROM (SELECT * FROM (SELECT * FROM spans) AS a) AS b LIMIT 10',
      ok: true,
      check: onlyA('span_id'),
    },
    { q: 'SELECT arrayMap(x -> upper(x), model_names) AS m FROM traces', ok: true },
    { q: 'SELECT arrayFilter(x -> x IN (SELECT name FROM system.tables), model_names) FROM traces' },
    { q: 'SELECT arrayMap(x -> (SELECT name FROM system.one), array(1))' },
    { q: 'SELECT arrayMap((x, y) -> concat(x, y), model_names, model_names) AS m FROM traces', ok: true },
    { q: 'SELECT arrayMap(traces -> traces, array(1)) AS m', ok: true },
    { q: 'SELECT trace_id::String AS t FROM traces', ok: true, check: onlyA('t') },
    { q: "SELECT '1'::Int64 AS n", ok: true },
    { q: 'SELECT (SELECT name FROM system.tables LIMIT 1)::String AS n' },
    { q: 'SELECT CAST(trace_id AS String) AS t FROM traces', ok: true, check: onlyA('t') },
    { q: "SELECT CAST(trace_id, 'String') AS t FROM traces", ok: true, check: onlyA('t') },
    { q: 'SELECT CAST((SELECT name FROM system.tables LIMIT 1) AS String) AS n' },
    { q: "SELECT CAST('x' AS Nullable(String)) AS t", ok: true },
    { q: "SELECT accurateCastOrNull(trace_id, 'UInt8') AS t FROM traces", ok: true },
    { q: 'SELECT toString(metadata) AS m FROM traces', ok: true },
  ]);
});

describe('error oracles: a caller predicate must never run on other projects rows', () => {
  // A's session ids and metadata `n` are integers and A has no `Bmk` values: evaluated on A's rows
  // alone, each query answers 200. A 400 proves the predicate ran on B's rows (a boolean oracle).
  corpus(h, w, [
    { q: `SELECT count() FROM spans WHERE intDiv(1, if(session_id LIKE '${MB}%', 0, 1)) = 1`, oracle: (x) => x.aSpans },
    { q: "SELECT count() FROM spans WHERE intDiv(1, if(user_id LIKE 'Bmk%', 0, 1)) = 1", oracle: (x) => x.aSpans },
    { q: 'SELECT count() FROM spans WHERE toInt64(session_id) > 0', oracle: (x) => x.aSpans },
    { q: "SELECT count() FROM spans WHERE toInt64(metadata['n']) > 0", oracle: (x) => x.aSpans },
    {
      q: "SELECT count() FROM (SELECT * FROM spans) AS s WHERE intDiv(1, if(s.name LIKE 'Bmk%', 0, 1)) = 1",
      oracle: (x) => x.aSpans,
    },
    {
      q: 'SELECT count() FROM spans AS s JOIN traces AS t ON s.trace_id = t.trace_id WHERE toInt64(s.session_id) > 0',
      oracle: (x) => x.aSpans,
    },
    {
      q: "WITH s AS (SELECT * FROM spans) SELECT count() FROM s WHERE toInt64(metadata['n']) = 1",
      oracle: (x) => x.aSpans,
    },
    {
      q: "SELECT count() FROM spans WHERE toDate(if(user_id LIKE 'Bmk%', 'x', '2020-01-01')) > toDate('2000-01-01')",
      oracle: (x) => x.aSpans,
    },
    { q: 'SELECT count() FROM traces WHERE toInt64(session_id) > 0', oracle: (x) => x.aTraces },
    {
      q: "SELECT count() FROM findings WHERE intDiv(1, if(summary LIKE 'Bmk%', 0, 1)) = 1",
      oracle: (x) => x.aFindings,
    },
  ]);
});

describe('runtime errors of accepted queries leak nothing', () => {
  corpus(h, w, [
    { q: 'SELECT nosuch FROM spans' },
    { q: 'SELECT toInt64(user_id) AS n FROM spans' },
    { q: 'SELECT trace_id + 1 AS n FROM traces' },
    { q: 'SELECT intDiv(1, 0) AS x', ok: true },
    { q: "SELECT toDateTime('garbage') AS x" },
    { q: "SELECT match(trace_id, '(') AS m FROM traces" },
    { q: "SELECT JSONExtract(input, 'NoSuchType') AS j FROM spans" },
    { q: 'SELECT sum(name) AS s FROM spans' },
    { q: 'SELECT trace_id FROM traces GROUP BY name' },
    { q: 'SELECT t.nosuch FROM traces AS t' },
    { q: 'SELECT count() FROM traces AS t JOIN spans AS s USING (nosuch)' },
    { q: 'SELECT quantile(2)(cost) AS q FROM spans' },
  ]);
});

describe('resource exhaustion is refused within the time limit', () => {
  corpus(h, w, [
    { q: 'SELECT count() FROM spans AS a, spans AS b, spans AS c, spans AS d', heavy: true },
    {
      q: 'SELECT count() FROM spans AS a CROSS JOIN spans AS b CROSS JOIN spans AS c CROSS JOIN spans AS d CROSS JOIN spans AS e',
      heavy: true,
    },
    {
      q: 'SELECT a.span_id, b.span_id, c.span_id, d.span_id, count() AS n FROM spans AS a, spans AS b, spans AS c, spans AS d GROUP BY a.span_id, b.span_id, c.span_id, d.span_id',
      heavy: true,
    },
    { q: "SELECT repeat('x', 1e9) AS s", heavy: true },
    { q: "SELECT length(repeat('x', 1000000000)) AS n", heavy: true },
    { q: "SELECT length(repeat(repeat('x', 100000), 100000)) AS n", heavy: true },
    { q: 'SELECT sum(length(repeat(a.span_id, 100000))) AS n FROM spans AS a, spans AS b', heavy: true },
    {
      q: 'SELECT count() FROM (SELECT arrayJoin(arrayResize(array(1), 100000)) AS a, arrayJoin(arrayResize(array(2), 100000)) AS b) AS x',
      heavy: true,
    },
    { q: 'SELECT arrayJoin(range(10000000000)) AS n', heavy: true },
    { q: 'SELECT length(arrayResize(array(1), 2000000000)) AS n', heavy: true },
    { q: "SELECT length(leftPad('', 2000000000, 'x')) AS n", heavy: true },
    { q: "SELECT length(groupArray(repeat('x', 100000))) AS n FROM spans AS a, spans AS b", heavy: true },
  ]);
});

describe('oversized queries', () => {
  const orChain = `SELECT count() FROM traces WHERE ${Array.from({ length: 7000 }, (_, i) => `trace_id = 'x${i}'`).join(' OR ')}`;
  corpus(h, w, [
    { name: `OR chain of ${orChain.length} characters`, q: orChain, ok: true, check: counted(() => 0) },
    { name: '120,000-character string literal', q: `SELECT length('${'x'.repeat(120_000)}') AS n`, ok: true },
    {
      name: 'IN list of 20,000 items',
      q: `SELECT count() FROM traces WHERE trace_id IN (${Array.from({ length: 20_000 }, (_, i) => `'${i}'`).join(', ')})`,
      ok: true,
      check: counted(() => 0),
    },
    { name: '5,000 nested parentheses', q: `SELECT ${'('.repeat(5000)}1${')'.repeat(5000)} AS x`, ok: true },
    { name: '20,000 nested NOTs', q: `SELECT ${'NOT '.repeat(20_000)}1 AS x`, ok: true },
    { name: '30,000 additions', q: `SELECT 1${' + 1'.repeat(30_000)} AS x`, ok: true },
    {
      name: '300 nested subqueries',
      q: `${'SELECT trace_id FROM ('.repeat(300)}SELECT trace_id FROM traces${') AS s'.repeat(300)}`,
      ok: true,
      check: onlyA('trace_id'),
    },
    {
      name: '110,000-character comment',
      q: `SELECT count() FROM traces /* ${'x'.repeat(110_000)} */`,
      ok: true,
      check: counted((x) => x.aTraces),
    },
    {
      name: '2,000 UNION ALL branches',
      q: Array.from({ length: 2000 }, () => 'SELECT trace_id FROM traces').join(' UNION ALL '),
      ok: true,
      check: onlyA('trace_id'),
    },
  ]);
  it('a 2 MB body is refused without a 500', async () => {
    const res = await sql(h(), w().a.key.key, `SELECT '${'x'.repeat(2_000_000)}' AS s`);
    expect([400, 413], res.body.slice(0, 300)).toContain(res.statusCode);
    expect(Object.keys(res.json())).toEqual(['detail']);
  });
});

describe('credential scoping of public SQL', () => {
  const post = (token: string | undefined, payload: Record<string, unknown>, query?: Record<string, string>) =>
    call(h().api, { method: 'POST', url: `${PUBLIC}/sql`, token, payload, query });
  const Q = 'SELECT trace_id, user_id FROM traces';

  it("an API key with another project's project_id is refused and sees nothing of it", async () => {
    const res = await post(w().a.key.key, { query: Q, project_id: w().b.project.id });
    expect(res.statusCode, res.body).toBe(400);
    expect(Object.keys(res.json())).toEqual(['detail']);
    expect(res.body.includes(MB)).toBe(false);
  });
  it('an API key with its own project_id reads its project', async () => {
    const res = await post(w().a.key.key, { query: Q, project_id: w().a.project.id });
    expect(res.statusCode, res.body).toBe(200);
    verdict({ q: Q, ok: true, check: onlyA('trace_id') }, w(), res);
  });
  it("a user credential reads its own project with project_id, and never another owner's", async () => {
    const a = w().a;
    const own = await post(a.owner.token, { query: Q, project_id: a.project.id }, { project_id: a.project.id });
    expect(own.statusCode, own.body).toBe(200);
    verdict({ q: Q, ok: true, check: onlyA('trace_id') }, w(), own);
    const none = await post(a.owner.token, { query: Q });
    expect(none.statusCode, none.body).toBe(400);
    const foreign = await post(
      a.owner.token,
      { query: Q, project_id: w().b.project.id },
      { project_id: w().b.project.id },
    );
    expect([403, 404], foreign.body).toContain(foreign.statusCode);
    expect(foreign.body.includes(MB)).toBe(false);
  });
  it('no credential or a wrong key is 401', async () => {
    expect((await post(undefined, { query: Q })).statusCode).toBe(401);
    expect((await post('sl_00000000-0000-4000-8000-000000000000', { query: Q })).statusCode).toBe(401);
  });
  it('a body that is not {query: string} is refused without a 500', async () => {
    for (const payload of [
      {},
      { query: 1 },
      { query: ['SELECT 1'] },
      { query: { sql: 'SELECT 1' } },
      { query: null },
    ]) {
      const res = await post(w().a.key.key, payload);
      expect([400, 422], res.body).toContain(res.statusCode);
    }
  });
});

describe('a query that fails while running leaves nothing for the next caller', () => {
  it("B's query hits the memory limit mid-run; A's next query answers normally and holds nothing of B's", async () => {
    const failing = await sql(
      h(),
      w().b.key.key,
      "SELECT trace_id, user_id, length(groupArray(repeat('x', 100000))) AS n FROM spans AS a, spans AS b, spans AS c GROUP BY trace_id, user_id",
    );
    expect(failing.statusCode, failing.body).toBe(400);
    const next = await sql(h(), w().a.key.key, 'SELECT trace_id, user_id FROM traces');
    expect(next.statusCode, `A's plain query after B's failed one: ${next.body}`).toBe(200);
    verdict({ q: 'SELECT trace_id, user_id FROM traces', ok: true, check: onlyA('trace_id') }, w(), next);
  });
  it('a query over the time limit does not poison the next one', async () => {
    const failing = await sql(h(), w().a.key.key, 'SELECT count() FROM spans AS a, spans AS b, spans AS c, spans AS d');
    expect(failing.statusCode, failing.body).toBe(400);
    const next = await sql(h(), w().a.key.key, 'SELECT count() FROM traces');
    expect(next.statusCode, `plain query after a timed-out one: ${next.body}`).toBe(200);
    expect(Number(next.json().rows[0][0])).toBe(w().aTraces);
  });
});

describe('after part 2', () => {
  it('left both projects and the tables untouched', async () => {
    await integrity(h(), w());
  });
});
