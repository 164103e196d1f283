import { CONTRACT_TABLES, type ContractTable } from './contract.js';
import { checkCallCost, checkPatternCost } from './costs.js';
import { isAllowedFunction, PARAMETRIC_AGGREGATES } from './functions.js';
import { PARAMETRIC_PREFIX, SqlRefused, type Parametric } from './lexer.js';
import { present, shape, type Node, type NodeKind, type ShapeAudit } from './node-shapes.js';

/**
 * The guard's walk over node-sql-parser's tree (pure). Every node is taken through `shape`, which
 * refuses any property not listed for its kind (node-shapes.ts); the walk then checks every listed
 * property: tables resolve to the contract or a visible CTE, functions and operators are allowlisted,
 * names are plain. In 'check' mode each contract table becomes a placeholder the guard later swaps for
 * the project-scoped subquery; in 'verify' mode (the re-parse of the printed text) only those
 * placeholders may name a table.
 */

export const TABLE_PLACEHOLDER = '__sl_t_';
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMERIC = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/** Words that must never be an alias: ClickHouse would read them as clauses the parser skipped. */
const RESERVED = new Set(
  (
    'final array cross sample prewhere settings format global any all asof semi anti limit offset union join left right full inner outer ' +
    'on using where group order having with totals into outfile local paste window qualify by as from select except intersect natural ' +
    'interval case when then else end and or not in is null like ilike between distinct over partition rows range preceding following ' +
    'current unbounded recursive lateral values table database system tablesample repeatable only apply replace except columns'
  ).split(' '),
);

const BINARY_OPERATORS = new Set([
  '=',
  '!=',
  '<>',
  '<',
  '>',
  '<=',
  '>=',
  '+',
  '-',
  '*',
  '/',
  '%',
  '||',
  'AND',
  'OR',
  'LIKE',
  'NOT LIKE',
  'ILIKE',
  'NOT ILIKE',
  'IN',
  'NOT IN',
  'BETWEEN',
  'NOT BETWEEN',
  'IS',
  'IS NOT',
]);
const UNARY_OPERATORS = new Set(['-', '+', 'NOT']);
const JOINS = new Set([
  'JOIN',
  'INNER JOIN',
  'LEFT JOIN',
  'RIGHT JOIN',
  'FULL JOIN',
  'LEFT OUTER JOIN',
  'RIGHT OUTER JOIN',
  'FULL OUTER JOIN',
  'CROSS JOIN',
]);
const SET_OPS = new Set(['union', 'union all', 'union distinct', 'intersect', 'except']);
const INTERVAL_UNITS = new Set(['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year', 'millisecond']);
const LIMIT_SEPARATORS = new Set(['', 'offset', ',']);
const FRAME_ORIGINS = new Set(['current row', 'unbounded preceding', 'unbounded following']);

type Scope = { ctes: Set<string>; tables: Set<string>; parent: Scope | null };

export type Walk = {
  placeholders: Map<string, ContractTable>;
  mode: 'check' | 'verify';
  parametric: Parametric[];
  audit?: ShapeAudit;
};

export function checkStatement(root: unknown, walk: Walk): void {
  checkSelect(root, { ctes: new Set(), tables: new Set(), parent: null }, walk);
}

const node = (value: unknown, kind: NodeKind, walk: Walk) => shape(value, kind, walk.audit);
const list = (value: unknown, what: string): unknown[] => {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new SqlRefused(`unsupported ${what}`);
  return value;
};

function identifier(name: unknown, what: string, walk: Walk): string {
  const text = typeof name === 'string' ? name : plainName(name, walk);
  if (text === null || !IDENTIFIER.test(text))
    throw new SqlRefused(`${what} ${JSON.stringify(text)} is not a plain identifier`);
  if (text.toLowerCase().startsWith('__sl')) throw new SqlRefused(`${what} ${text} is reserved`);
  return text;
}

/** `{type: 'default' | 'double_quote_string', value}`, the parser's spelling of a name. */
function plainName(value: unknown, walk: Walk): string | null {
  if (!value || typeof value !== 'object') return null;
  const n = node(value, 'name', walk);
  if ((n.type !== 'default' && n.type !== 'double_quote_string') || typeof n.value !== 'string') return null;
  return n.value;
}

function alias(name: unknown, what: string, walk: Walk): void {
  if (name === undefined || name === null) return;
  const text = identifier(name, what, walk);
  if (RESERVED.has(text.toLowerCase())) throw new SqlRefused(`${what} ${text} is a reserved word`);
}

function checkSelect(raw: unknown, outer: Scope, walk: Walk): void {
  const type = raw && typeof raw === 'object' ? (raw as Node).type : undefined;
  if (type !== 'select')
    throw new SqlRefused(`only SELECT is allowed, not ${String(type ?? 'this statement').toUpperCase()}`);
  const select = node(raw, 'select', walk);
  const scope: Scope = { ctes: new Set(), tables: new Set(), parent: outer };

  for (const cteRaw of list(select.with, 'WITH clause')) {
    const cte = node(cteRaw, 'cte', walk);
    const name = identifier(cte.name, 'CTE name', walk);
    if (CONTRACT_TABLES.has(name.toLowerCase())) throw new SqlRefused(`a CTE may not be named like the table ${name}`);
    const stmt = cte.stmt as Node | null;
    checkSelect(stmt && 'ast' in stmt ? node(stmt, 'subquery', walk).ast : stmt, scope, walk);
    scope.ctes.add(name);
  }
  checkFrom(list(select.from, 'FROM'), scope, walk);
  const expr = (e: unknown) => checkExpr(e, scope, walk);

  for (const columnRaw of list(select.columns, 'column list')) {
    const column = node(columnRaw, 'column', walk);
    if (column.type !== undefined && column.type !== 'expr') throw new SqlRefused('unsupported column');
    alias(column.as, 'column alias', walk);
    expr(column.expr);
  }
  if (present(select.where)) expr(select.where);
  if (select.groupby != null) {
    const groupby = node(select.groupby, 'groupby', walk);
    for (const g of list(groupby.columns, 'GROUP BY')) expr(g);
  }
  if (present(select.having)) expr(select.having);
  for (const o of list(select.orderby, 'ORDER BY')) checkOrderItem(o, expr, walk);
  if (select.limit != null) {
    const limit = node(select.limit, 'limit', walk);
    if (!LIMIT_SEPARATORS.has(String(limit.seperator ?? ''))) throw new SqlRefused('unsupported LIMIT');
    for (const v of list(limit.value, 'LIMIT')) {
      const n = node(v, 'literal', walk);
      if (n.type !== 'number' || !numeric(n.value)) throw new SqlRefused('LIMIT and OFFSET take numbers');
    }
  }
  for (const w of list(select.window, 'WINDOW')) {
    const win = node(w, 'namedWindow', walk);
    alias(win.name, 'window name', walk);
    checkWindowSpec(win.as_window_specification, expr, walk);
  }
  if (select.distinct != null) {
    const distinct = node(select.distinct, 'distinct', walk);
    if (distinct.type !== null && distinct.type !== undefined && distinct.type !== 'DISTINCT')
      throw new SqlRefused('DISTINCT ON is not allowed');
  }
  if (select._next != null) {
    const op = String(select.set_op ?? '').toLowerCase();
    if (!SET_OPS.has(op)) throw new SqlRefused(`set operation ${op || '?'} is not allowed`);
    // The next branch sees this statement's CTEs but not its tables.
    checkSelect(select._next, { ctes: scope.ctes, tables: new Set(), parent: outer }, walk);
  } else if (present(select.set_op)) {
    throw new SqlRefused('unsupported set operation');
  }
}

function numeric(value: unknown): boolean {
  return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && NUMERIC.test(value));
}

function checkOrderItem(raw: unknown, expr: (e: unknown) => void, walk: Walk): void {
  const item = node(raw, 'orderItem', walk);
  if (item.type != null && item.type !== 'ASC' && item.type !== 'DESC') throw new SqlRefused('unsupported ORDER BY');
  if (item.nulls != null && !/^NULLS (FIRST|LAST)$/i.test(String(item.nulls)))
    throw new SqlRefused('unsupported ORDER BY NULLS');
  expr(item.expr);
}

function checkWindowSpec(raw: unknown, expr: (e: unknown) => void, walk: Walk): void {
  if (typeof raw === 'string') {
    identifier(raw, 'window name', walk);
    return;
  }
  const wrapper = node(raw, 'windowSpecWrapper', walk);
  const spec = node(wrapper.window_specification, 'windowSpec', walk);
  if (spec.name != null) identifier(spec.name, 'window name', walk);
  for (const p of list(spec.partitionby, 'PARTITION BY')) {
    const item = node(p, 'partitionItem', walk);
    if (item.type !== 'expr') throw new SqlRefused('unsupported PARTITION BY');
    expr(item.expr);
  }
  for (const o of list(spec.orderby, 'window ORDER BY')) checkOrderItem(o, expr, walk);
  if (spec.window_frame_clause != null) checkFrame(spec.window_frame_clause, walk);
}

/** Frames are keywords and row counts only: `ROWS 3 PRECEDING`, `ROWS BETWEEN x AND y`. */
function checkFrame(raw: unknown, walk: Walk): void {
  const frame = node(raw, 'frame', walk);
  const bound = (b: unknown) => {
    const n = node(b, 'frameBound', walk);
    const value = String(n.value).toLowerCase();
    if (
      n.type === 'origin' ? FRAME_ORIGINS.has(value) : n.type === 'number' && /^\d+ (preceding|following)$/.test(value)
    )
      return;
    throw new SqlRefused('unsupported window frame');
  };
  if ((frame.type === 'rows' || frame.type === 'range') && frame.operator === undefined) return bound(frame.expr);
  if (frame.type !== 'binary_expr' || frame.operator !== 'BETWEEN' || frame.expr !== undefined)
    throw new SqlRefused('unsupported window frame');
  const unit = node(frame.left, 'frameBound', walk);
  if (unit.type !== 'origin' || !['rows', 'range'].includes(String(unit.value).toLowerCase()))
    throw new SqlRefused('unsupported window frame');
  const bounds = node(frame.right, 'exprList', walk);
  const values = list(bounds.value, 'window frame');
  if (bounds.type !== 'expr_list' || values.length !== 2) throw new SqlRefused('unsupported window frame');
  values.forEach(bound);
}

function checkFrom(items: unknown[], scope: Scope, walk: Walk): void {
  const shaped: Node[] = [];
  // Tables first, so ON conditions and column qualifiers can name any of them.
  for (const raw of items) {
    const candidate = raw as Node | null;
    if (candidate && typeof candidate === 'object' && candidate.type === 'expr')
      throw new SqlRefused('table functions are not allowed');
    const isSubquery = !!candidate && typeof candidate === 'object' && 'expr' in candidate && !('table' in candidate);
    if (candidate && typeof candidate === 'object' && (present(candidate.db) || present(candidate.schema))) {
      throw new SqlRefused(
        `tables outside the SQL schema are not allowed: ${[candidate.db ?? candidate.schema, candidate.table].filter(Boolean).join('.')}`,
      );
    }
    const item = node(raw, isSubquery ? 'fromSubquery' : 'fromTable', walk);
    shaped.push(item);
    if (item.join != null && !JOINS.has(String(item.join).toUpperCase()))
      throw new SqlRefused(`${String(item.join)} is not allowed`);
    alias(item.as, 'table alias', walk);
    if (isSubquery) {
      const sub = node(item.expr, 'subquery', walk);
      checkSelect(sub.ast, scope, walk);
      if (item.as != null) scope.tables.add(String(item.as));
      continue;
    }
    if (typeof item.table !== 'string') throw new SqlRefused('unsupported FROM item');
    if (walk.mode === 'verify' && walk.placeholders.has(item.table)) {
      scope.tables.add(String(item.as ?? item.table));
      continue;
    }
    const name = identifier(item.table, 'table', walk);
    if (visibleCte(scope, name)) {
      scope.tables.add(String(item.as ?? name));
      continue;
    }
    const table = walk.mode === 'check' ? CONTRACT_TABLES.get(name) : undefined;
    if (!table) throw new SqlRefused(`unknown table ${name}; the tables are ${[...CONTRACT_TABLES.keys()].join(', ')}`);
    const placeholder = `${TABLE_PLACEHOLDER}${walk.placeholders.size}`;
    walk.placeholders.set(placeholder, table);
    item.table = placeholder;
    item.as = item.as ?? name;
    scope.tables.add(String(item.as));
  }
  for (const item of shaped) {
    if (item.on != null) checkExpr(item.on, scope, walk);
    for (const u of list(item.using, 'USING')) identifier(u, 'USING column', walk);
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

function checkExpr(raw: unknown, scope: Scope, walk: Walk): void {
  const candidate = raw as Node | null;
  const expr = (x: unknown) => checkExpr(x, scope, walk);
  if (candidate && typeof candidate === 'object' && 'ast' in candidate) {
    checkSelect(node(candidate, 'subquery', walk).ast, scope, walk);
    return;
  }
  const type = candidate && typeof candidate === 'object' ? candidate.type : undefined;
  switch (type) {
    case 'number':
    case 'bigint': {
      const e = node(raw, 'literal', walk);
      if (!numeric(e.value)) throw new SqlRefused('unsupported number');
      return;
    }
    case 'bool':
      if (typeof node(raw, 'literal', walk).value !== 'boolean') throw new SqlRefused('unsupported literal');
      return;
    case 'null':
      if (node(raw, 'literal', walk).value !== null) throw new SqlRefused('unsupported literal');
      return;
    case 'star':
      if (node(raw, 'star', walk).value !== '*') throw new SqlRefused('unsupported expression: star');
      return;
    case 'single_quote_string': {
      const e = node(raw, 'literal', walk);
      if (typeof e.value !== 'string' || e.value.includes('__sl')) throw new SqlRefused('unsupported string literal');
      return;
    }
    case 'column_ref':
      return checkColumnRef(node(raw, 'columnRef', walk), scope, expr, walk);
    case 'binary_expr': {
      const e = node(raw, 'binary', walk);
      const op = String(e.operator).toUpperCase();
      if (typeof e.operator !== 'string' || !BINARY_OPERATORS.has(op))
        throw new SqlRefused(`operator ${String(e.operator)} is not allowed`);
      expr(e.left);
      const right = e.right as Node | null;
      checkPatternCost(op, right);
      if (op === 'IN' || op === 'NOT IN') {
        // ClickHouse reads `x IN name`, `x IN (name)` and `x IN (db.name)` as a table: IN takes a list
        // of values or a subquery, never a bare name.
        const isList = !!right && typeof right === 'object' && right.type === 'expr_list' && Array.isArray(right.value);
        if (!isList || (right.value as Node[]).some((item) => item?.type === 'column_ref')) {
          throw new SqlRefused('IN must be followed by a list of values or a subquery, not a name');
        }
      }
      expr(right);
      return;
    }
    case 'unary_expr': {
      const e = node(raw, 'unary', walk);
      if (typeof e.operator !== 'string' || !UNARY_OPERATORS.has(e.operator.toUpperCase()))
        throw new SqlRefused(`operator ${String(e.operator)} is not allowed`);
      return expr(e.expr);
    }
    case 'expr_list':
      for (const v of list(node(raw, 'exprList', walk).value, 'list')) expr(v);
      return;
    case 'case': {
      const e = node(raw, 'case', walk);
      if (e.expr != null) expr(e.expr);
      for (const arm of list(e.args, 'CASE')) {
        const a = node(arm, 'caseArm', walk);
        if (a.type === 'when') expr(a.cond);
        else if (a.type !== 'else' || a.cond !== undefined) throw new SqlRefused('unsupported CASE');
        expr(a.result);
      }
      return;
    }
    case 'interval': {
      const e = node(raw, 'interval', walk);
      if (typeof e.unit !== 'string' || !INTERVAL_UNITS.has(e.unit.toLowerCase())) {
        throw new SqlRefused(
          e.unit
            ? `interval unit ${String(e.unit)} is not allowed`
            : 'write intervals as INTERVAL 1 DAY (a number and a unit)',
        );
      }
      return expr(e.expr);
    }
    case 'function':
      return checkFunction(node(raw, 'function', walk), expr, walk);
    case 'aggr_func':
      return checkAggregate(node(raw, 'aggregate', walk), expr, walk);
    case 'window_func': {
      const e = node(raw, 'windowFunction', walk);
      const name = String(e.name);
      if (typeof e.name !== 'string' || !isAllowedFunction(name))
        throw new SqlRefused(`function ${name} is not allowed`);
      if (e.args != null) {
        const args = e.args as Node;
        if (args && typeof args === 'object' && args.type === 'expr_list') expr(args);
        else checkAggregateArgs(args, name, expr, walk);
      }
      return checkOver(e.over, expr, walk);
    }
    case 'cast':
      throw new SqlRefused('CAST is not allowed; use conversion functions such as toFloat64(x) or toString(x)');
    default:
      throw new SqlRefused(`unsupported expression: ${String(type ?? 'unknown')}`);
  }
}

function checkColumnRef(e: Node, scope: Scope, expr: (x: unknown) => void, walk: Walk): void {
  if (e.table != null) {
    const table = identifier(e.table, 'table', walk);
    if (!visibleTable(scope, table)) throw new SqlRefused(`unknown table ${table} in column reference`);
  }
  if (e.column !== '*') {
    const column = node(e.column, 'columnName', walk);
    const name = identifier(column.expr, 'column', walk);
    // Virtual columns (_table, _part, _database, ...) describe the physical tables.
    if (name.startsWith('_')) throw new SqlRefused(`column ${name} is not part of the SQL schema`);
  }
  for (const index of list(e.array_index, 'element access')) {
    const i = node(index, 'elementAccess', walk);
    if (i.brackets !== true) throw new SqlRefused('unsupported element access');
    expr(i.index);
  }
}

function checkFunction(e: Node, expr: (x: unknown) => void, walk: Walk): void {
  const parts = list(node(e.name, 'functionName', walk).name, 'function name');
  if (parts.length !== 1) throw new SqlRefused('qualified function names are not allowed');
  const name = identifierOrPlaceholder(plainName(parts[0], walk), walk);
  if (name.startsWith(PARAMETRIC_PREFIX)) {
    const p = walk.parametric[Number(name.slice(PARAMETRIC_PREFIX.length))];
    if (!p || !PARAMETRIC_AGGREGATES.has(p.name.toLowerCase()))
      throw new SqlRefused(`function ${p?.name ?? name} does not take parameters`);
  } else if (!isAllowedFunction(name)) {
    checkCallCost(name, []);
    throw new SqlRefused(`function ${name} is not allowed`);
  }
  if (e.args != null) {
    const args = node(e.args, 'exprList', walk);
    if (args.type !== 'expr_list') throw new SqlRefused(`unsupported arguments of ${name}`);
    const values = list(args.value, 'arguments');
    if (!name.startsWith(PARAMETRIC_PREFIX)) checkCallCost(name, values);
    for (const v of values) expr(v);
  } else if (!name.startsWith(PARAMETRIC_PREFIX)) {
    checkCallCost(name, []);
  }
  if (e.over != null) checkOver(e.over, expr, walk);
}

function checkAggregate(e: Node, expr: (x: unknown) => void, walk: Walk): void {
  const name = String(e.name);
  if (typeof e.name !== 'string' || !isAllowedFunction(name)) throw new SqlRefused(`function ${name} is not allowed`);
  checkAggregateArgs(e.args ?? {}, name, expr, walk);
  if (e.over != null) checkOver(e.over, expr, walk);
}

function checkAggregateArgs(raw: unknown, name: string, expr: (x: unknown) => void, walk: Walk): void {
  const args = node(raw, 'aggregateArgs', walk);
  if (args.distinct != null && args.distinct !== 'DISTINCT') throw new SqlRefused(`unsupported arguments of ${name}`);
  if (args.expr !== undefined) expr(args.expr);
}

function identifierOrPlaceholder(value: string | null, walk: Walk): string {
  if (value !== null && new RegExp(`^${PARAMETRIC_PREFIX}\\d+$`).test(value)) return value;
  return identifier(value, 'function', walk);
}

function checkOver(raw: unknown, expr: (x: unknown) => void, walk: Walk): void {
  const over = node(raw, 'over', walk);
  if (over.type !== 'window') throw new SqlRefused('unsupported OVER');
  checkWindowSpec(over.as_window_specification, expr, walk);
}
