import type { PartChunk, PartWindow } from '../query/exports.js';

/** A part of an export's plan: its window of rows and how many rows the plan counted in it. */
export type PlannedPart = PartWindow & { rows: number };

const HOUR = 3600;

/**
 * Groups an export's rows by hour (src/query/exports.ts `planQuery`, oldest first) into parts of at
 * most `partRows` rows: consecutive hours while they fit, and an hour holding more alone, split into
 * `ceil(rows / partRows)` shards by a hash of the row id (so a shard holds about `partRows`). The plan
 * is fixed once an export first runs (stored on its row), so a re-run writes the same parts under the
 * same names. Pure.
 */
export function planParts(hours: readonly { hour: number; rows: number }[], partRows: number): PlannedPart[] {
  const parts: PlannedPart[] = [];
  let open: PlannedPart | undefined;
  const close = () => {
    if (open) parts.push(open);
    open = undefined;
  };
  for (const { hour, rows } of hours) {
    if (rows <= 0) continue;
    if (rows > partRows) {
      close();
      const shards = Math.ceil(rows / partRows);
      for (let shard = 0; shard < shards; shard++)
        parts.push({ from_hour: hour, to_hour: hour + HOUR, shards, shard, rows: shard === 0 ? rows : 0 });
      continue;
    }
    if (open && open.rows + rows <= partRows) {
      open.to_hour = hour + HOUR;
      open.rows += rows;
    } else {
      close();
      open = { from_hour: hour, to_hour: hour + HOUR, shards: 1, shard: 0, rows };
    }
  }
  close();
  return parts;
}

/** The name of a part's file or object: `part-00001.parquet` (1-based, as the parts run). */
export function partName(index: number, format: 'parquet' | 'jsonl' | 'csv'): string {
  return `part-${String(index + 1).padStart(5, '0')}.${format}`;
}

/**
 * Cuts a part's rows by minute (src/query/exports.ts `partMinutesQuery`, oldest first) into chunks of
 * consecutive minutes of at most `chunkRows` rows (a minute holding more is a chunk alone). The chunks
 * are time ranges that meet end to start, the first open below and the last open above, so together
 * they hold every row of the part, in order, whatever was added since the minutes were counted. Pure.
 */
export function planChunks(minutes: readonly { minute: number; rows: number }[], chunkRows: number): PartChunk[] {
  const starts: number[] = [];
  let rows = 0;
  for (const m of minutes) {
    if (m.rows <= 0) continue;
    if (starts.length === 0 || rows + m.rows > chunkRows) {
      starts.push(m.minute);
      rows = 0;
    }
    rows += m.rows;
  }
  if (starts.length <= 1) return [{}];
  return starts.map((start, i) => ({
    ...(i > 0 ? { from: start } : {}),
    ...(i + 1 < starts.length ? { to: starts[i + 1]! } : {}),
  }));
}
