import { SqlRefused } from './lexer.js';
import type { Node } from './node-shapes.js';

/**
 * Per-row cost rules of the guard (issue 20), checked on every function call and LIKE after the
 * node's shape (check-tree.ts). The engine checks its time limit and honours KILL QUERY only between
 * blocks of rows (deadline.ts), so the work one block holds must stay bounded by the block's bytes.
 * Measured on chdb 3.4, three rows each:
 *
 * - string distances cost the product of their inputs' lengths: editDistance over 20,000-character
 *   strings took ~1 s a row; they are refused (ngramDistance, linear, is the alternative);
 * - a substring search whose needle is computed per row costs haystack × needle: position, replaceAll,
 *   countSubstrings, multiSearchAny of a 10,000-character needle in a 1 MB string took 3-5 s a row,
 *   a computed LIKE pattern of 3,000 `%a` never finished, a computed ILIKE pattern took 5 s a row.
 *   With a literal needle the engine builds its searcher once: the same searches took ~10 ms. So
 *   needles and patterns must be string literals;
 * - amplifiers (repeat, the pads, arrayResize, toFixedString, arrayShingles) take a number literal
 *   no larger than their cap as the size they make, so a query's text shows how much it makes.
 *   The caps match the engine's own for repeat (1,000,000 times); the memory limit (1 GB) stops the
 *   product of two amplifiers at once.
 *
 * Regular expressions (match, extract, replaceRegexp*) run on RE2, linear in the haystack, and stay.
 */

const QUADRATIC = new Set([
  'editdistance',
  'editdistanceutf8',
  'levenshteindistance',
  'levenshteindistanceutf8',
  'dameraulevenshteindistance',
  'jarosimilarity',
  'jarowinklersimilarity',
  'stringjaccardindex',
  'stringjaccardindexutf8',
]);

/** Functions whose needle (argument 1, after the haystack) must be a string literal. */
const LITERAL_NEEDLE = new Set([
  'position',
  'positioncaseinsensitive',
  'positionutf8',
  'positioncaseinsensitiveutf8',
  'countsubstrings',
  'countsubstringscaseinsensitive',
  'replace',
  'replaceall',
  'replaceone',
  'like',
  'notlike',
  'ilike',
  'notilike',
]);

/**
 * Functions whose needles (argument 1) must be an array(...) of string literals: the whole
 * multiSearch family, its UTF8 and case-insensitive forms included (`multiSearchAnyCaseInsensitiveUTF8`
 * is the SQL form of text search, docs/sql.md), so a form added to the allowlist is covered unnamed.
 */
const isLiteralNeedles = (key: string): boolean => key.startsWith('multisearch');

/** Size arguments (argument 1) of the amplifiers, and their caps. */
export const AMPLIFIER_CAPS: Readonly<Record<string, number>> = {
  repeat: 1_000_000,
  leftpad: 1_000_000,
  rightpad: 1_000_000,
  lpad: 1_000_000,
  rpad: 1_000_000,
  arrayresize: 1_000_000,
  tofixedstring: 1_000_000,
  arrayshingles: 1_000,
};

const isString = (n: unknown): boolean => !!n && typeof n === 'object' && (n as Node).type === 'single_quote_string';

function integerLiteral(n: unknown): number | null {
  if (!n || typeof n !== 'object') return null;
  const { type, value } = n as Node;
  if (type !== 'number' && type !== 'bigint') return null;
  const v = Number(value);
  return Number.isFinite(v) && Number.isInteger(v) ? v : null;
}

/** Refuses a call whose per-row cost has no bound the query's text shows. `name` as written. */
export function checkCallCost(name: string, args: readonly unknown[]): void {
  const key = name.toLowerCase();
  if (QUADRATIC.has(key)) {
    throw new SqlRefused(
      `function ${name} is not allowed: its cost grows with the product of its inputs' lengths; use ngramDistance`,
    );
  }
  if (key === 'locate') throw new SqlRefused("function locate is not allowed; use position(haystack, 'needle')");
  if (LITERAL_NEEDLE.has(key) && args.length >= 2 && !isString(args[1])) {
    throw new SqlRefused(
      `the second argument of ${name} must be a string literal: a needle computed per row costs the product of both lengths`,
    );
  }
  if (isLiteralNeedles(key)) {
    const needles = args[1] as Node | undefined;
    const list =
      needles?.type === 'function' ? ((needles.args as Node | undefined)?.value as unknown[] | undefined) : undefined;
    const isArray = needles?.type === 'function' && functionName(needles)?.toLowerCase() === 'array';
    if (!isArray || !Array.isArray(list) || !list.every(isString)) {
      throw new SqlRefused(`the needles of ${name} must be array('…', '…') of string literals`);
    }
  }
  const cap = AMPLIFIER_CAPS[key];
  if (cap !== undefined && args.length >= 2) {
    const size = integerLiteral(args[1]);
    if (size === null || size > cap) {
      throw new SqlRefused(
        `the size argument of ${name} must be a whole number literal of at most ${cap.toLocaleString('en-US')}`,
      );
    }
  }
}

/** LIKE and ILIKE (and their negations) as operators: the pattern must be a string literal. */
export function checkPatternCost(operator: string, right: unknown): void {
  if (/^(NOT )?I?LIKE$/.test(operator) && !isString(right)) {
    throw new SqlRefused(
      `the pattern of ${operator} must be a string literal: a pattern computed per row costs the product of both lengths`,
    );
  }
}

function functionName(n: Node): string | undefined {
  const parts = (n.name as Node | undefined)?.name;
  if (!Array.isArray(parts) || parts.length !== 1) return undefined;
  const value = (parts[0] as Node | undefined)?.value;
  return typeof value === 'string' ? value : undefined;
}
