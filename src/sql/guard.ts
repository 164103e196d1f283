import NodeSqlParser from 'node-sql-parser';
import { scopedTable, type ContractTable } from './contract.js';
import { checkStatement, type Walk } from './check-tree.js';
import { lex, restoreParametric, SqlRefused } from './lexer.js';
import type { Node, ShapeAudit } from './node-shapes.js';

/**
 * The public SQL guard (docs/design.md, decision 5), pure: caller SQL in, ClickHouse SQL out, or
 * SqlRefused with a detail naming the construct.
 *
 * 1. lexer.ts removes what the two dialects could read differently.
 * 2. node-sql-parser (PostgreSQL grammar) parses exactly one SELECT. check-tree.ts walks every node;
 *    node-shapes.ts lists every property each kind of node may have, and a property it does not
 *    list refuses the query (fail closed: a construct the parser read into a field the guard has
 *    never seen is a refusal, not a pass-through).
 * 3. Each reference to a contract table becomes a placeholder; the tree is printed, parsed again and
 *    compared with itself (the printed text must mean the same tree), then each placeholder becomes
 *    the table's project-scoped subquery. No predicate, join, union, alias or CTE of the caller can
 *    widen a scope that lives inside a subquery it can't reach.
 */

const parser = new NodeSqlParser.Parser();
const DIALECT = { database: 'postgresql' };
const PARSE = { database: 'postgresql', parseOptions: { includeLocations: true } };

export const RESULT_ROW_LIMIT = 10_000;

export type GuardedQuery = { sql: string; tables: string[] };

/**
 * Guarded texts by (database, query). Dashboards, detectors and notebooks send the same SQL again
 * and again; the guard is deterministic, so a repeat costs a lookup instead of two parses.
 */
const CACHE_SIZE = 1000;
const cache = new Map<string, GuardedQuery>();

export function guardSql(input: string, db: string): GuardedQuery {
  const key = `${db}\u0000${input}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const guarded = guardUncached(input, db);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(key, guarded);
  return guarded;
}

/**
 * `audit` (tests): every node the walk shaped, by kind, and the checked tree, handed over before the
 * printer runs (it rewrites some nodes in place); see test/sql/shape-audit.ts.
 */
export type GuardAudit = { shapes: ShapeAudit; checked(tree: unknown): void };

export function guardUncached(input: string, db: string, audit?: GuardAudit): GuardedQuery {
  try {
    return guard(input, db, audit);
  } catch (error) {
    // Anything the checks did not foresee (a tree shape they don't know) is a refusal, never a 500.
    if (error instanceof SqlRefused) throw error;
    throw new SqlRefused('query uses a construct the SQL guard does not support');
  }
}

/** Statements (SELECTs, unions, CTEs, subqueries) one query may hold. */
export const MAX_SELECTS = 64;

function guard(input: string, db: string, audit?: GuardAudit): GuardedQuery {
  const { text, parametric } = lex(input);
  if (text.trim() === '') throw new SqlRefused('query is empty');
  if ((text.match(/\bselect\b/gi) ?? []).length > MAX_SELECTS)
    throw new SqlRefused(`at most ${MAX_SELECTS} SELECTs per query`);
  const root = parseOne(text, (error) => new SqlRefused(parseFailure(error, text)));
  const placeholders = new Map<string, ContractTable>();
  checkStatement(root, { placeholders, mode: 'check', parametric, audit: audit?.shapes });
  audit?.checked(root);

  // The printed text is what runs, so it is parsed and checked again, and must print back to
  // itself: a misreading of the printer or the parser can't slip through between the two.
  const printed = parser.sqlify(root as never, DIALECT);
  const again = parseOne(printed, () => new SqlRefused('query could not be verified'));
  const verify: Walk = { placeholders, mode: 'verify', parametric };
  checkStatement(again, verify);
  if (parser.sqlify(again as never, DIALECT) !== printed) throw new SqlRefused('query could not be verified');

  let sql = restoreParametric(printed, parametric);
  for (const [placeholder, table] of placeholders) {
    const quoted = `"${placeholder}"`;
    if (sql.split(quoted).length !== 2) throw new SqlRefused('query could not be verified');
    sql = sql.replace(quoted, scopedTable(table, db));
  }
  if (/__sl_(t|pa)_/.test(sql)) throw new SqlRefused('query could not be verified');
  return { sql, tables: [...new Set([...placeholders.values()].map((t) => t.name))] };
}

/** Exactly one statement, with the aggregates' names as written. */
function parseOne(text: string, refusal: (error: unknown) => SqlRefused): unknown {
  let ast: unknown;
  try {
    ast = parser.astify(text, PARSE);
  } catch (error) {
    throw refusal(error);
  }
  keepFunctionCase(ast, text);
  if (Array.isArray(ast)) {
    if (ast.length !== 1) throw new SqlRefused('only one statement is allowed');
    ast = ast[0];
  }
  return ast;
}

/** Where the parser stopped, shown as the text there (its own message lists every token it expected). */
function parseFailure(error: unknown, text: string): string {
  const offset = (error as { location?: { start?: { offset?: number } } }).location?.start?.offset;
  if (typeof offset !== 'number') return 'query could not be parsed';
  const near = text
    .slice(offset, offset + 40)
    .replace(/\s+/g, ' ')
    .trim();
  return near ? `query could not be parsed near '${near}'` : 'query could not be parsed: it ends too early';
}

/**
 * The parser upper-cases the aggregates it knows (sum → SUM); ClickHouse names an unaliased column
 * after the expression as written, so the name is put back as the caller spelled it.
 */
function keepFunctionCase(tree: unknown, text: string): void {
  const visit = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    if (Array.isArray(value)) return value.forEach(visit);
    const n = value as Node;
    if (n.type === 'aggr_func' && typeof n.name === 'string') {
      const offset = (n.loc as { start?: { offset?: number } } | undefined)?.start?.offset;
      const written = typeof offset === 'number' ? /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(offset))?.[0] : undefined;
      if (written && written.toUpperCase() === n.name.toUpperCase()) n.name = written;
    }
    for (const key of Object.keys(n)) if (key !== 'loc') visit(n[key]);
  };
  visit(tree);
}
