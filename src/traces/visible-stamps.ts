import type { ClickHouseStore } from '../stores/clickhouse.js';

/**
 * The latest `ingested_at` at or below which every span stored is readable, for the passes that work
 * off the spans stored since a watermark (the rollup sealer, src/rollups/seal.ts; the text indexer,
 * src/traces/text-index.ts). A span's `ingested_at` is stamped when its insert starts and the span is
 * visible when the insert ends, so the bound stops `lagMs` short of the engine's clock and before the
 * start of any insert into `spans` still running (a second earlier: `elapsed` is a float of seconds).
 * A pass that went past it could skip a span stamped below its new watermark but not yet readable:
 * in neither the pass's output nor the reads' tail. Answers epoch milliseconds.
 */
export async function visibleStampsUpTo(ch: ClickHouseStore, lagMs: number): Promise<{ now: number; upper: number }> {
  const [clock] = await ch.rows<{ now: string; inserts: string; longest: number }>({
    query: `SELECT toUnixTimestamp64Milli(now64(3)) AS now, count() AS inserts, max(elapsed) AS longest FROM system.processes
      WHERE query_kind = 'Insert' AND positionCaseInsensitive(query, 'INSERT INTO spans') > 0`,
  });
  const now = Number(clock!.now);
  const running = Number(clock!.inserts) > 0 ? now - Math.ceil(clock!.longest * 1000) - 1000 : Infinity;
  return { now, upper: Math.min(now - lagMs, running) };
}
