import type { ClickHouseStore } from '../stores/clickhouse.js';

/**
 * The sealer's marks (clickhouse/0015_span_rollup_seal.sql, span_rollup_seal_marks), as epoch ms:
 * `sealedMs` the watermark (every span stored at or before it is in the rollups), `begunMs` the end
 * of the newest pass begun (and `begunFromMs` its start). A pass is under way, or failed half-way,
 * while `begunMs > sealedMs`.
 */
export type SealMarks = { sealedMs: number; begunMs: number; begunFromMs: number };

/**
 * One small read of the marks (a few rows once merged); with `projectId`, also how many of the
 * project's spans are past the watermark (`tailSpans`: a read of the newest granules only).
 */
export async function readSealMarks(
  ch: ClickHouseStore,
  projectId?: string,
): Promise<SealMarks & { tailSpans: number | null }> {
  const tail =
    projectId === undefined
      ? 'NULL'
      : `(SELECT count() FROM spans WHERE project_id = {p:String}
          AND ingested_at > (SELECT maxIf(range_end, kind = 'end') FROM span_rollup_seal_marks WHERE project_id = ''))`;
  const [row] = await ch.rows<{ sealed: string; begun: string; begun_from: string; tail: string | null }>({
    query: `SELECT toUnixTimestamp64Milli(maxIf(range_end, kind = 'end')) AS sealed,
      toUnixTimestamp64Milli(maxIf(range_end, kind = 'begin')) AS begun,
      toUnixTimestamp64Milli(argMaxIf(range_start, range_end, kind = 'begin')) AS begun_from,
      ${tail} AS tail
    FROM span_rollup_seal_marks WHERE project_id = ''`,
    ...(projectId === undefined ? {} : { query_params: { p: projectId } }),
  });
  return {
    sealedMs: Number(row!.sealed),
    begunMs: Number(row!.begun),
    begunFromMs: Number(row!.begun_from),
    tailSpans: row!.tail === null ? null : Number(row!.tail),
  };
}
