/**
 * The buckets of a series (pure): the step an interval and a window give, coarsened when the answer
 * would hold too many points or cells, and the groups a series or table shows (issue 9, bounded answers).
 */

const WEEK = 604800;
const STEPS = [60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, WEEK];
const FIXED_STEPS: Record<string, number> = { '1m': 60, '5m': 300, '1h': 3600, '1d': 86400 };
/** The most points "auto" aims at. */
export const MAX_POINTS = 300;
/** The most buckets of any series: a finer fixed interval is coarsened to the next step that fits. */
export const MAX_SERIES_POINTS = 1500;
/** The most groups (lines) of a grouped series, whatever its `limit` (tables keep theirs, up to 1,000). */
export const MAX_SERIES_GROUPS = 50;
/** The most buckets × groups of one series answer: many groups get fewer, coarser buckets. */
export const MAX_SERIES_CELLS = 20_000;
const DEFAULT_GROUPS = 10;
/** A grouped single-value answer (table, bar) without a `limit`: its top rows. */
export const DEFAULT_ROWS = 100;

export const MIN_POINTS = 30;
const TARGET_POINTS = 100;

/**
 * The bucket step for a window: fixed, or "auto": among the steps giving 30 to 300 points, the one
 * nearest 100 (a readable chart, and coarse steps let long windows read daily totals).
 */
export function stepFor(interval: string | undefined, windowMs: number): number {
  if (interval && interval !== 'auto') return FIXED_STEPS[interval]!;
  const seconds = windowMs / 1000;
  const fits = STEPS.filter((s) => seconds / s <= MAX_POINTS && seconds / s >= MIN_POINTS);
  if (!fits.length) return STEPS.find((s) => seconds / s <= MAX_POINTS) ?? STEPS.at(-1)!;
  return fits.reduce((best, s) =>
    Math.abs(Math.log(seconds / s / TARGET_POINTS)) < Math.abs(Math.log(seconds / best / TARGET_POINTS)) ? s : best,
  );
}

/** Buckets a step can cut a window into: whole steps, plus one for a start that is not aligned. */
function bucketsFor(windowMs: number, step: number): number {
  return Math.ceil(windowMs / 1000 / step) + 1;
}

/** The groups a grouped series shows. */
export function seriesGroupLimit(spec: { limit?: number }): number {
  return Math.min(spec.limit ?? DEFAULT_GROUPS, MAX_SERIES_GROUPS);
}

export type SeriesStep = { step: number; coarsenedFrom: number | null; maxBuckets: number };

/**
 * A series' step: the interval's (stepFor), unless the window would then hold more buckets than
 * MAX_SERIES_POINTS, or than MAX_SERIES_CELLS / `groups`; then the smallest coarser step that fits
 * (whole weeks beyond the step list, for windows of years). A dashboard's stored "1m" over 90 days
 * still answers, coarser, instead of failing or building millions of buckets.
 */
export function seriesStep(interval: string | undefined, windowMs: number, groups: number): SeriesStep {
  const maxPoints = Math.min(MAX_SERIES_POINTS, Math.floor(MAX_SERIES_CELLS / Math.max(1, groups)));
  const fits = (s: number) => bucketsFor(windowMs, s) <= maxPoints;
  const wanted = stepFor(interval, windowMs);
  const fixed = interval !== undefined && interval !== 'auto';
  if (fits(wanted)) return { step: wanted, coarsenedFrom: null, maxBuckets: bucketsFor(windowMs, wanted) };
  const step = STEPS.find((s) => s > wanted && fits(s)) ?? WEEK * Math.ceil(windowMs / 1000 / WEEK / (maxPoints - 1));
  return { step, coarsenedFrom: fixed ? wanted : null, maxBuckets: bucketsFor(windowMs, step) };
}
