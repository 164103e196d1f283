import type { PartWindow } from '../query/exports.js';

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
