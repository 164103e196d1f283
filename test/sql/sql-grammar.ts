import fc from 'fast-check';

/**
 * A grammar of SQL fragments for fuzzing the public SQL guard (guard-fuzz.test.ts): SELECTs over the
 * contract tables, CTEs, subqueries and set operations nested a few levels deep, with clauses and
 * keywords the two dialects read differently (TABLESAMPLE, LATERAL, WINDOW, FOR, QUALIFY, INTO,
 * SETTINGS, FINAL, SAMPLE, FORMAT...), comments and quoting between tokens, and payloads that would
 * leak if they ran unscoped (physical and system tables, server functions, another project's id).
 *
 * Literals never hold a marker, a project id (`{B_PROJECT}` appears only inside predicates) or a
 * server value, so any of those in an answer came from the engine.
 */

const TABLES = ['traces', 'spans', 'findings', '"spans"', '`traces`', 'c'];
const FOREIGN_TABLES = [
  'SPANS',
  'Traces',
  'default.spans',
  'system.tables',
  'system.one',
  'system.disks',
  'system.processes',
  'span_rollup_1m',
  'span_rollup_totals_1h',
  'information_schema.tables',
  'INFORMATION_SCHEMA.COLUMNS',
  'default.traces',
  '"default"."spans"',
  'numbers(3)',
  "merge('default', '.*')",
  "file('/etc/hostname', 'LineAsString')",
  'system.numbers',
  'pg_catalog.pg_tables',
  'spans_projects',
];
/** Words the PostgreSQL parser may read as a clause where ClickHouse reads an alias, or the reverse. */
const TABLE_KEYWORDS = [
  'TABLESAMPLE',
  'LATERAL',
  'FINAL',
  'SAMPLE',
  'ONLY',
  'AS',
  'WINDOW',
  'QUALIFY',
  'FOR',
  'INTO',
  'SETTINGS',
  'USING',
  'WITH',
  'REPEATABLE',
];
const KEYWORD_TAILS = [
  '',
  '',
  'BERNOULLI (10)',
  'SYSTEM (1) REPEATABLE (7)',
  '1',
  't',
  'x (a, b)',
  '"final"',
  'tablesample',
  '(NOLOCK)',
  'SYSTEM_TIME AS OF 1',
  'UPDATE',
];
const COLUMNS = [
  '*',
  'name',
  'trace_id',
  'count()',
  'count(*)',
  'user_id',
  'input',
  'summary',
  'max(trace_id)',
  'name AS n',
  'trace_id AS tablesample',
];
const FOREIGN_COLUMNS = [
  'project_id',
  'hostName()',
  'version()',
  'currentDatabase()',
  'concat(project_id, name)',
  "getSetting('max_threads')",
  '_table',
  '_part',
  '(SELECT name FROM system.tables LIMIT 1)',
  'p_trace_id',
  'toString(serverUUID())',
  'currentUser()',
  "dictGet('d', 'x', 1)",
  '*, project_id',
  "file('/etc/hostname')",
  'tablesample',
  'uptime()',
  'fqdn()',
  'currentQueryID()',
  'queryID()',
  "getMacro('x')",
];
const WHERES = [
  'WHERE 1 = 1',
  'WHERE (1 = 1)',
  "WHERE trace_id LIKE '%'",
  'WHERE trace_id IN (SELECT trace_id FROM spans)',
  "WHERE trace_id != ''",
];
const GROUPS = ['GROUP BY trace_id', 'GROUP BY 1'];
const ORDERS = ['ORDER BY 1', 'ORDER BY 1 DESC NULLS LAST'];
const LIMITS = ['LIMIT 3', 'LIMIT 3 OFFSET 1'];
const HOSTILE_CLAUSES = [
  "WHERE project_id = '{B_PROJECT}'",
  'GROUP BY ALL',
  'HAVING count() > 0',
  'WINDOW w AS (PARTITION BY name)',
  'QUALIFY 1',
  'OFFSET 1',
  'FETCH FIRST 1 ROWS ONLY',
  'FOR UPDATE',
  'FOR SHARE',
  'FOR NO KEY UPDATE',
  'INTO t',
  'INTO TEMP t',
  'SETTINGS max_threads = 1',
  'FORMAT JSON',
  'WITH TOTALS',
  'ARRAY JOIN model_names AS m',
  'PREWHERE 1',
  'LIMIT 1 BY name',
  'WHERE name IN system.tables',
  'WHERE trace_id IN (span_rollup_1m)',
  'LIMIT 1 WITH TIES',
  'SAMPLE 1/2',
  'WHERE EXISTS (SELECT 1 FROM system.one)',
  'GROUP BY name WITH ROLLUP',
  'TABLESAMPLE',
  'WHERE 1 = 1 TABLESAMPLE',
];
const PAYLOADS = [
  'SELECT name FROM system.tables',
  "SELECT concat(project_id, ' ', name, ' ', input) FROM spans",
  'SELECT * FROM default.spans',
  'SELECT hostName()',
  'SELECT version()',
  'SELECT path FROM system.disks',
  'SELECT query FROM system.processes',
  'SELECT * FROM span_rollup_1m',
  'SELECT project_id FROM traces',
  "SELECT name FROM spans WHERE project_id = '{B_PROJECT}'",
  'SELECT name FROM spans',
  'SELECT trace_id FROM traces',
  'SELECT summary FROM findings',
  'SELECT 1',
  'SELECT user_id FROM traces WHERE 1 = 1',
];
const SEPARATORS = [' ', ' ', ' ', '\n', '\t', ' /* c */ ', ' --c\n', '  '];
const SET_OPS = ['UNION', 'UNION ALL', 'UNION DISTINCT', 'EXCEPT', 'INTERSECT', 'UNION ALL BY NAME'];

/** Mostly benign picks, so a fair share of queries reach the engine, with a tail of hostile ones. */
const pick = (benign: string[], hostile: string[], noneWeight = 0) =>
  fc.oneof(
    ...(noneWeight ? [{ weight: noneWeight, arbitrary: fc.constant('') }] : []),
    { weight: 12, arbitrary: fc.constantFrom(...benign) },
    { weight: 1, arbitrary: fc.constantFrom(...hostile) },
  );

const table = pick(TABLES, FOREIGN_TABLES);
/** TABLESAMPLE, the word that once opened a hole, half the time; the other words share the rest. */
const keyword = fc.oneof(fc.constant('TABLESAMPLE'), fc.constantFrom(...TABLE_KEYWORDS));
const suffix = fc.oneof(
  { weight: 8, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom('AS t', 't') },
  { weight: 1, arbitrary: fc.tuple(keyword, fc.constantFrom(...KEYWORD_TAILS)).map(([k, t]) => `${k} ${t}`) },
);
const column = pick(COLUMNS, FOREIGN_COLUMNS);
const maybe = (choices: string[]) =>
  fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom(...choices) });
const hostileClause = fc.oneof(
  { weight: 9, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_CLAUSES) },
);
/** WHERE, GROUP BY, ORDER BY and LIMIT in their order, each optional, and now and then a hostile clause. */
const clause = fc
  .tuple(maybe(WHERES), maybe(GROUPS), maybe(ORDERS), maybe(LIMITS), hostileClause)
  .map((parts) => parts.filter(Boolean).join(' '));
const setOp = fc.constantFrom(...SET_OPS);

const { query } = fc.letrec<{ query: string; select: string; from: string; tail: string; suffix: string }>((tie) => ({
  query: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'sql' },
    { weight: 5, arbitrary: tie('select') },
    { weight: 1, arbitrary: fc.constantFrom(...PAYLOADS) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(tie('query'), setOp, tie('query'), fc.boolean())
        .map(([a, op, b, p]) => (p ? `(${a}) ${op} (${b})` : `${a} ${op} ${b}`)),
    },
    // `SELECT *` mostly, so a set operation after the CTE has a fair chance of matching its columns.
    {
      weight: 3,
      arbitrary: fc
        .tuple(
          tie('query'),
          fc.oneof({ weight: 3, arbitrary: fc.constant('*') }, { weight: 1, arbitrary: column }),
          tie('suffix'),
          tie('tail'),
        )
        .map(([q, c, s, t]) => `WITH c AS (${q}) SELECT ${c} FROM c ${s} ${t}`),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(column, tie('query'), clause).map(([c, q, cl]) => `SELECT ${c} FROM (${q}) ${cl}`),
    },
  ),
  select: fc.tuple(column, tie('from'), clause, tie('tail')).map(([c, f, a, t]) => `SELECT ${c} FROM ${f} ${a} ${t}`),
  /** After a table: nothing, an alias, a keyword, or a keyword before a call holding a query (`TABLESAMPLE UNION ((...))`). */
  suffix: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'sql' },
    { weight: 5, arbitrary: suffix },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          keyword,
          fc.constantFrom('UNION', 'UNION', 'EXCEPT', 'INTERSECT', 'BERNOULLI', 'SYSTEM', 'x', ''),
          tie('query'),
        )
        .map(([k, w, q]) => `${k} ${w} ((${q}))`),
    },
  ),
  /** What may follow a FROM item: a clause, or a set operation in a position the parser may not expect. */
  tail: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'sql' },
    { weight: 4, arbitrary: fc.constant('') },
    {
      weight: 1,
      arbitrary: fc
        .tuple(setOp, tie('query'), fc.constantFrom('((', '(', ' '))
        .map(([op, q, open]) => `${op} ${open}${q}${open.trim() ? ')'.repeat(open.length) : ''}`),
    },
  ),
  from: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'sql' },
    { weight: 6, arbitrary: fc.tuple(table, tie('suffix')).map(([t, s]) => `${t} ${s}`) },
    {
      weight: 2,
      arbitrary: fc.tuple(table, suffix, setOp, tie('query')).map(([t, s, op, q]) => `${t} ${s} ${op} ((${q}))`),
    },
    { weight: 1, arbitrary: fc.tuple(tie('query'), suffix).map(([q, s]) => `(${q}) AS sub ${s}`) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          table,
          table,
          fc.constantFrom(
            'JOIN',
            'LEFT JOIN',
            'CROSS JOIN',
            'ARRAY JOIN',
            'ASOF JOIN',
            'GLOBAL JOIN',
            'PASTE JOIN',
            ',',
          ),
          fc.constantFrom('ON 1 = 1', 'USING (trace_id)', ''),
        )
        .map(([a, b, j, on]) => `${a} AS l ${j} ${b} AS r ${on}`),
    },
  ),
}));

/** A generated query, its tokens joined by random whitespace, comments and line comments. */
export const sqlQuery = fc
  .tuple(query, fc.array(fc.constantFrom(...SEPARATORS), { minLength: 16, maxLength: 16 }))
  .map(([q, seps]) =>
    q
      .trim()
      .split(/ +/)
      .map((token, i) => (i === 0 ? token : `${seps[i % seps.length]}${token}`))
      .join(''),
  );

/**
 * Fixed cases: the attack that found TABLESAMPLE read as an alias over the unscoped physical table,
 * and every failure the fuzzer has found since (none yet beyond these forms).
 */
export const FUZZ_REGRESSIONS = [
  "WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT concat(project_id, ' | ', name, ' | ', input) FROM spans WHERE project_id = '{B_PROJECT}' LIMIT 5))",
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT name FROM system.tables))',
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT path FROM system.disks))',
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT query FROM system.processes))',
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT project_id FROM span_rollup_1m))',
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT hostName()))',
  'WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT version()))',
  'SELECT name FROM spans TABLESAMPLE WHERE (1 = 1)',
  'SELECT name FROM spans TABLESAMPLE BERNOULLI (10) UNION ((SELECT name FROM system.tables))',
];
