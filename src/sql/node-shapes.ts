import { SqlRefused } from './lexer.js';

/**
 * The exhaustive allowlist of the parser's output (issue: fail closed). For every kind of node the
 * guard walks, each property the parser may put there is listed with what the guard does with it:
 *
 * - `check`: the guard inspects the value (and walks it when it is a node);
 * - `empty`: a clause the guard does not support; the value must be absent, null, false or empty;
 * - `meta`:  bookkeeping: source locations and parser-computed table and column lists, which the
 *            printer never writes, and parenthesis flags, which can only add parentheses (and must
 *            be booleans); the re-parse of the printed text checks the grouping they give.
 *
 * A property that is not listed refuses the query, whatever its value: a parser field the guard has
 * never seen (TABLESAMPLE once came through as `tablesample` on a FROM item, printed back and run)
 * is a refusal, never a pass-through. test/sql/node-shapes.test.ts walks the parser's output for the
 * analyst corpus and checks every node reached through a `check` property was shaped here.
 */

type Rule = 'check' | 'empty' | 'meta';
type Shape = Readonly<Record<string, Rule>>;

const meta = { loc: 'meta' } as const;
/** Expressions of every kind may carry a location and a parenthesis flag. */
const exprMeta = { loc: 'meta', parentheses: 'meta' } as const;

export const NODE_SHAPES = {
  select: {
    ...meta,
    type: 'check',
    with: 'check',
    distinct: 'check',
    columns: 'check',
    from: 'check',
    where: 'check',
    groupby: 'check',
    parentheses_symbol: 'meta',
    having: 'check',
    orderby: 'check',
    limit: 'check',
    window: 'check',
    _next: 'check',
    set_op: 'check',
    _parentheses: 'meta',
    options: 'empty',
    into: 'empty',
    collate: 'empty',
    qualify: 'empty',
  },
  /** A subquery in FROM, IN, EXISTS, a scalar position, a CTE or a UNION branch. */
  subquery: { ast: 'check', parentheses: 'meta', tableList: 'meta', columnList: 'meta', ...meta },
  cte: { name: 'check', stmt: 'check', columns: 'empty', recursive: 'empty', ...meta },
  /** `{type: 'default', value}`: a name (CTE, USING column, column inside a column_ref, function part). */
  name: { type: 'check', value: 'check', ...meta },
  distinct: { type: 'check', columns: 'empty', ...meta },
  column: { type: 'check', expr: 'check', as: 'check', ...meta },
  fromTable: {
    db: 'empty',
    schema: 'empty',
    server: 'empty',
    catalog: 'empty',
    prefix: 'empty',
    table: 'check',
    as: 'check',
    join: 'check',
    on: 'check',
    using: 'check',
    ...meta,
  },
  fromSubquery: {
    db: 'empty',
    schema: 'empty',
    prefix: 'empty',
    expr: 'check',
    as: 'check',
    join: 'check',
    on: 'check',
    using: 'check',
    ...meta,
  },
  groupby: { columns: 'check', modifiers: 'empty', ...meta },
  orderItem: { expr: 'check', type: 'check', nulls: 'check', ...meta },
  limit: { seperator: 'check', value: 'check', ...meta },
  namedWindow: { name: 'check', as_window_specification: 'check', ...meta },
  windowSpecWrapper: { window_specification: 'check', parentheses: 'meta', ...meta },
  windowSpec: { name: 'check', partitionby: 'check', orderby: 'check', window_frame_clause: 'check', ...meta },
  partitionItem: { type: 'check', expr: 'check', ...meta },
  over: { type: 'check', as_window_specification: 'check', ...meta },
  frame: { type: 'check', expr: 'check', operator: 'check', left: 'check', right: 'check', ...exprMeta },
  frameBound: { type: 'check', value: 'check', ...exprMeta },

  literal: { type: 'check', value: 'check', ...exprMeta },
  star: { type: 'check', value: 'check', ...exprMeta },
  columnRef: {
    type: 'check',
    table: 'check',
    column: 'check',
    array_index: 'check',
    db: 'empty',
    schema: 'empty',
    collate: 'empty',
    options: 'empty',
    order_by: 'empty',
    ...exprMeta,
  },
  columnName: { expr: 'check', ...meta },
  elementAccess: { brackets: 'check', index: 'check', ...meta },
  binary: { type: 'check', operator: 'check', left: 'check', right: 'check', ...exprMeta },
  unary: { type: 'check', operator: 'check', expr: 'check', ...exprMeta },
  exprList: { type: 'check', value: 'check', separator: 'empty', ...exprMeta },
  case: { type: 'check', expr: 'check', args: 'check', ...exprMeta },
  caseArm: { type: 'check', cond: 'check', result: 'check', ...meta },
  interval: { type: 'check', expr: 'check', unit: 'check', ...exprMeta },
  function: {
    type: 'check',
    name: 'check',
    args: 'check',
    over: 'check',
    suffix: 'empty',
    args_parentheses: 'meta',
    ...exprMeta,
  },
  functionName: { name: 'check', schema: 'empty', ...meta },
  aggregate: {
    type: 'check',
    name: 'check',
    args: 'check',
    over: 'check',
    filter: 'empty',
    within_group: 'empty',
    ...exprMeta,
  },
  aggregateArgs: {
    expr: 'check',
    distinct: 'check',
    orderby: 'empty',
    separator: 'empty',
    parentheses: 'meta',
    ...meta,
  },
  windowFunction: { type: 'check', name: 'check', args: 'check', over: 'check', consider_nulls: 'empty', ...exprMeta },
} as const satisfies Record<string, Shape>;

export type NodeKind = keyof typeof NODE_SHAPES;
export type Node = Record<string, unknown>;

/** Every node the guard shaped, and as what (tests read it; see ShapeAudit in guard.ts). */
export type ShapeAudit = Map<object, NodeKind>;

/** True when a value carries anything: a non-empty string, true, a number, a non-empty array or object. */
export function present(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.values(value as Node).some(present);
  return value !== '' && value !== false;
}

/** What a caller reads when a clause the guard does not support is there. */
const EMPTY_DETAIL: Record<string, string> = {
  into: 'INTO is not allowed',
  options: 'SELECT options are not allowed',
  collate: 'COLLATE is not allowed',
  qualify: 'QUALIFY is not allowed',
  recursive: 'recursive CTEs are not allowed',
  columns: 'column lists are not allowed here',
  modifiers: 'GROUP BY modifiers are not allowed',
  filter: 'FILTER clauses are not allowed; use the -If combinators (countIf, sumIf)',
  within_group: 'WITHIN GROUP is not allowed; use quantile(0.5)(x)',
  orderby: 'ORDER BY inside an aggregate is not allowed',
  separator: 'unsupported aggregate arguments',
  db: 'names outside the SQL schema are not allowed',
  schema: 'names outside the SQL schema are not allowed',
  server: 'names outside the SQL schema are not allowed',
  catalog: 'names outside the SQL schema are not allowed',
  consider_nulls: 'IGNORE/RESPECT NULLS is not supported',
};

const LABELS: Partial<Record<NodeKind, string>> = {
  select: 'SELECT',
  fromTable: 'FROM item',
  fromSubquery: 'FROM item',
  columnRef: 'column reference',
  function: 'function call',
  aggregate: 'aggregate',
  windowFunction: 'window function',
  binary: 'expression',
  unary: 'expression',
  exprList: 'list',
};

/**
 * The value as a node of `kind`: an object whose every property is listed for that kind, with its
 * `empty` properties empty. Refuses anything else.
 */
export function shape(value: unknown, kind: NodeKind, audit?: ShapeAudit): Node {
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new SqlRefused(`unsupported ${LABELS[kind] ?? kind}`);
  const rules: Shape = NODE_SHAPES[kind];
  const n = value as Node;
  for (const key of Object.keys(n)) {
    const rule = rules[key];
    if (rule === undefined)
      throw new SqlRefused(`unsupported ${LABELS[kind] ?? kind}: ${key.replace(/_/g, ' ').trim().toUpperCase()}`);
    if (rule === 'empty' && present(n[key]))
      throw new SqlRefused(EMPTY_DETAIL[key] ?? `${key.replace(/_/g, ' ').trim().toUpperCase()} is not allowed here`);
    if (rule === 'meta' && !metaValid(key, n[key])) throw new SqlRefused(`unsupported ${LABELS[kind] ?? kind}`);
  }
  audit?.set(n, kind);
  return n;
}

function metaValid(key: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (key === 'parentheses' || key === '_parentheses' || key === 'parentheses_symbol')
    return typeof value === 'boolean';
  if (key === 'tableList' || key === 'columnList')
    return Array.isArray(value) && value.every((v) => typeof v === 'string');
  return key === 'loc' && typeof value === 'object';
}
