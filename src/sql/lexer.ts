/**
 * The guard's first pass over a caller's SQL text (pure). node-sql-parser reads PostgreSQL, the
 * query runs on ClickHouse; wherever the two lexers could read the same text differently, the text
 * is refused here rather than trusted:
 *
 * - comments are removed (a nested `/*` is refused: the two dialects disagree on nesting);
 * - backslashes are refused everywhere: ClickHouse reads `\'` inside a string as an escaped quote,
 *   PostgreSQL as the end of the string, which would let a "string" carry SQL past the parser;
 * - `#` (a ClickHouse comment), `$` (PostgreSQL dollar quoting), `{`/`}` (ClickHouse query
 *   parameters), `::` casts, `->` lambdas and non-ASCII characters outside string literals are refused;
 * - quoted identifiers may only hold plain identifier characters; backquotes become double quotes;
 * - a single trailing `;` is dropped, any other `;` is a second statement and refused;
 * - negative integers beyond 2^53 become `-(digits)`, which the parser keeps exact (`exactNegative`);
 * - `OVER ()` becomes `OVER (PARTITION BY tuple())`, the same window in a form the parser reads;
 * - `[1, 2]` array literals and `CAST(x AS T)` are refused with the spelling that works (array(...),
 *   toUInt32(x)): the parser can't read them;
 * - ClickHouse parametric aggregates, `quantile(0.99)(x)`, which PostgreSQL can't parse, become
 *   placeholder calls `__sl_pa_N(x)`; `restoreParametric` puts them back after the rewrite.
 */

export class SqlRefused extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

export type Parametric = { name: string; params: string };
export type Lexed = { text: string; parametric: Parametric[] };

export const MAX_QUERY_LENGTH = 100_000;
export const PARAMETRIC_PREFIX = '__sl_pa_';

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_]/;
const PLAIN_IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMBER_LIST = /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?(\s*,\s*-?\d+(\.\d+)?([eE][-+]?\d+)?)*\s*$/;

/**
 * Whether `text` holds nothing but blanks and `--` comments: each line, blanks left aside, is empty or
 * a comment. Not `/^\s*(--[^\n]*\s*)*$/`: a line of many `--` can be cut into comments in
 * exponentially many ways, and `SELECT 1;` followed by 20 of them and a word held the event loop, and
 * every tenant, for 18 s (docs/limits.md, "Bounded by cost").
 */
export function onlyLineComments(text: string): boolean {
  for (const line of text.split('\n')) {
    const start = line.trimStart();
    if (start !== '' && !start.startsWith('--')) return false;
  }
  return true;
}

export function lex(sql: string): Lexed {
  if (sql.length > MAX_QUERY_LENGTH) throw new SqlRefused(`query is longer than ${MAX_QUERY_LENGTH} characters`);
  let out = '';
  const parametric: Parametric[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "'") {
      const end = stringEnd(sql, i);
      out += sql.slice(i, end);
      i = end;
      continue;
    }
    if (c === '"' || c === '`') {
      const close = sql.indexOf(c, i + 1);
      if (close < 0) throw new SqlRefused('unterminated quoted identifier');
      const name = sql.slice(i + 1, close);
      if (!PLAIN_IDENT.test(name))
        throw new SqlRefused(`quoted identifier ${JSON.stringify(name)}: only letters, digits and _ are allowed`);
      out += `"${name}"`;
      i = close + 1;
      continue;
    }
    if (c === '-' && next === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      out += ' ';
      continue;
    }
    if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      if (close < 0) throw new SqlRefused('unterminated comment');
      if (sql.slice(i + 2, close).includes('/*')) throw new SqlRefused('nested comments are not allowed');
      i = close + 2;
      out += ' ';
      continue;
    }
    if (c === ';') {
      if (!onlyLineComments(sql.slice(i + 1))) throw new SqlRefused('only one statement is allowed');
      break;
    }
    if (c === '\\') throw new SqlRefused('backslashes are not allowed (write a quote inside a string as two quotes)');
    if (c === '#') throw new SqlRefused("'#' is not allowed");
    if (c === '$') throw new SqlRefused("'$' is not allowed");
    if (c === '{' || c === '}') throw new SqlRefused('query parameters ({...}) are not allowed');
    if (c === ':' && next === ':')
      throw new SqlRefused("'::' casts are not allowed; use conversion functions such as toFloat64(x) or toString(x)");
    if (c === '-' && next === '>') throw new SqlRefused("lambda functions ('->') are not allowed");
    const negative = c === '-' ? exactNegative(sql.slice(i, i + 32), out) : null;
    if (negative) {
      out += negative.text;
      i += negative.length;
      continue;
    }
    if (c === '[') {
      // Element access (m['k'], a[1]) follows a name or a closing bracket; anything else is a literal.
      const before = out.trimEnd();
      const afterKeyword =
        /(?:^|[^A-Za-z0-9_])(SELECT|WHERE|AND|OR|NOT|IN|THEN|ELSE|WHEN|ON|HAVING|BY|AS|DISTINCT)$/i.test(before);
      if (afterKeyword || !/[A-Za-z0-9_)\]"]$/.test(before))
        throw new SqlRefused('array literals are not supported; write array(1, 2)');
      out += c;
      i++;
      continue;
    }
    const code = c.charCodeAt(0);
    if (code > 0x7e || (code < 0x20 && c !== '\n' && c !== '\r' && c !== '\t')) {
      throw new SqlRefused(
        `character U+${code.toString(16).toUpperCase().padStart(4, '0')} is not allowed outside string literals`,
      );
    }
    if (IDENT_START.test(c)) {
      let j = i + 1;
      while (j < n && IDENT_PART.test(sql[j]!)) j++;
      const word = sql.slice(i, j);
      const refusal = clauseRefusal(word.toUpperCase(), sql.slice(j, j + 64));
      if (refusal) throw new SqlRefused(refusal);
      const emptyCall = /^\s*\(\s*\)(?=\s*OVER\b)/i.exec(sql.slice(j, j + 64));
      if (word.toLowerCase() === 'count' && emptyCall) {
        // count() == count(*) in ClickHouse; before a window the parser only reads the latter.
        out += `${word}(*)`;
        i = j + emptyCall[0].length;
        continue;
      }
      if (word.toUpperCase() === 'CAST' && /^\s*\(/.test(sql.slice(j, j + 32))) {
        throw new SqlRefused(
          'CAST is not allowed; use conversion functions such as toFloat64(x), toUInt32(x) or toString(x)',
        );
      }
      const emptyWindow = /^\s*\(\s*\)/.exec(sql.slice(j, j + 64));
      if (word.toUpperCase() === 'OVER' && emptyWindow) {
        // `OVER ()` is beyond the parser; one partition by a constant is the same window.
        out += 'OVER (PARTITION BY tuple())';
        i = j + emptyWindow[0].length;
        continue;
      }
      const call = parametricCall(sql, j);
      if (call) {
        parametric.push({ name: word, params: call.params.trim().replace(/\s+/g, '') });
        out += `${PARAMETRIC_PREFIX}${parametric.length - 1}(`;
        i = call.end;
        continue;
      }
      out += word;
      i = j;
      continue;
    }
    out += c;
    i++;
  }
  return { text: out, parametric };
}

/**
 * The parser reads `-9007199254740993` as a JavaScript number and prints `-9007199254740992`
 * (docs/sql.md promises no lost digits); `-(9007199254740993)` it keeps as digits, and ClickHouse
 * negates the UInt64 into the same Int64. Only integers beyond 2^53 and within Int64 change; a
 * `-` after a number's exponent (`1e-…`) is left alone.
 */
function exactNegative(ahead: string, before: string): { text: string; length: number } | null {
  const m = /^-(\d{16,19})(?![\w.])/.exec(ahead);
  if (!m || /\d[eE]$/.test(before)) return null;
  const digits = BigInt(m[1]!);
  if (digits <= BigInt(Number.MAX_SAFE_INTEGER) || digits > 2n ** 63n) return null;
  return { text: `-(${m[1]!})`, length: m[0].length };
}

/**
 * ClickHouse clauses the parser would misread or can't read, refused by name so the caller learns
 * what to write instead.
 */
function clauseRefusal(word: string, after: string): string | null {
  switch (word) {
    case 'SETTINGS':
      return 'SETTINGS clauses are not allowed; the server sets the query limits';
    case 'FORMAT':
      return /^\s*\(/.test(after) ? null : 'FORMAT clauses are not allowed; answers are JSON';
    case 'ARRAY':
      return /^\s+JOIN\b/i.test(after) ? 'ARRAY JOIN is not supported; use arrayJoin(x) in the SELECT list' : null;
    case 'LIMIT':
      return /^\s+\d+(\s*,\s*\d+)?\s+BY\b/i.test(after)
        ? 'LIMIT BY is not supported; use row_number() OVER (PARTITION BY ...)'
        : null;
    case 'FINAL':
      return 'FINAL is not allowed; the tables are read merged already';
    case 'PREWHERE':
      return 'PREWHERE is not allowed; use WHERE';
    case 'SAMPLE':
      return 'SAMPLE is not supported';
    case 'OUTFILE':
      return 'INTO OUTFILE is not allowed';
    case 'TOTALS':
      return 'WITH TOTALS is not supported';
    case 'GLOBAL':
      return 'GLOBAL is not supported';
    case 'INTERVAL':
      return /^\s*'/.test(after) ? 'write intervals as INTERVAL 1 DAY (a number and a unit), not a string' : null;
    default:
      return null;
  }
}

/** The index just past a string literal starting at `start` (PostgreSQL rules: `''` is a quote). */
function stringEnd(sql: string, start: number): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '\\') throw new SqlRefused('backslashes are not allowed (write a quote inside a string as two quotes)');
    if (c === '\u0000') throw new SqlRefused('NUL characters are not allowed');
    if (c === "'") {
      if (sql[i + 1] === "'") {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  throw new SqlRefused('unterminated string literal');
}

/** `name(0.5, 0.9)(` after an identifier ending at `from`: the parameters and where the args start. */
function parametricCall(sql: string, from: number): { params: string; end: number } | null {
  let i = from;
  while (i < sql.length && /\s/.test(sql[i]!)) i++;
  if (sql[i] !== '(') return null;
  const close = sql.indexOf(')', i + 1);
  if (close < 0) return null;
  const params = sql.slice(i + 1, close);
  let j = close + 1;
  while (j < sql.length && /\s/.test(sql[j]!)) j++;
  if (sql[j] !== '(') return null;
  if (!NUMBER_LIST.test(params))
    throw new SqlRefused('parameters of a parametric aggregate must be numbers, as in quantile(0.99)(x)');
  return { params, end: j + 1 };
}

/** Puts `quantile(0.99)(` back where the lexer left `__sl_pa_0(`. */
export function restoreParametric(text: string, parametric: Parametric[]): string {
  return text.replace(/\b__sl_pa_(\d+)\s*\(/g, (whole, index: string) => {
    const p = parametric[Number(index)];
    if (!p) throw new SqlRefused('query could not be verified');
    return `${p.name}(${p.params})(`;
  });
}
