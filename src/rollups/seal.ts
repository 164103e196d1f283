import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { PostgresStore } from '../stores/postgres.js';
import { traceLockKey, traceLocks } from '../traces/ingest-locks.js';
import { readSealMarks } from './seal-marks.js';
import { visibleStampsUpTo } from '../traces/visible-stamps.js';

/**
 * The rollup sealer (clickhouse/0015_span_rollup_seal.sql; docs/design.md, "Sealed rollups"): off the
 * insert path, a pass inserts the span rollup rows of the spans stored since the watermark (by
 * `ingested_at`, which the minmax index of 0003 makes a read of the recent granules only) into
 * span_rollup_1m and span_rollup_meta_1h, whose chained views fill the hourly rollups and the totals
 * once per pass. Reads take the rollup rows plus the spans stored after the watermark
 * (src/rollups/sealed-read.ts), so an answer never depends on the sealer having run.
 *
 * A pass, holding the sealer's lock (one pass at a time across processes):
 *   1. writes a 'begin' mark with its range (watermark, hi];
 *   2. inserts the range's rollup rows, each insert with the range as its deduplication token;
 *   3. writes the 'end' mark: hi is the new watermark.
 * Readers retry while a 'begin' is newer than the last 'end' (a seqlock: see sealed-read.ts). A pass that
 * failed between 1 and 3 left its 'begin': the next pass redoes exactly that range with the same tokens,
 * so the blocks stored before the failure (in the rollups and in the chained views'
 * tables) are dropped as duplicates and each span counts once.
 *
 * hi stops `lagMs` short of the engine's clock, and before the start of any insert into `spans` still
 * running (visibleStampsUpTo): a span stamped at or below hi must be readable when the pass reads it,
 * or it would be in neither the rollups nor the tail. A pass covers at most about `maxSpans` spans
 * (an insert's spans share one stamp and go together), so a backlog is worked off in bounded chunks,
 * oldest first.
 */

export const SEAL_LAG_MS = 5_000;
export const SEAL_EVERY_MS = 5_000;
/** At most this many spans a pass: a pass's rollup rows go out as one block (deduplication is per block). */
export const SEAL_MAX_SPANS = 200_000;

/** The sealer's lock key (a trace lock key of no project: traceLocks serialises passes across processes). */
const SEAL_LOCK_KEY = traceLockKey('', 'span-rollup-seal');

/**
 * The rollup inserts of a pass: each table and the view that computes its rows for a range of
 * `ingested_at` (clickhouse/0015). ORDER BY makes the rows, and so the blocks a retry deduplicates
 * against, the same on every attempt; one block per partition, whatever the number of months.
 */
const ROLLUPS = [
  {
    table: 'span_rollup_1m',
    tail: 'span_rollup_tail',
    key: 'project_id, bucket, model_name, environment, kind, status, name, error_type',
  },
  {
    table: 'span_rollup_meta_1h',
    tail: 'span_rollup_meta_tail',
    key: 'project_id, meta_key, bucket, meta_value, key_set, model_name, environment, kind, status, name, error_type',
  },
] as const;

/** Where a test may stop a pass between its steps (the seqlock and retry tests). */
export type SealHooks = {
  /** After the 'begin' mark, before the inserts. */
  begun?: () => Promise<void> | void;
  /** After each rollup insert (its table), before the next step. */
  inserted?: (table: string) => Promise<void> | void;
};

export type SealOptions = { lagMs?: number; maxSpans?: number; hooks?: SealHooks };

export type SealPass = {
  /** The watermark before and after the pass (epoch ms); equal when there was nothing to seal. */
  from: number;
  to: number;
  spans: number;
  /** Whether the pass redid the range of one that failed half-way. */
  redo: boolean;
  /** Whether the pass reached hi (else a backlog remains for the next passes). */
  caughtUp: boolean;
  ms: number;
};

type Ctx = { ch: ClickHouseStore; pg: PostgresStore };

export async function runSealPass(ctx: Ctx, options: SealOptions = {}): Promise<SealPass> {
  return traceLocks(ctx.ch, ctx.pg).withLocks([SEAL_LOCK_KEY], () => pass(ctx, options));
}

async function pass(ctx: Ctx, options: SealOptions): Promise<SealPass> {
  const started = performance.now();
  const lag = options.lagMs ?? SEAL_LAG_MS;
  const max = options.maxSpans ?? SEAL_MAX_SPANS;
  const marks = await readSealMarks(ctx.ch);
  const { upper } = await visibleStampsUpTo(ctx.ch, lag);
  let from = marks.sealedMs;
  let to: number;
  const redo = marks.begunMs > marks.sealedMs;
  if (redo) {
    // A pass failed after its 'begin': its very range again, so its tokens match.
    from = marks.begunFromMs;
    to = marks.begunMs;
  } else {
    if (upper <= from) return done(from, 0);
    // The chunk's end: the stamp of the max-th span after the watermark, or the upper bound.
    const [nth] = await ctx.ch.rows<{ at: string }>({
      query: `SELECT toUnixTimestamp64Milli(ingested_at) AS at FROM spans
        WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')
        ORDER BY ingested_at LIMIT 1 OFFSET {skip:UInt64}`,
      query_params: { from, to: upper, skip: max - 1 },
    });
    to = nth ? Number(nth.at) : upper;
  }
  const range = { from, to };
  const [count] = await ctx.ch.rows<{ n: string }>({
    query: `SELECT count() AS n FROM spans
      WHERE ingested_at > fromUnixTimestamp64Milli({from:Int64}, 'UTC') AND ingested_at <= fromUnixTimestamp64Milli({to:Int64}, 'UTC')`,
    query_params: range,
  });
  const spans = Number(count!.n);
  // Nothing stored in the range (so it reached hi): the watermark stays, and readers, seeing no
  // change, never retry.
  if (spans === 0 && !redo) return { ...done(from, 0), caughtUp: true };
  if (!redo) await mark(ctx.ch, 'begin', range);
  await options.hooks?.begun?.();
  // Deleted projects are not sealed (their spans wait for the purge: src/deletions), so a purge never
  // leaves rollup rows written after it.
  const { rows: live } = await ctx.pg.pool.query<{ id: string }>(
    'SELECT id::text AS id FROM projects WHERE deleted_at IS NULL',
  );
  for (const r of ROLLUPS) {
    await ctx.ch.client.command({
      query: `INSERT INTO ${r.table}
SELECT * FROM ${r.tail}(stored_after = fromUnixTimestamp64Milli({from:Int64}, 'UTC'), stored_until = fromUnixTimestamp64Milli({to:Int64}, 'UTC'))
WHERE project_id IN {projects:Array(String)}
ORDER BY ${r.key}
SETTINGS insert_deduplication_token = '${token(r.table, range)}', deduplicate_blocks_in_dependent_materialized_views = 1,
  max_partitions_per_insert_block = 0, max_bytes_before_external_group_by = 1000000000`,
      query_params: { ...range, projects: live.map((p) => p.id) },
    });
    await options.hooks?.inserted?.(r.table);
  }
  await mark(ctx.ch, 'end', range);
  return done(to, spans);

  function done(at: number, n: number): SealPass {
    return { from, to: at, spans: n, redo, caughtUp: at >= upper, ms: performance.now() - started };
  }
}

/** A pass's deduplication token: its table and range, so a retry of the range repeats it (digits only: spliced). */
function token(table: string, range: { from: number; to: number }): string {
  return `seal-${table}-${Math.trunc(range.from)}-${Math.trunc(range.to)}`;
}

function mark(ch: ClickHouseStore, kind: 'begin' | 'end', range: { from: number; to: number }) {
  return ch.client.command({
    query: `INSERT INTO span_rollup_seal_marks (project_id, kind, range_start, range_end)
      VALUES ('', {kind:String}, fromUnixTimestamp64Milli({from:Int64}, 'UTC'), fromUnixTimestamp64Milli({to:Int64}, 'UTC'))`,
    query_params: { kind, ...range },
  });
}

/** Passes until the sealer has caught up with `lagMs` ago (tests, the bench, a first start). */
export async function catchUpSeal(ctx: Ctx, options: SealOptions = {}): Promise<SealPass[]> {
  const passes: SealPass[] = [];
  for (;;) {
    const p = await runSealPass(ctx, options);
    passes.push(p);
    if (p.caughtUp) return passes;
  }
}
