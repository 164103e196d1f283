import type { ClickHouseStore } from '../stores/clickhouse.js';

/**
 * The sealer's marks (clickhouse/0015_span_rollup_seal.sql, span_rollup_seal_marks), as epoch ms:
 * `sealedMs` the watermark (every span stored at or before it is in the rollups), `begunMs` the end
 * of the newest pass begun (and `begunFromMs` its start). A pass is under way, or failed half-way,
 * while `begunMs > sealedMs`.
 */
export type SealMarks = { sealedMs: number; begunMs: number; begunFromMs: number };

/** One small read of the marks (a few rows once merged). */
export async function readSealMarks(ch: ClickHouseStore): Promise<SealMarks> {
  const [row] = await ch.rows<{ sealed: string; begun: string; begun_from: string }>({
    query: `SELECT toUnixTimestamp64Milli(maxIf(range_end, kind = 'end')) AS sealed,
      toUnixTimestamp64Milli(maxIf(range_end, kind = 'begin')) AS begun,
      toUnixTimestamp64Milli(argMaxIf(range_start, range_end, kind = 'begin')) AS begun_from
    FROM span_rollup_seal_marks WHERE project_id = ''`,
  });
  return { sealedMs: Number(row!.sealed), begunMs: Number(row!.begun), begunFromMs: Number(row!.begun_from) };
}
