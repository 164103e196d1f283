import type { ClickHouseStore } from '../stores/clickhouse.js';
import { timeParam, type Query } from '../query/params.js';
import { SEALED_PARAM } from '../query/sealed-rollups.js';
import { readSealMarks, type SealMarks } from './seal-marks.js';

/**
 * A read of the span rollups that counts every span once whatever the sealer is doing
 * (src/rollups/seal.ts): the query reads the rollup rows plus the spans stored after the watermark
 * (src/query/sealed-rollups.ts), with the watermark read just before. A seqlock on the sealer's marks:
 *
 * - a pass under way (its 'begin' newer than the last 'end'; or one that failed half-way) may have
 *   stored part of its rows in the rollups without moving the watermark: the read waits for it,
 *   briefly, and tries again;
 * - the marks are read again after the query: if a pass began (or ended) meanwhile, its rows may have
 *   been seen beside the same spans in the tail, and the read is run again.
 *
 * A pass's rows become visible after its 'begin' mark and before its 'end', so a query that ran between
 * two equal readings with no pass under way saw the rollups exactly as of the watermark it used.
 * When the read's project has no span past the watermark (an idle project, a caught-up sealer), the
 * query over the rollups alone (`untailed`) answers the same without planning the tail's. After
 * MAX_ATTEMPTS the read takes `fallback` (the raw spans: exact, slower), so a sealer that died
 * half-way never blocks a dashboard.
 */

export const MAX_ATTEMPTS = 5;
/** Waits while a pass is under way, ms, one per attempt (the embedded engine runs a pass's inserts in turn with reads). */
const WAITS_MS = [10, 40, 100, 250, 500];

export type SealedReadOptions = {
  /** The read's project and its query without the tail: taken when the project has no span past the watermark. */
  untailed?: { projectId: string; query: Query };
  /** Runs after the query, before the marks are read again (the interleaving test runs a pass there). */
  queried?: () => Promise<void> | void;
  /** How long to wait before attempt `attempt` after seeing a pass under way (tests pass 0). */
  waitMs?: (attempt: number) => number;
};

export type SealedRead<T> = { result: T; attempts: number; fallback: boolean };

export async function readSealed<T>(
  ch: ClickHouseStore,
  query: Query,
  run: (query: Query) => Promise<T>,
  fallback: () => Promise<T>,
  options: SealedReadOptions = {},
): Promise<SealedRead<T>> {
  const { untailed } = options;
  return readSealedBatch(
    ch,
    untailed?.projectId,
    async (marks) => {
      const result = await run(sealedQuery(query, marks, untailed?.query));
      await options.queried?.();
      return result;
    },
    fallback,
    options,
  );
}

/** One reading of the marks, taken before a read (with the read's project: its spans past the watermark). */
export type SealReading = SealMarks & { tailSpans: number | null };

/**
 * The query of a rollup read as of a reading of the marks: over the rollups alone (`untailed`) when the
 * project has no span past the watermark, else with the watermark as its `sealed` parameter.
 */
export function sealedQuery(query: Query, marks: SealReading, untailed?: Query): Query {
  if (untailed && marks.tailSpans === 0) return untailed;
  return {
    ...query,
    query_params: { ...query.query_params, [SEALED_PARAM]: timeParam("DateTime64(3, 'UTC')", marks.sealedMs / 1000) },
  };
}

/**
 * The seqlock around several reads at once (a dashboard's widgets): one reading of the marks before
 * them all and one after, instead of two per read. `read` runs the reads as of the reading it is
 * given (each through `sealedQuery`); when a pass began or ended meanwhile they all run again.
 */
export async function readSealedBatch<T>(
  ch: ClickHouseStore,
  projectId: string | undefined,
  read: (marks: SealReading) => Promise<T>,
  fallback: () => Promise<T>,
  options: Pick<SealedReadOptions, 'waitMs'> = {},
): Promise<SealedRead<T>> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const before = await readSealMarks(ch, projectId);
    if (underWay(before)) {
      await sleep(options.waitMs?.(attempt) ?? WAITS_MS[attempt]!);
      continue;
    }
    const result = await read(before);
    const after = await readSealMarks(ch);
    if (after.sealedMs === before.sealedMs && after.begunMs === before.begunMs)
      return { result, attempts: attempt + 1, fallback: false };
  }
  return { result: await fallback(), attempts: MAX_ATTEMPTS, fallback: true };
}

function underWay(marks: SealMarks): boolean {
  return marks.begunMs > marks.sealedMs;
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
