/**
 * How a read names a span rollup (clickhouse/0015_span_rollup_seal.sql): through its `_sealed` view,
 * the rollup's rows plus the same-shaped rows of the spans stored after the sealer's watermark. The
 * watermark is the query's `sealed` parameter, left out by the pure builders (span-plan.ts,
 * src/alerts/queries.ts) and set by the one read that knows it (src/rollups/sealed-read.ts), so a
 * rollup read that skipped it fails instead of counting a span twice or never. Pure.
 */

/** The name of the watermark's query parameter (epoch seconds, ms precision). */
export const SEALED_PARAM = 'sealed';

const WATERMARK = `{${SEALED_PARAM}:DateTime64(3, 'UTC')}`;

/**
 * `FROM` of a rollup read: the rollup and the tail past the watermark; without `tail`, the rollup
 * alone (for a project with no span past the watermark: sealed-read.ts checks, and the tail's query,
 * planned for every read, is most of a small read's cost).
 */
export function sealedRollup(table: string, tail = true): string {
  return tail ? `${table}_sealed(sealed = ${WATERMARK})` : table;
}

/**
 * `FROM` of the tail alone (the rollup rows of the spans stored after the watermark), for a read that
 * unions rollups itself: `span_rollup_tail` (per minute) or `span_rollup_meta_tail` (per hour).
 */
export function rollupTail(view: 'span_rollup_tail' | 'span_rollup_meta_tail'): string {
  return `${view}(stored_after = ${WATERMARK}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'))`;
}
