import type { AppContext } from '../context.js';
import { BadRequestError } from '../errors.js';
import { PROJECT_PARAM } from './contract.js';
import { guardSql, RESULT_ROW_LIMIT } from './guard.js';
import { SqlRefused } from './lexer.js';

/**
 * `POST /sql` (extensions.md §6): guard, run read-only with limits, answer JSON-safe values.
 * Limits live in the SQL text (SETTINGS), never in per-query client settings: the embedded engine
 * would keep those on its connection (DESIGN.md, "Known traps").
 */

export const SQL_LIMITS = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 1_000_000_000,
  maxRowsToRead: 500_000_000,
} as const;

const SETTINGS = [
  `max_execution_time = ${SQL_LIMITS.maxExecutionSeconds}`,
  "timeout_overflow_mode = 'throw'",
  `max_memory_usage = ${SQL_LIMITS.maxMemoryBytes}`,
  `max_rows_to_read = ${SQL_LIMITS.maxRowsToRead}`,
  'max_result_bytes = 200000000',
  "union_default_mode = 'DISTINCT'",
  'output_format_json_quote_64bit_integers = 1',
  'do_not_merge_across_partitions_select_final = 1',
  'readonly = 1',
].join(', ');

export type SqlAnswer = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
};

/** The exact text that runs for a guarded query: one more row than the limit tells us it was cut. */
export function executableSql(guarded: string): string {
  return `SELECT * FROM (\n${guarded}\n)\nLIMIT ${RESULT_ROW_LIMIT + 1}\nSETTINGS ${SETTINGS}`;
}

export async function runSql(ctx: AppContext, projectId: string, query: string): Promise<SqlAnswer> {
  let guarded: string;
  try {
    guarded = guardSql(query, ctx.ch.database).sql;
  } catch (error) {
    if (error instanceof SqlRefused) throw new BadRequestError(`query refused: ${error.detail}`);
    throw error;
  }
  const started = performance.now();
  let body: { meta: { name: string; type: string }[]; data: unknown[][] };
  try {
    const result = await ctx.ch.sqlClient.query({ query: executableSql(guarded), query_params: { [PROJECT_PARAM]: projectId }, format: 'JSONCompact' });
    body = (await result.json()) as unknown as typeof body;
  } catch (error) {
    throw new BadRequestError(queryFailure(error, ctx.ch.database));
  }
  const elapsed = performance.now() - started;
  const truncated = body.data.length > RESULT_ROW_LIMIT;
  const data = truncated ? body.data.slice(0, RESULT_ROW_LIMIT) : body.data;
  const converters = body.meta.map((m) => converterFor(m.type));
  return {
    columns: body.meta.map(({ name, type }) => ({ name, type })),
    rows: data.map((row) => row.map((value, i) => converters[i]!(value))),
    row_count: data.length,
    truncated,
    elapsed_ms: Math.round(elapsed * 100) / 100,
  };
}

type Convert = (value: unknown) => unknown;
const identity: Convert = (v) => v;

/**
 * 64-bit (and wider) integers arrive quoted; those within ±2^53 become JSON numbers, larger ones stay
 * strings so no digit is lost (extensions.md §6 "values JSON-safe").
 */
export function converterFor(type: string): Convert {
  const t = unwrap(type);
  if (/^U?Int(64|128|256)$/.test(t)) {
    return (v) => {
      if (typeof v !== 'string' || !/^-?\d+$/.test(v)) return v;
      const n = Number(v);
      return Number.isSafeInteger(n) ? n : v;
    };
  }
  const array = /^Array\((.*)\)$/.exec(t);
  if (array) {
    const inner = converterFor(array[1]!);
    return inner === identity ? identity : (v) => (Array.isArray(v) ? v.map(inner) : v);
  }
  const map = /^Map\((\w+), (.*)\)$/.exec(t);
  if (map) {
    const inner = converterFor(map[2]!);
    return inner === identity ? identity : (v) => (v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inner(x)])) : v);
  }
  return identity;
}

function unwrap(type: string): string {
  const m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(type);
  return m ? unwrap(m[1]!) : type;
}

/**
 * A ClickHouse error as a caller-facing 400 detail: limits get advice; other messages are cut before
 * the engine quotes the rewritten query and scrubbed of internal names and paths.
 */
export function queryFailure(error: unknown, db: string): string {
  const e = error as { code?: unknown; type?: unknown; message?: unknown };
  const code = Number(e.code);
  if (code === 159) return `query exceeded the time limit of ${SQL_LIMITS.maxExecutionSeconds} s; narrow the time range or aggregate more`;
  if (code === 241) return 'query exceeded the memory limit; narrow the time range, aggregate more or select fewer columns';
  if (code === 158 || code === 307 || code === 396) return 'query reads too much data; narrow the time range or add filters';
  let message = typeof e.message === 'string' ? e.message : 'query failed';
  message = message.replace(/^Code: \d+\.\s*/, '').replace(/DB::Exception:\s*/g, '');
  for (const cut of [' in scope ', ' In scope ', ' while processing', ': While executing', '. Stack trace', ' (version ', '\n', ' (SELECT ', ' (WITH ']) {
    const at = message.indexOf(cut);
    if (at > 0) message = message.slice(0, at);
  }
  message = message
    .replaceAll(`${db}.`, '')
    .replace(/\bp_(\w+)/g, '$1')
    .replace(/__sl_\w+/g, 'table')
    .replace(/`?__table\d+`?\./g, '')
    .replace(/\/[\w./-]+/g, '<path>')
    .trim();
  const type = typeof e.type === 'string' && /^[A-Z_]+$/.test(e.type) ? ` (${e.type})` : '';
  return `query failed: ${message.slice(0, 300)}${type}`;
}
