import NodeSqlParser from 'node-sql-parser';
import { CONTRACT_TABLES, scopedTable, type ContractTable } from './contract.js';
import { isAllowedFunction, PARAMETRIC_AGGREGATES } from './functions.js';
import { lex, restoreParametric, SqlRefused, PARAMETRIC_PREFIX, type Parametric } from './lexer.js';

/**
 * The public SQL guard (DESIGN.md decision 5), pure: caller SQL in, ClickHouse SQL out, or
 * SqlRefused with a detail naming the construct.
 *
 * 1. lexer.ts removes what the two dialects could read differently.
 * 2. node-sql-parser (PostgreSQL grammar) parses exactly one SELECT; every node of the tree is
 *    checked against what is known to be safe, and anything else is refused, so a construct the
 *    parser misread is refused rather than passed through.
 * 3. Each reference to a contract table becomes a placeholder; the tree is printed, parsed again and
 *    compared with itself (the printed text must mean the same tree), then each placeholder becomes
 *    the table's project-scoped subquery. No predicate, join, union, alias or CTE of the caller can
 *    widen a scope that lives inside a subquery it can't reach.
 */

const parser = new NodeSqlParser.Parser();
const DIALECT = { database: 'postgresql' };
const PARSE = { database: 'postgresql', parseOptions: { includeLocations: true } };

export const RESULT_ROW_LIMIT = 10_000;
const TABLE_PLACEHOLDER = '__sl_t_';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Words that must never be an alias: ClickHouse would read them as clauses the parser skipped. */
const RESERVED = new Set(
  ('final array cross sample prewhere settings format global any all asof semi anti limit offset union join left right full inner outer ' +
    'on using where group order having with totals into outfile local paste window qualify by as from select except intersect natural ' +
    'interval case when then else end and or not in is null like ilike between distinct over partition rows range preceding following ' +
    'current unbounded recursive lateral values table database system').split(' '),
);

const BINARY_OPERATORS = new Set([
  '=', '!=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/', '%', '||', 'AND', 'OR', 'LIKE', 'NOT LIKE', 'ILIKE', 'NOT ILIKE',
  'IN', 'NOT IN', 'BETWEEN', 'NOT BETWEEN', 'IS', 'IS NOT',
]);
const UNARY_OPERATORS = new Set(['-', '+', 'NOT']);
const JOINS = new Set(['JOIN', 'INNER JOIN', 'LEFT JOIN', 'RIGHT JOIN', 'FULL JOIN', 'LEFT OUTER JOIN', 'RIGHT OUTER JOIN', 'FULL OUTER JOIN', 'CROSS JOIN']);
const SET_OPS = new Set(['union', 'union all', 'union distinct', 'intersect', 'except']);
const INTERVAL_UNITS = new Set(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year', 'millisecond']);
const SELECT_KEYS = new Set(['loc', 'type', 'options', 'distinct', 'columns', 'into', 'from', 'where', 'groupby', 'having', 'orderby', 'limit', 'window', 'with', '_next', 'set_op', '_parentheses', 'collate', 'qualify']);

type Node = Record<string, unknown>;
type Scope = { ctes: Set<string>; tables: Set<string>; parent: Scope | null };
/** 'check' replaces contract tables by placeholders; 'verify' re-checks the printed text, where only those placeholders may appear. */
type Rewrite = { placeholders: Map<string, ContractTable>; mode: 'check' | 'verify' };

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

export function guardUncached(input: string, db: string): GuardedQuery {
  try {
    return guard(input, db);
  } catch (error) {
    // Anything the checks did not foresee (a tree shape they don't know) is a refusal, never a 500.
    if (error instanceof SqlRefused) throw error;
    throw new SqlRefused('query uses a construct the SQL guard does not support');
  }
}

/** Statements (SELECTs, unions, CTEs, subqueries) one query may hold. */
export const MAX_SELECTS = 64;

function guard(input: string, db: string): GuardedQuery {
  const { text, parametric } = lex(input);
  if (text.trim() === '') throw new SqlRefused('query is empty');
  if ((text.match(/\bselect\b/gi) ?? []).length > MAX_SELECTS) throw new SqlRefused(`at most ${MAX_SELECTS} SELECTs per query`);
  let ast: unknown;
  try {
    ast = parser.astify(text, PARSE);
  } catch (error) {
    throw new SqlRefused(parseFailure(error, text));
  }
  keepFunctionCase(ast, text);
  if (Array.isArray(ast)) {
    if (ast.length !== 1) throw new SqlRefused('only one statement is allowed');
    ast = ast[0];
  }
  const root = node(ast, 'statement');
  if (root.type !== 'select') throw new SqlRefused(`only SELECT is allowed, not ${String(root.type).toUpperCase()}`);
  const rewrite: Rewrite = { placeholders: new Map(), mode: 'check' };
  checkSelect(root, { ctes: new Set(), tables: new Set(), parent: null }, rewrite, parametric);

  // The printed text is what runs, so it is parsed and checked again, and must print back to
  // itself: a misreading of the printer or the parser can't slip through between the two.
  const printed = parser.sqlify(root as never, DIALECT);
  let reparsed: unknown;
  try {
    reparsed = parser.astify(printed, PARSE);
  } catch {
    throw new SqlRefused('query could not be verified');
  }
  keepFunctionCase(reparsed, printed);
  if (Array.isArray(reparsed)) reparsed = reparsed.length === 1 ? reparsed[0] : null;
  const verify: Rewrite = { placeholders: rewrite.placeholders, mode: 'verify' };
  const again = node(reparsed, 'statement');
  if (again.type !== 'select') throw new SqlRefused('query could not be verified');
  checkSelect(again, { ctes: new Set(), tables: new Set(), parent: null }, verify, parametric);
  if (parser.sqlify(again as never, DIALECT) !== printed) throw new SqlRefused('query could not be verified');

  let sql = restoreParametric(printed, parametric);
  for (const [placeholder, table] of rewrite.placeholders) {
    const quoted = `"${placeholder}"`;
    if (sql.split(quoted).length !== 2) throw new SqlRefused('query could not be verified');
    sql = sql.replace(quoted, scopedTable(table, db));
  }
  if (/__sl_(t|pa)_/.test(sql)) throw new SqlRefused('query could not be verified');
  return { sql, tables: [...new Set([...rewrite.placeholders.values()].map((t) => t.name))] };
}

/** Where the parser stopped, shown as the text there (its own message lists every token it expected). */
function parseFailure(error: unknown, text: string): string {
  const offset = (error as { location?: { start?: { offset?: number } } }).location?.start?.offset;
  if (typeof offset !== 'number') return 'query could not be parsed';
  const near = text.slice(offset, offset + 40).replace(/\s+/g, ' ').trim();
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

function node(value: unknown, what: string): Node {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new SqlRefused(`unsupported ${what}`);
  return value as Node;
}

function identifier(name: unknown, what: string): string {
  const text = typeof name === 'string' ? name : nameValue(name);
  if (text === null || !IDENTIFIER.test(text)) throw new SqlRefused(`${what} ${JSON.stringify(text)} is not a plain identifier`);
  if (text.toLowerCase().startsWith('__sl')) throw new SqlRefused(`${what} ${text} is reserved`);
  return text;
}

function alias(name: unknown, what: string): void {
  if (name === undefined || name === null) return;
  const text = identifier(name, what);
  if (RESERVED.has(text.toLowerCase())) throw new SqlRefused(`${what} ${text} is a reserved word`);
}

function nameValue(name: unknown): string | null {
  if (name && typeof name === 'object' && 'value' in name && typeof (name as Node).value === 'string') return (name as Node).value as string;
  return null;
}

function present(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.values(value as Node).some(present);
  return value !== '' && value !== false;
}

function checkSelect(select: Node, outer: Scope, rewrite: Rewrite, parametric: Parametric[]): void {
  for (const key of Object.keys(select)) {
    if (!SELECT_KEYS.has(key) && present(select[key])) throw new SqlRefused(`unsupported clause: ${key}`);
  }
  if (present(select.into)) throw new SqlRefused('INTO is not allowed');
  if (present(select.options)) throw new SqlRefused('SELECT options are not allowed');
  if (present(select.collate)) throw new SqlRefused('COLLATE is not allowed');
  if (present(select.qualify)) throw new SqlRefused('QUALIFY is not allowed');
  const scope: Scope = { ctes: new Set(), tables: new Set(), parent: outer };

  if (present(select.with)) {
    for (const cteRaw of select.with as unknown[]) {
      const cte = node(cteRaw, 'WITH clause');
      if (cte.recursive) throw new SqlRefused('recursive CTEs are not allowed');
      if (present(cte.columns)) throw new SqlRefused('CTE column lists are not allowed');
      const name = identifier(cte.name, 'CTE name');
      if (CONTRACT_TABLES.has(name.toLowerCase())) throw new SqlRefused(`a CTE may not be named like the table ${name}`);
      const stmt = node(cte.stmt, 'CTE');
      checkSelect(node((stmt.ast as unknown) ?? stmt, 'CTE'), scope, rewrite, parametric);
      scope.ctes.add(name);
    }
  }
  if (present(select.from)) checkFrom(select.from as unknown[], scope, rewrite, parametric);
  const expr = (e: unknown) => checkExpr(e, scope, rewrite, parametric);

  for (const columnRaw of (select.columns as unknown[]) ?? []) {
    const column = node(columnRaw, 'column');
    alias(column.as, 'column alias');
    expr(column.expr);
  }
  if (present(select.where)) expr(select.where);
  if (present(select.groupby)) {
    const groupby = node(select.groupby, 'GROUP BY');
    if (present(groupby.modifiers)) throw new SqlRefused('GROUP BY modifiers are not allowed');
    for (const g of (groupby.columns as unknown[]) ?? []) expr(g);
  }
  if (present(select.having)) expr(select.having);
  for (const o of (select.orderby as unknown[]) ?? []) checkOrderItem(o, expr);
  if (present(select.limit)) {
    const limit = node(select.limit, 'LIMIT');
    for (const v of (limit.value as unknown[]) ?? []) {
      const n = node(v, 'LIMIT');
      if (n.type !== 'number') throw new SqlRefused('LIMIT and OFFSET take numbers');
    }
  }
  if (present(select.window)) {
    for (const w of (select.window as unknown[]) ?? []) {
      const win = node(w, 'WINDOW');
      alias(win.name, 'window name');
      checkWindowSpec(win.as_window_specification, expr);
    }
  }
  if (present(select.distinct)) {
    const distinct = node(select.distinct, 'DISTINCT');
    if (distinct.type !== 'DISTINCT' || present(distinct.columns)) throw new SqlRefused('DISTINCT ON is not allowed');
  }
  if (present(select._next)) {
    const op = String(select.set_op ?? '').toLowerCase();
    if (!SET_OPS.has(op)) throw new SqlRefused(`set operation ${op || '?'} is not allowed`);
    // The next branch sees this statement's CTEs but not its tables.
    checkSelect(node(select._next, 'UNION'), { ctes: scope.ctes, tables: new Set(), parent: outer }, rewrite, parametric);
  }
}

function checkOrderItem(raw: unknown, expr: (e: unknown) => void): void {
  const item = node(raw, 'ORDER BY');
  if (item.type != null && item.type !== 'ASC' && item.type !== 'DESC') throw new SqlRefused('unsupported ORDER BY');
  if (present(item.nulls) && !/^NULLS (FIRST|LAST)$/i.test(String(item.nulls))) throw new SqlRefused('unsupported ORDER BY NULLS');
  expr(item.expr);
}

function checkWindowSpec(raw: unknown, expr: (e: unknown) => void): void {
  if (typeof raw === 'string') {
    identifier(raw, 'window name');
    return;
  }
  const spec = node(raw, 'window');
  const inner = node(spec.window_specification ?? spec, 'window');
  if (present(inner.name)) identifier(inner.name, 'window name');
  for (const p of (inner.partitionby as unknown[]) ?? []) expr(node(p, 'PARTITION BY').expr ?? p);
  for (const o of (inner.orderby as unknown[]) ?? []) checkOrderItem(o, expr);
  if (present(inner.window_frame_clause)) {
    const frame = JSON.stringify(inner.window_frame_clause);
    if (!/^[\w\s"{}:,[\].-]*$/.test(frame) || /"type":"(?!number|default|expr|rows|range|bigint|window_frame)/i.test(frame)) {
      // Frames are plain keywords and numbers; anything richer is refused.
      throw new SqlRefused('unsupported window frame');
    }
  }
}

function checkFrom(items: unknown[], scope: Scope, rewrite: Rewrite, parametric: Parametric[]): void {
  // Tables first, so ON conditions and column qualifiers can name any of them.
  for (const raw of items) {
    const item = node(raw, 'FROM item');
    if (item.type === 'expr' || item.type === 'dual' || present(item.lateral)) {
      throw new SqlRefused(item.type === 'expr' ? 'table functions are not allowed' : 'unsupported FROM item');
    }
    if (present(item.join) && !JOINS.has(String(item.join).toUpperCase())) throw new SqlRefused(`${String(item.join)} is not allowed`);
    if (present(item.db) || present(item.schema) || present(item.server) || present(item.catalog)) {
      throw new SqlRefused(`tables outside the SQL schema are not allowed: ${[item.db ?? item.schema, item.table].filter(Boolean).join('.')}`);
    }
    alias(item.as, 'table alias');
    if (present(item.table)) {
      if (item.expr) throw new SqlRefused('unsupported FROM item');
      if (rewrite.mode === 'verify' && rewrite.placeholders.has(String(item.table))) {
        scope.tables.add(String(item.as ?? item.table));
        continue;
      }
      const name = identifier(item.table, 'table');
      if (visibleCte(scope, name)) {
        scope.tables.add(String(item.as ?? name));
        continue;
      }
      const table = rewrite.mode === 'check' ? CONTRACT_TABLES.get(name) : undefined;
      if (!table) throw new SqlRefused(`unknown table ${name}; the tables are ${[...CONTRACT_TABLES.keys()].join(', ')}`);
      const placeholder = `${TABLE_PLACEHOLDER}${rewrite.placeholders.size}`;
      rewrite.placeholders.set(placeholder, table);
      item.table = placeholder;
      item.as = item.as ?? name;
      scope.tables.add(String(item.as));
    } else if (item.expr) {
      const sub = node(item.expr, 'subquery');
      if (!sub.ast) throw new SqlRefused('unsupported FROM item');
      checkSelect(node(sub.ast, 'subquery'), scope, rewrite, parametric);
      if (present(item.as)) scope.tables.add(String(item.as));
    } else {
      throw new SqlRefused('unsupported FROM item');
    }
  }
  for (const raw of items) {
    const item = raw as Node;
    if (present(item.on)) checkExpr(item.on, scope, rewrite, parametric);
    if (present(item.using)) for (const u of item.using as unknown[]) identifier(u, 'USING column');
  }
}

function visibleCte(scope: Scope | null, name: string): boolean {
  for (let s = scope; s; s = s.parent) if (s.ctes.has(name)) return true;
  return false;
}

function visibleTable(scope: Scope | null, name: string): boolean {
  for (let s = scope; s; s = s.parent) if (s.tables.has(name)) return true;
  return false;
}

function checkExpr(raw: unknown, scope: Scope, rewrite: Rewrite, parametric: Parametric[]): void {
  const e = node(raw, 'expression');
  const expr = (x: unknown) => checkExpr(x, scope, rewrite, parametric);
  if (e.ast) {
    checkSelect(node(e.ast, 'subquery'), scope, rewrite, parametric);
    return;
  }
  switch (e.type) {
    case 'number':
    case 'bigint':
    case 'bool':
    case 'null':
      return;
    case 'star':
      if (e.value !== '*') throw new SqlRefused('unsupported expression: star');
      return;
    case 'single_quote_string':
      if (typeof e.value !== 'string' || e.value.includes('__sl')) throw new SqlRefused('unsupported string literal');
      return;
    case 'column_ref':
      return checkColumnRef(e, scope, expr);
    case 'binary_expr': {
      const op = String(e.operator).toUpperCase();
      if (!BINARY_OPERATORS.has(op)) throw new SqlRefused(`operator ${String(e.operator)} is not allowed`);
      expr(e.left);
      const right = node(e.right, 'expression');
      if (op === 'IN' || op === 'NOT IN') {
        // ClickHouse reads `x IN name`, `x IN (name)` and `x IN (db.name)` as a table: IN takes a list
        // of values or a subquery, never a bare name.
        const items = right.type === 'expr_list' ? ((right.value as unknown[]) ?? []) : null;
        if (!items || items.some((item) => (item as Node)?.type === 'column_ref')) {
          throw new SqlRefused('IN must be followed by a list of values or a subquery, not a name');
        }
      }
      expr(right);
      return;
    }
    case 'unary_expr':
      if (!UNARY_OPERATORS.has(String(e.operator).toUpperCase())) throw new SqlRefused(`operator ${String(e.operator)} is not allowed`);
      return expr(e.expr);
    case 'expr_list':
      for (const v of (e.value as unknown[]) ?? []) expr(v);
      return;
    case 'case':
      if (present(e.expr)) expr(e.expr);
      for (const arm of (e.args as unknown[]) ?? []) {
        const a = node(arm, 'CASE');
        if (a.type !== 'when' && a.type !== 'else') throw new SqlRefused('unsupported CASE');
        if (a.type === 'when') expr(a.cond);
        expr(a.result);
      }
      return;
    case 'interval':
      if (!INTERVAL_UNITS.has(String(e.unit ?? '').toLowerCase())) {
        throw new SqlRefused(e.unit ? `interval unit ${String(e.unit)} is not allowed` : 'write intervals as INTERVAL 1 DAY (a number and a unit)');
      }
      return expr(e.expr);
    case 'function':
      return checkFunction(e, expr, parametric);
    case 'aggr_func': {
      const name = String(e.name);
      if (typeof e.name !== 'string' || !isAllowedFunction(name)) throw new SqlRefused(`function ${name} is not allowed`);
      const args = node(e.args ?? {}, 'aggregate arguments');
      if (present(args.orderby) || present(args.separator)) throw new SqlRefused(`unsupported arguments of ${name}`);
      if (args.expr !== undefined) expr(args.expr);
      if (present(e.over)) checkOver(e.over, expr);
      if (present(e.filter)) throw new SqlRefused('FILTER clauses are not allowed; use the -If combinators (countIf, sumIf)');
      return;
    }
    case 'window_func': {
      const name = String(e.name);
      if (typeof e.name !== 'string' || !isAllowedFunction(name)) throw new SqlRefused(`function ${name} is not allowed`);
      if (present(e.args)) {
        const args = node(e.args, 'arguments');
        for (const v of (args.value as unknown[]) ?? [args.expr]) if (v !== undefined) expr(v);
      }
      if (present(e.consider_nulls)) throw new SqlRefused(`unsupported use of ${name}`);
      return checkOver(e.over, expr);
    }
    case 'cast':
      throw new SqlRefused('CAST is not allowed; use conversion functions such as toFloat64(x) or toString(x)');
    default:
      throw new SqlRefused(`unsupported expression: ${String(e.type ?? 'unknown')}`);
  }
}

function checkColumnRef(e: Node, scope: Scope, expr: (x: unknown) => void): void {
  if (present(e.schema) || present(e.db)) throw new SqlRefused('qualified names outside the query are not allowed');
  if (present(e.table)) {
    const table = identifier(e.table, 'table');
    if (!visibleTable(scope, table)) throw new SqlRefused(`unknown table ${table} in column reference`);
  }
  if (e.column !== '*') {
    const column = node(e.column, 'column');
    const inner = node(column.expr, 'column');
    if (inner.type !== 'default' && inner.type !== 'double_quote_string') throw new SqlRefused('unsupported column reference');
    const name = identifier(inner.value, 'column');
    // Virtual columns (_table, _part, _database, ...) describe the physical tables.
    if (name.startsWith('_')) throw new SqlRefused(`column ${name} is not part of the SQL schema`);
  }
  for (const index of (e.array_index as unknown[]) ?? []) {
    const i = node(index, 'element access');
    if (!i.brackets) throw new SqlRefused('unsupported element access');
    expr(i.index);
  }
  for (const key of Object.keys(e)) {
    if (!['loc', 'type', 'table', 'column', 'array_index', 'schema', 'db', 'collate', 'options', 'order_by', 'parentheses'].includes(key) && present(e[key])) {
      throw new SqlRefused(`unsupported column reference (${key})`);
    }
  }
}

function checkFunction(e: Node, expr: (x: unknown) => void, parametric: Parametric[]): void {
  const parts = (node(e.name, 'function').name as unknown[]) ?? [];
  if (parts.length !== 1) throw new SqlRefused('qualified function names are not allowed');
  const name = identifierOrPlaceholder(nameValue(parts[0]));
  if (name.startsWith(PARAMETRIC_PREFIX)) {
    const p = parametric[Number(name.slice(PARAMETRIC_PREFIX.length))];
    if (!p || !PARAMETRIC_AGGREGATES.has(p.name.toLowerCase())) throw new SqlRefused(`function ${p?.name ?? name} does not take parameters`);
  } else if (!isAllowedFunction(name)) {
    throw new SqlRefused(`function ${name} is not allowed`);
  }
  const args = e.args ? node(e.args, 'arguments') : null;
  if (args) {
    if (args.type !== 'expr_list') throw new SqlRefused(`unsupported arguments of ${name}`);
    for (const v of (args.value as unknown[]) ?? []) expr(v);
  }
  if (present(e.over)) checkOver(e.over, expr);
  for (const key of Object.keys(e)) {
    if (!['loc', 'type', 'name', 'args', 'over', 'suffix', 'args_parentheses'].includes(key) && present(e[key])) {
      throw new SqlRefused(`unsupported use of function ${name}`);
    }
  }
}

function identifierOrPlaceholder(value: string | null): string {
  if (value !== null && new RegExp(`^${PARAMETRIC_PREFIX}\\d+$`).test(value)) return value;
  return identifier(value, 'function');
}

function checkOver(raw: unknown, expr: (x: unknown) => void): void {
  const over = node(raw, 'OVER');
  if (over.type !== 'window') throw new SqlRefused('unsupported OVER');
  checkWindowSpec(over.as_window_specification, expr);
}
