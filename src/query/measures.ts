import type { ParamBuilder } from './params.js';
import { DURATION_MS_OR_NULL } from './expressions.js';

/**
 * A measure of spans (a widget's, an alert's) as one aggregate expression, over raw spans or over a
 * span rollup (clickhouse/0002_span_rollups.sql), and a span group-by as an expression. The widget
 * planner (span-plan.ts) and the alert queries (src/alerts/queries.ts) both use these, so an alert's
 * value is the widget engine's for the same spec. Pure.
 */

import type { Aggregation } from './aggregations.js';
export type { Aggregation } from './aggregations.js';

/** What a measure expression needs of a spec: what is measured, and how it is aggregated. */
export type Measure = { measure: string; aggregation: Aggregation };

const QUANTILES: Partial<Record<Aggregation, number>> = { p50: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 };

/** An aggregation of an expression over raw rows (quantiles as t-digests, as the rollups keep them). */
export function aggregate(aggregation: Aggregation, x: string): string {
  const q = QUANTILES[aggregation];
  if (q !== undefined) return `quantileTDigest(${q})(${x})`;
  return `${aggregation}(${x})`;
}

/** The value over raw spans. */
export function rawSpanValue(spec: Measure): string {
  const duration = DURATION_MS_OR_NULL;
  switch (spec.measure) {
    case 'count':
      return 'toFloat64(count())';
    case 'error_rate':
      return "if(count() = 0, NULL, countIf(status = 'error') / count())";
    case 'error_count':
      return spec.aggregation === 'avg'
        ? "avg(status = 'error')"
        : spec.aggregation === 'count' || spec.aggregation === 'sum'
          ? "toFloat64(countIf(status = 'error'))"
          : aggregate(spec.aggregation, "toUInt8(status = 'error')");
    case 'latency':
    case 'duration_ms':
      return spec.aggregation === 'count' ? `toFloat64(count(${duration}))` : aggregate(spec.aggregation, duration);
    case 'user_id':
    case 'session_id':
    case 'trace_id':
    case 'model_name':
      return spec.aggregation === 'uniq'
        ? `toFloat64(uniqIf(${spec.measure}, ${spec.measure} != ''))`
        : `toFloat64(countIf(${spec.measure} != ''))`;
    case 'time_to_first_token_ms':
    case 'output_tokens_per_second':
      // NULL on spans without the timing: every aggregation (count too) is over the spans that have it.
      return spec.aggregation === 'count'
        ? `toFloat64(count(${spec.measure}))`
        : `toFloat64(${aggregate(spec.aggregation, spec.measure)})`;
    default:
      return spec.aggregation === 'count'
        ? 'toFloat64(count())'
        : `toFloat64(${aggregate(spec.aggregation, spec.measure)})`;
  }
}

/** The value over a span rollup, or null when the rollup has no state for it. */
export function rollupValue(spec: Measure): string | null {
  const ratio = (num: string, den: string) => `if(sum(${den}) = 0, NULL, sum(${num}) / sum(${den}))`;
  const a = spec.aggregation;
  switch (spec.measure) {
    case 'count':
      return 'toFloat64(sum(spans))';
    case 'error_rate':
      return ratio('errors', 'spans');
    case 'error_count':
      return a === 'sum' || a === 'count' ? 'toFloat64(sum(errors))' : a === 'avg' ? ratio('errors', 'spans') : null;
    case 'latency':
    case 'duration_ms': {
      const q = QUANTILES[a];
      if (q !== undefined) return `quantileTDigestMerge(${q})(duration_q)`;
      return (
        {
          sum: 'sum(duration_sum)',
          avg: ratio('duration_sum', 'durations'),
          count: 'toFloat64(sum(durations))',
          min: 'min(duration_min)',
          max: 'max(duration_max)',
        }[a as string] ?? null
      );
    }
    case 'cost':
    case 'input_tokens':
    case 'output_tokens':
    case 'total_tokens':
      return a === 'sum'
        ? `toFloat64(sum(${spec.measure}))`
        : a === 'avg'
          ? ratio(spec.measure, 'spans')
          : a === 'count'
            ? 'toFloat64(sum(spans))'
            : null;
    case 'user_id':
      return a === 'uniq' ? 'toFloat64(uniqMerge(users))' : null;
    case 'session_id':
      return a === 'uniq' ? 'toFloat64(uniqMerge(sessions))' : null;
    case 'trace_id':
      return a === 'uniq' ? 'toFloat64(uniqMerge(traces))' : null;
    default:
      return null;
  }
}

/** A span group-by (`model_name`, `metadata.<key>`, ...) as a String expression on spans or a rollup. */
export function spanGroup(field: string, b: ParamBuilder): string {
  if (field.startsWith('metadata.')) return `metadata[${b.param('String', field.slice('metadata.'.length))}]`;
  // 0 is "no prompt version" (clickhouse/0019_span_prompt.sql): the group without one is '', as for text fields.
  if (field === 'prompt_version') return "if(prompt_version = 0, '', toString(prompt_version))";
  return `toString(${field})`;
}
