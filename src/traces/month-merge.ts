import type { ClickHouseStore } from '../stores/clickhouse.js';

/**
 * Closed months of the trace rollup merged once (issue 22, item 5). A list reads `traces` with FINAL,
 * which merges a trace's partial rows as it reads them; a month partition that is one part of a
 * merge (level > 0) is passed through unmerged (`do_not_merge_across_partitions_select_final`: the
 * month partitions never split a trace). Background merges leave a month as a few large parts that
 * FINAL merges again on every read, so a pass of this job, off the insert path, runs
 * `OPTIMIZE … PARTITION … FINAL` on a month once it has been closed for `afterDays` (late spans
 * have mostly arrived by then).
 *
 * Once: a month is left alone when its largest part holds `settledShare` of its rows (and a month of
 * one part only when that part is a merge's: FINAL merges an inserted part's rows on read). A late span
 * stored into a merged month makes a new small part beside the merged one; FINAL then merges only
 * the key ranges of the month that the small part overlaps (ClickHouse's split of intersecting and
 * non-intersecting ranges), and the month is merged again only when late rows reach
 * 1 − `settledShare` of it, so a trickle of late spans never rewrites a month.
 *
 * Disk: the merge writes the month anew before the old parts are dropped, so it needs about the
 * month's bytes free again (bench/disk-peak.ts `--month-merge` measures it). A month is merged only
 * when the disk's free space is at least `freeFactor` times the month's bytes; else it waits.
 *
 * Cost: the merge is a rewrite of one month of the rollup (150 s for 333k traces on a busy 2-core
 * machine), so a pass merges one month at most, and on the embedded engine it runs on a session of
 * its own (`maintenance`), so the main session's ingest and lists do not wait behind it.
 */

export const MONTH_MERGE_AFTER_DAYS = 3;
export const MONTH_MERGE_SETTLED_SHARE = 0.9;
export const MONTH_MERGE_FREE_FACTOR = 2;
export const MONTH_MERGE_EVERY_MS = 3_600_000;

export type MonthMergeOptions = {
  /** The clock (epoch ms); the engine's when absent. */
  nowMs?: number;
  afterDays?: number;
  settledShare?: number;
  freeFactor?: number;
};

export type MonthPartition = {
  /** `YYYYMM`, the partition id of toYYYYMM(trace_start_hour). */
  partition: string;
  parts: number;
  rows: number;
  largestRows: number;
  bytes: number;
  /** The lowest merge level among its parts: 0 for a part as inserted, which FINAL merges on read. */
  minLevel: number;
};

export type MonthMergePass = {
  /** The month merged by this pass, if any. */
  merged?: MonthPartition;
  /** Months due but waiting for disk space. */
  waitingForDisk: MonthPartition[];
  ms: number;
};

/** The first moment after month `YYYYMM` (epoch ms, UTC). */
export function monthEndMs(partition: string): number {
  const year = Number(partition.slice(0, 4));
  const month = Number(partition.slice(4, 6));
  return Date.UTC(year, month, 1);
}

/** The closed months that are not one settled part yet, newest first (the most windows read them). */
export function monthsDue(months: readonly MonthPartition[], nowMs: number, options: MonthMergeOptions = {}) {
  const afterMs = (options.afterDays ?? MONTH_MERGE_AFTER_DAYS) * 86_400_000;
  const share = options.settledShare ?? MONTH_MERGE_SETTLED_SHARE;
  return months
    .filter((m) => /^\d{6}$/.test(m.partition) && monthEndMs(m.partition) + afterMs <= nowMs)
    .filter((m) => (m.parts > 1 && m.largestRows < share * m.rows) || (m.parts === 1 && m.minLevel === 0))
    .sort((a, b) => b.partition.localeCompare(a.partition));
}

/** The rollup table holding the parts: on a cluster, each node's `traces_local` (src/stores/cluster-migrations.ts). */
function localTable(ch: ClickHouseStore): string {
  return ch.cluster ? 'traces_local' : 'traces';
}

/** Active parts of the rollup by month partition; on a cluster, of this shard's first replica. */
export async function traceMonths(ch: ClickHouseStore): Promise<MonthPartition[]> {
  const rows = await ch.rows<{
    partition: string;
    parts: string;
    n: string;
    largest: string;
    bytes: string;
    level: string | number;
  }>({
    query: `SELECT partition_id AS partition, count() AS parts, sum(rows) AS n, max(rows) AS largest,
      sum(bytes_on_disk) AS bytes, min(level) AS level
    FROM system.parts WHERE database = currentDatabase() AND table = {table:String} AND active
    GROUP BY partition_id ORDER BY partition_id`,
    query_params: { table: localTable(ch) },
  });
  return rows.map((r) => ({
    partition: r.partition,
    parts: Number(r.parts),
    rows: Number(r.n),
    largestRows: Number(r.largest),
    bytes: Number(r.bytes),
    minLevel: Number(r.level),
  }));
}

/** One pass: merges the newest due month that the disk has room for. */
export async function runMonthMergePass(ch: ClickHouseStore, options: MonthMergeOptions = {}): Promise<MonthMergePass> {
  const started = performance.now();
  const [clock] = await ch.rows<{ now: string; free: string }>({
    query: `SELECT toUnixTimestamp64Milli(now64(3)) AS now,
      (SELECT min(free_space) FROM system.disks) AS free`,
  });
  const nowMs = options.nowMs ?? Number(clock!.now);
  const free = Number(clock!.free);
  const factor = options.freeFactor ?? MONTH_MERGE_FREE_FACTOR;
  const due = monthsDue(await traceMonths(ch), nowMs, options);
  const waitingForDisk = due.filter((m) => free < factor * m.bytes);
  const merged = due.find((m) => free >= factor * m.bytes);
  if (merged) {
    const onCluster = ch.cluster ? ` ON CLUSTER '${ch.cluster}'` : '';
    // The id is six digits (monthsDue), so it is spliced, not a parameter (OPTIMIZE takes none).
    await ch.maintenance.command({
      query: `OPTIMIZE TABLE ${localTable(ch)}${onCluster} PARTITION ID '${merged.partition}' FINAL`,
    });
  }
  return { ...(merged ? { merged } : {}), waitingForDisk, ms: performance.now() - started };
}
