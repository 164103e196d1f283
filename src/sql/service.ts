import type { ClickHouseClient } from '@clickhouse/client';
import type { AppContext } from '../context.js';
import { BadRequestError, isStoreUnreachable, TooManyRequestsError } from '../errors.js';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import { READ_MEMORY_BYTES } from '../query/limits.js';
import { PROJECT_PARAM } from './contract.js';
import { projectLiteral, tableFilters } from './engine-scope.js';
import { guardSql, RESULT_ROW_LIMIT } from './guard.js';
import { SqlRefused } from './lexer.js';
import { DeadlineExceeded, killTagged, queryTag, withDeadline } from './deadline.js';
import { SqlScheduler, type SqlOwner } from './scheduler.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { SqlAnswer as SqlAnswerSchema } from './answers.js';

/**
 * `POST /sql` (docs/sql.md): guard, run read-only with limits on a fairly shared engine session,
 * answer JSON-safe values. Limits live in the SQL text (SETTINGS), never in per-query client
 * settings: the embedded engine would keep those on its connection (docs/design.md, "Known traps").
 *
 * Three layers stand between a caller and another project's rows: the lexer and the AST allowlist
 * (guard.ts), the project-scoped subqueries, and the engine's own per-query table filters
 * (engine-scope.ts), plus, on a server, the read-only user's row policies.
 */

export const SQL_LIMITS = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: READ_MEMORY_BYTES,
  maxRowsToRead: 500_000_000,
  /** The answer's bytes as the engine holds them (10,000 rows of 1 MB strings stop here). */
  maxResultBytes: 32 * 1024 * 1024,
  /** The answer's JSON text, counted as it arrives, before any of it is parsed. */
  maxAnswerChars: 64 * 1024 * 1024,
  /** How long a query may wait for an engine session before it is told to retry (429). */
  maxWaitMs: 15_000,
  /** Rows per block (see SETTINGS). */
  maxBlockRows: 8192,
} as const;

/**
 * `max_block_size` and `max_joined_block_size_rows` keep blocks small (the engine's default is 65,409
 * rows): the engine checks the time limit, and honours KILL QUERY, only between blocks (deadline.ts).
 */
const SETTINGS = [
  "timeout_overflow_mode = 'throw'",
  `max_memory_usage = ${SQL_LIMITS.maxMemoryBytes}`,
  `max_rows_to_read = ${SQL_LIMITS.maxRowsToRead}`,
  `max_result_bytes = ${SQL_LIMITS.maxResultBytes}`,
  "result_overflow_mode = 'throw'",
  `max_block_size = ${SQL_LIMITS.maxBlockRows}`,
  `max_joined_block_size_rows = ${SQL_LIMITS.maxBlockRows}`,
  "union_default_mode = 'DISTINCT'",
  'output_format_json_quote_64bit_integers = 1',
  'do_not_merge_across_partitions_select_final = 1',
  'readonly = 1',
].join(', ');

/** Per run: the time limit (SQL_TIME_LIMIT_SECONDS) and the tag KILL QUERY finds it by (deadline.ts). */
export type RunSettings = { timeLimitSeconds: number; tag?: string };

/** Inferred from the answer schema (answers.ts). */
export type SqlAnswer = AnswerOf<typeof SqlAnswerSchema>;

/**
 * The exact text that runs for a guarded query: the project as a literal (a query without query
 * parameters runs side by side with others on the embedded engine), one more row than the limit
 * (which tells us it was cut), the limits, and the engine's table filters for this project.
 */
export function executableSql(
  guarded: string,
  projectId: string,
  scope: { filters: string; rowPolicySetting: boolean },
  run: RunSettings = { timeLimitSeconds: SQL_LIMITS.maxExecutionSeconds },
): string {
  const project = projectLiteral(projectId);
  const sql = guarded.replaceAll(PROJECT_PLACEHOLDER, project);
  // The scope settings come before `readonly = 1`, which would refuse any setting after it.
  const policy = scope.rowPolicySetting ? `SQL_sightline_project = ${project}, ` : '';
  if (!Number.isInteger(run.timeLimitSeconds) || run.timeLimitSeconds < 1) throw new Error('unexpected time limit');
  if (run.tag !== undefined && !/^[\w-]+$/.test(run.tag)) throw new Error('unexpected query tag');
  const tag = run.tag === undefined ? '' : `log_comment = '${run.tag}', `;
  const limits = `max_execution_time = ${run.timeLimitSeconds}, ${tag}`;
  return `SELECT * FROM (\n${sql}\n)\nLIMIT ${RESULT_ROW_LIMIT + 1}\nSETTINGS additional_table_filters = ${scope.filters}, ${policy}${limits}${SETTINGS}`;
}

const PROJECT_PLACEHOLDER = `{${PROJECT_PARAM}:String}`;

const schedulers = new WeakMap<ClickHouseStore, SqlScheduler<ClickHouseClient>>();

/** Public SQL's sessions, shared fairly between projects, workspaces and users (scheduler.ts); one per store. */
export function sqlScheduler(ctx: AppContext): SqlScheduler<ClickHouseClient> {
  let scheduler = schedulers.get(ctx.ch);
  if (!scheduler) {
    const { perProject, queuePerProject, perWorkspace, perUser } = ctx.config.sql;
    scheduler = new SqlScheduler(ctx.ch.sqlClients, {
      perProject,
      queuePerProject,
      perWorkspace,
      perUser,
      maxWaitMs: SQL_LIMITS.maxWaitMs,
    });
    schedulers.set(ctx.ch, scheduler);
  }
  return scheduler;
}

/** The time limit callers are told about (SQL_TIME_LIMIT_SECONDS, 10 s unless configured). */
export function timeLimitSeconds(ctx: AppContext): number {
  return ctx.config.sql.timeLimitSeconds ?? SQL_LIMITS.maxExecutionSeconds;
}

/**
 * Runs a caller's query: guarded, scoped, on a session of the owner's share, answered by its deadline.
 * `owner` is the project alone, or the project with its workspace and user (scheduler.ts).
 */
export async function runSql(ctx: AppContext, owner: string | SqlOwner, query: string): Promise<SqlAnswer> {
  const projectId = typeof owner === 'string' ? owner : owner.projectId;
  let guarded: string;
  try {
    guarded = guardSql(query, ctx.ch.database).sql;
  } catch (error) {
    if (error instanceof SqlRefused) throw new BadRequestError(`query refused: ${error.detail}`);
    throw error;
  }
  const limit = timeLimitSeconds(ctx);
  const tag = queryTag();
  const scope = { filters: await tableFilters(ctx.ch, projectId), rowPolicySetting: ctx.ch.sqlRowPolicies };
  const executable = executableSql(guarded, projectId, scope, { timeLimitSeconds: limit, tag });
  let started = 0;
  let text: string;
  try {
    const lease = await sqlScheduler(ctx).lease(owner);
    started = performance.now();
    const running = readCapped(lease.session, `${executable}\nFORMAT JSONCompact`, SQL_LIMITS.maxAnswerChars);
    // The share is given back when the engine is done with the query, not when the caller was answered.
    running.then(lease.release, lease.release);
    text = await withDeadline(running, limit * 1000, () => {
      // A failed kill leaves the engine's own max_execution_time, checked at the same next block.
      killTagged(ctx.ch, tag).catch(() => {});
    });
  } catch (error) {
    if (error instanceof DeadlineExceeded) throw new BadRequestError(timeLimitDetail(limit));
    // Our own trouble is not the caller's mistake: an unreachable engine is a 503 (errors.ts), not a 400.
    if (error instanceof TooManyRequestsError || error instanceof BadRequestError || isStoreUnreachable(error))
      throw error;
    throw new BadRequestError(queryFailure(error, ctx.ch.database, limit));
  }
  const elapsed = performance.now() - started;
  const body = JSON.parse(text) as { meta: { name: string; type: string }[]; data: unknown[][] };
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

/**
 * The answer's text, read as it streams and given up past `maxBytes`: the engine's byte limit is
 * checked between blocks, so one large block can pass it; this bound holds whatever the engine sent.
 */
async function readCapped(client: ClickHouseClient, query: string, maxBytes: number): Promise<string> {
  const { stream } = await client.exec({ query });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new BadRequestError(
        `query answer is larger than ${maxBytes / 1024 / 1024} MiB; select fewer columns or rows, or aggregate more`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function timeLimitDetail(limitSeconds: number): string {
  return `query exceeded the time limit of ${limitSeconds} s; narrow the time range or aggregate more`;
}

type Convert = (value: unknown) => unknown;
const identity: Convert = (v) => v;

/**
 * 64-bit (and wider) integers arrive quoted; those within ±2^53 become JSON numbers, larger ones stay
 * strings so no digit is lost (docs/sql.md: 64-bit integers beyond 2^53).
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
    return inner === identity
      ? identity
      : (v) => (v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inner(x)])) : v);
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
export function queryFailure(
  error: unknown,
  db: string,
  limitSeconds: number = SQL_LIMITS.maxExecutionSeconds,
): string {
  const e = error as { code?: unknown; type?: unknown; message?: unknown };
  const code = Number(e.code);
  // 394: cancelled, which only our own KILL QUERY at the deadline does.
  if (code === 159 || code === 394) return timeLimitDetail(limitSeconds);
  if (code === 241)
    return 'query exceeded the memory limit; narrow the time range, aggregate more or select fewer columns';
  if (code === 158 || code === 307) return 'query reads too much data; narrow the time range or add filters';
  if (code === 396)
    return `query answer is larger than ${SQL_LIMITS.maxResultBytes / 1024 / 1024} MiB; select fewer columns or rows, or aggregate more`;
  let message = typeof e.message === 'string' ? e.message : 'query failed';
  message = message.replace(/^Code: \d+\.\s*/, '').replace(/DB::Exception:\s*/g, '');
  for (const cut of [
    ' in scope ',
    ' In scope ',
    ' while processing',
    ': While executing',
    '. Stack trace',
    ' (version ',
    '\n',
    ' (SELECT ',
    ' (WITH ',
  ]) {
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
