import type { Query } from './params.js';
import { MIB, READ_MEMORY_BYTES, type QueryLimits } from './limits.js';
import type { Aggregation } from './measures.js';
import type { SpanFilter } from './predicates.js';
import { DEFAULT_ROWS, seriesGroupLimit, seriesStep } from './series-steps.js';

/**
 * What every widget plan shares (pure): the spec and plan types, and the frame a spec and a window
 * give before any SQL: the answer's shape, its buckets, the aligned range and the answer's bounds.
 * The span planner (span-plan.ts) and the scores planner (score-plan.ts) both start from it, so a
 * SCORES widget buckets and bounds its answer exactly as any other.
 */

/**
 * What the planner reads of a widget spec (src/widgets/spec.ts validates it; an alert's spec is
 * built by src/alerts/schema.ts). `group_by` names span fields or `metadata.<key>`.
 */
export type MeasureSpec = {
  view: 'SPANS' | 'TRACES' | 'SCORES';
  /** The SCORES view's score name. */
  score_name?: string;
  measure: string;
  aggregation: Aggregation;
  group_by?: string[];
  interval?: string;
  filters?: SpanFilter[];
  limit?: number;
};

export type PlanWindow = { startMs: number; endMs: number };
export type Shape = 'series' | 'groups' | 'single';
export type Source =
  | 'span_rollup_1m'
  | 'span_rollup_1h'
  | 'span_rollup_totals_1m'
  | 'span_rollup_totals_1h'
  | 'span_rollup_totals_1d'
  | 'span_rollup_meta_1h'
  | 'span_rollup_meta_totals_1h'
  | 'span_rollup_meta_totals_1d'
  | 'spans'
  | 'traces'
  | 'scores';

export type WidgetPlan = Query & {
  source: Source;
  /** Whether the query reads a rollup, and so needs the `sealed` parameter (src/rollups/sealed-read.ts). */
  sealed: boolean;
  /** A rollup read: the same query over the rollups alone (no tail), for a project with no span past the watermark. */
  untailed?: Query;
  shape: Shape;
  /** Bucket width in seconds (series), else the grain the range was aligned to. */
  stepSeconds: number;
  /** Series: the fixed interval's step when it was coarsened to fit the point caps, else null. */
  coarsenedFromSeconds: number | null;
  /** Series: the most buckets the range can hold (what the filler may loop over). */
  maxBuckets: number;
  /** Grouped widgets: the most groups answered (a series' top groups, a table's rows). */
  groupLimit: number | null;
  /** The most rows the query can answer, and bytes: it runs with `max_result_rows`/`max_result_bytes` set to these. */
  maxRows: number;
  maxBytes: number;
  /** The aligned range the query reads, epoch ms, end exclusive. */
  rangeStartMs: number;
  rangeEndMs: number;
  groupBy: string[];
  /** What an empty bucket shows: additive measures 0, the others null. */
  empty: 0 | null;
  /**
   * The value columns that end each answered row: `value`, and for the SCORES view `count` (and
   * `ci_low`, `ci_high` for avg). An empty bucket shows `empty` for `value`, 0 for `count`, else null.
   */
  values: string[];
};

/**
 * Each widget query's limits (src/query/limits.ts); its answer rows are bounded by the plan itself
 * (buckets × groups, or `limit`), so max_result_rows is set per plan.
 */
export const WIDGET_LIMITS: Omit<QueryLimits, 'maxResultRows'> = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: READ_MEMORY_BYTES,
  maxResultBytes: 16 * MIB,
};

export type Frame = {
  shape: Shape;
  stepSeconds: number;
  rangeStartMs: number;
  rangeEndMs: number;
  limits: QueryLimits;
  /** The plan fields the frame decides. */
  base: Omit<WidgetPlan, keyof Query | 'source' | 'sealed' | 'untailed' | 'values'>;
};

/**
 * Series are bucketed by the interval ("auto": the smallest step giving at most 300 points, at least
 * 30 whenever the window allows); the range is widened to whole buckets of the coarsest table the
 * step allows, so rollups and raw rows read the same range. A table's rows are its `limit`.
 */
export function planFrame(
  type: string,
  spec: MeasureSpec,
  window: PlanWindow,
  options: { empty: 0 | null; answerBytes?: number },
): Frame {
  const groupBy = spec.group_by ?? [];
  const shape: Shape = type === 'timeseries' ? 'series' : groupBy.length ? 'groups' : 'single';
  const windowMs = Math.max(1, window.endMs - window.startMs);
  const groupLimit = !groupBy.length
    ? null
    : shape === 'series'
      ? seriesGroupLimit(spec)
      : (spec.limit ?? DEFAULT_ROWS);
  const series = shape === 'series' ? seriesStep(spec.interval, windowMs, groupLimit ?? 1) : null;
  const step = series ? series.step : windowMs >= 86_400_000 ? 3600 : 60;
  const rangeStartMs = Math.floor(window.startMs / (step * 1000)) * step * 1000;
  const grainMs = (step % 86400 === 0 ? 86400 : step % 3600 === 0 ? 3600 : 60) * 1000;
  const rangeEndMs = Math.ceil(window.endMs / grainMs) * grainMs;
  const maxBuckets = series ? series.maxBuckets : 1;
  // The answer's rows, known before the query runs: buckets × groups, a table's limit, or one value.
  const maxRows = shape === 'series' ? maxBuckets * (groupLimit ?? 1) : shape === 'groups' ? groupLimit! : 1;
  const limits = {
    ...WIDGET_LIMITS,
    maxResultRows: maxRows,
    maxResultBytes: Math.min(WIDGET_LIMITS.maxResultBytes, options.answerBytes ?? Infinity),
  };
  return {
    shape,
    stepSeconds: step,
    rangeStartMs,
    rangeEndMs,
    limits,
    base: {
      shape,
      stepSeconds: step,
      coarsenedFromSeconds: series?.coarsenedFrom ?? null,
      maxBuckets,
      groupLimit,
      maxRows,
      maxBytes: limits.maxResultBytes,
      rangeStartMs,
      rangeEndMs,
      groupBy,
      empty: options.empty,
    },
  };
}
