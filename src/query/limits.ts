import { isQueryLimit, QueryLimitError } from '../errors.js';

/**
 * Resource limits of the ClickHouse reads behind the API (issue 9, "bounded work"): every query a
 * route runs carries time, memory and answer-size limits in its own SQL text, so one request can
 * neither run for ever nor hand the process an answer it can't hold.
 *
 * The limits go in the query's `SETTINGS` clause, never in the client's `clickhouse_settings`: the
 * embedded engine would keep those on its connection for every later query (docs/design.md, "Known traps").
 * A query stopped by a limit becomes a QueryLimitError (400 `{detail}`) that says which limit and
 * how to narrow the request; a dashboard shows it as that widget's error.
 */

export const MIB = 1024 * 1024;

/**
 * `max_memory_usage` of the reads behind the API (lists, details, widgets, alerts, findings, public
 * SQL, dataset copies): one request may hold at most this much.
 */
export const READ_MEMORY_BYTES = 1_000_000_000;
/**
 * `max_memory_usage` of the background scans over recent spans (detection passes, root-cause hints)
 * and of ingest's check for spans already stored: twice a read's, as they run few at a time.
 */
export const SCAN_MEMORY_BYTES = 2_000_000_000;

export type QueryLimits = {
  /** `max_execution_time`, seconds. */
  maxExecutionSeconds: number;
  /** `max_memory_usage`, bytes. */
  maxMemoryBytes: number;
  /** `max_result_rows`: rows of the answer (subqueries are not counted). */
  maxResultRows: number;
  /** `max_result_bytes`: the answer's uncompressed bytes as the engine holds them. */
  maxResultBytes: number;
};

/**
 * Time and memory only, for a query whose answer its own shape bounds (ingest's check for stored
 * spans answers one row per trace of the batch, naming only the batch's span ids).
 */
export type WorkLimits = Pick<QueryLimits, 'maxExecutionSeconds' | 'maxMemoryBytes'>;

/** The settings of a query under these limits, for its `SETTINGS` clause (after any of the query's own). */
export function limitSettings(limits: QueryLimits | WorkLimits, extra: readonly string[] = []): string {
  const work = [
    ...extra,
    `max_execution_time = ${Math.max(1, Math.round(limits.maxExecutionSeconds))}`,
    "timeout_overflow_mode = 'throw'",
    `max_memory_usage = ${Math.round(limits.maxMemoryBytes)}`,
  ];
  if (!('maxResultRows' in limits)) return work.join(', ');
  return [
    ...work,
    `max_result_rows = ${Math.max(1, Math.round(limits.maxResultRows))}`,
    `max_result_bytes = ${Math.round(limits.maxResultBytes)}`,
    "result_overflow_mode = 'throw'",
  ].join(', ');
}

/** `SETTINGS ...` for the end of a query. */
export function settingsClause(limits: QueryLimits | WorkLimits, extra: readonly string[] = []): string {
  return `SETTINGS ${limitSettings(limits, extra)}`;
}

function bytes(n: number): string {
  return n >= 1e9 ? `${Math.round(n / 1e8) / 10} GB` : `${Math.round(n / MIB)} MiB`;
}

/**
 * A ClickHouse error raised by one of these limits as the caller-facing error, or null for any other
 * error. `advice` says how this route's request can be narrowed.
 */
export function limitErrorOf(error: unknown, limits: QueryLimits, advice: string): QueryLimitError | null {
  if (!isQueryLimit(error)) return null;
  const code = Number((error as { code?: unknown }).code);
  if (code === 159 || code === 160)
    return new QueryLimitError(`the query ran past its time limit of ${limits.maxExecutionSeconds} s; ${advice}`);
  if (code === 241)
    return new QueryLimitError(
      `the query needed more than its memory limit of ${bytes(limits.maxMemoryBytes)}; ${advice}`,
    );
  return new QueryLimitError(
    `the answer would exceed its limit of ${limits.maxResultRows} rows and ${bytes(limits.maxResultBytes)}; ${advice}`,
  );
}

/** Runs a read; a limit it hit is rethrown as the caller's QueryLimitError, anything else as it was. */
export async function withinLimits<T>(limits: QueryLimits, advice: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw limitErrorOf(error, limits, advice) ?? error;
  }
}
