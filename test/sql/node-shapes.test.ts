import NodeSqlParser from 'node-sql-parser';
import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../src/sql/check-tree.js';
import { guardUncached } from '../../src/sql/guard.js';
import { lex, SqlRefused } from '../../src/sql/lexer.js';
import { NODE_SHAPES } from '../../src/sql/node-shapes.js';
import { expectShapesKnown } from './shape-audit.js';

/**
 * The guard fails closed (src/sql/node-shapes.ts): a property of the parser's output that the guard
 * does not know refuses the query. Pure: no database.
 */

const parser = new NodeSqlParser.Parser();
const refused = (q: string) => {
  try {
    guardUncached(q, 'default');
  } catch (error) {
    expect(error).toBeInstanceOf(SqlRefused);
    return (error as SqlRefused).detail;
  }
  throw new Error(`accepted: ${q}`);
};

describe('TABLESAMPLE, read by the parser as a clause and by ClickHouse as an alias', () => {
  it.each([
    "WITH c AS (SELECT name FROM spans) SELECT name FROM c TABLESAMPLE UNION ((SELECT concat(project_id, ' | ', name, ' | ', input) FROM spans WHERE project_id = 'other' LIMIT 5))",
    'SELECT name FROM spans TABLESAMPLE WHERE (1 = 1)',
    'SELECT name FROM spans TABLESAMPLE UNION ((SELECT name FROM system.tables))',
    'SELECT name FROM spans TABLESAMPLE BERNOULLI (10)',
    'SELECT name FROM spans AS s TABLESAMPLE SYSTEM (5) REPEATABLE (1)',
    'SELECT name FROM (SELECT name FROM traces) AS t TABLESAMPLE UNION ((SELECT hostName()))',
    'SELECT name FROM traces TABLESAMPLE UNION ((SELECT path FROM system.disks))',
  ])('%s is refused', (q) => {
    expect(refused(q)).toMatch(/TABLESAMPLE|not allowed|unsupported|could not be parsed/i);
  });
});

describe('a property the guard has never seen is a refusal, wherever it appears', () => {
  const tree = (q: string) => {
    const ast = parser.astify(lex(q).text, { database: 'postgresql' });
    return (Array.isArray(ast) ? ast[0] : ast) as any;
  };
  const walk = () => ({ placeholders: new Map(), mode: 'check' as const, parametric: [] });
  const cases: [string, (t: any) => object][] = [
    ['the statement', (t) => t],
    ['a FROM item', (t) => t.from[0]],
    ['a column', (t) => t.columns[0]],
    ['an expression', (t) => t.columns[0].expr],
    ['a WHERE condition', (t) => t.where],
    ['a function call', (t) => t.where.left],
    ['a column name', (t) => t.columns[0].expr.column],
    ['a LIMIT', (t) => t.limit],
  ];
  it.each(cases)('in %s', (_, at) => {
    const t = tree("SELECT name FROM spans WHERE lower(name) = 'x' LIMIT 3");
    expect(() => checkStatement(t, walk())).not.toThrow();
    const fresh = tree("SELECT name FROM spans WHERE lower(name) = 'x' LIMIT 3");
    (at(fresh) as Record<string, unknown>).some_future_field = null;
    expect(() => checkStatement(fresh, walk())).toThrow(SqlRefused);
  });

  it('clauses the guard does not support must be empty, not merely unchecked', () => {
    const t = tree('SELECT name FROM spans');
    t.qualify = { type: 'bool', value: true };
    expect(() => checkStatement(t, walk())).toThrow(/QUALIFY is not allowed/);
  });

  it('every kind lists its properties, each with a rule', () => {
    for (const [kind, rules] of Object.entries(NODE_SHAPES)) {
      for (const [key, rule] of Object.entries(rules))
        expect(['check', 'empty', 'meta'], `${kind}.${key}`).toContain(rule);
    }
  });
});

describe('the audit walk itself', () => {
  it('covers a query using most of the grammar', () => {
    expectShapesKnown([
      `WITH c AS (SELECT trace_id, name FROM spans WHERE kind = 'llm')
       SELECT t.name, count(DISTINCT c.trace_id) AS n, CASE WHEN t.span_count > 2 THEN 'big' ELSE 'small' END AS size,
              sum(t.total_cost) OVER (PARTITION BY t.name ORDER BY t.trace_start_time ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS running,
              quantile(0.9)(t.duration_ms) AS p90, t.metadata['k'] AS k, -t.span_count AS neg, NOT t.is_evaluation AS real
       FROM traces AS t JOIN c ON c.trace_id = t.trace_id
       WHERE t.trace_start_time >= now() - INTERVAL 1 DAY AND t.name IN ('a', 'b') AND t.user_id IS NOT NULL AND t.span_count BETWEEN 1 AND 9
         AND EXISTS (SELECT 1 FROM findings) AND t.trace_id IN (SELECT trace_id FROM spans)
       GROUP BY t.name, size, running, t.duration_ms, k, neg, real, t.span_count, t.total_cost, t.trace_start_time, t.metadata, t.is_evaluation
       HAVING count() > 0
       ORDER BY n DESC NULLS LAST
       LIMIT 10 OFFSET 2
       UNION ALL SELECT name, 1, 'x', 0, 0, '', 0, 0 FROM spans`,
    ]);
  });
});
