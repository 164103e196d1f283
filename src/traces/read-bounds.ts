import { MIB, READ_MEMORY_BYTES, type QueryLimits } from '../query/limits.js';

/**
 * How much one trace read may do and answer (issue 9, "bounded work"; README "Bounds"). Every query
 * of the trace reads runs under these limits (src/query/limits.ts); the byte budgets are spent on the
 * long fields (span input and output can each be megabytes; metadata values up to 32 KiB each).
 */

/** Time and memory of every trace, list and session query. */
const READ = { maxExecutionSeconds: 10, maxMemoryBytes: READ_MEMORY_BYTES } as const;

/** Queries that answer keys, counts and sizes only: a page's trace ids, span sizes, session summaries. */
export const KEYS_LIMITS: QueryLimits = { ...READ, maxResultRows: 10_000, maxResultBytes: 8 * MIB };
export const SUMMARY_LIMITS: QueryLimits = KEYS_LIMITS;

/**
 * `GET /traces`: the most bytes a page's items may take, as the engine counts the answer (nearly all
 * of it is the root's input, output and metadata and the spans' metadata pairs). A page past it is a
 * 400 asking for a smaller `limit`: list items are the traces' own values (docs/traces.md), so they are
 * answered whole or not at all. A root span came in one ingest body (at most 10 MiB), so a page of a
 * few traces always fits.
 */
export const LIST_PAGE_BYTES = 32 * MIB;

export type DetailBounds = { maxSpans: number; textBytes: number };
/**
 * `GET /traces/{trace_id}`: the first 5,000 spans by start time, and of those only as many as keep
 * their input, output, metadata, error message, events, links and resource within 32 MiB (at least the first span); beyond
 * either, the answer has `truncated: true`.
 */
export const DETAIL_BOUNDS: DetailBounds = { maxSpans: 5000, textBytes: 32 * MIB };

export type SessionBounds = { maxTraces: number; textBytes: number };
/**
 * `GET /sessions/{session_id}`: the first 1,000 traces (oldest first), and of those only as many as
 * keep their list items' long fields within 32 MiB (at least the first); beyond, `truncated: true`.
 */
export const SESSION_BOUNDS: SessionBounds = { maxTraces: 1000, textBytes: 32 * MIB };

/**
 * The short fields of one answered row at most (ids of 128, a name of 512, six fields of 1,024
 * characters, numbers): room given on top of the measured long fields of a row.
 */
const SHORT_FIELDS_BYTES = 8 * 1024;

/** Limits of a read answering `rows` rows in at most `bytes` (as the engine counts them). */
export function answerLimits(rows: number, bytes: number): QueryLimits {
  return { ...READ, maxResultRows: Math.max(1, rows), maxResultBytes: bytes };
}

/**
 * Limits of a read of `rows` rows whose long fields were measured first and fit `textBytes`: room
 * for each row's short fields and for a span stored between the two reads.
 */
export function measuredLimits(rows: number, textBytes: number): QueryLimits {
  return answerLimits(rows, textBytes + rows * SHORT_FIELDS_BYTES + MIB);
}

/** How many leading items fit a byte budget: at least one, so a single large item is still answered. */
export function leadingWithin(sizes: readonly number[], budget: number): number {
  let total = 0;
  for (let i = 0; i < sizes.length; i++) {
    total += sizes[i]!;
    if (total > budget) return Math.max(1, i);
  }
  return sizes.length;
}
