import { fmtCost, fmtInt, fmtMs, fmtNumber } from './format';
import type { WidgetSpec } from './types';

/**
 * What a query widget's spec may say (docs/dashboards.md). The server's contract is
 * src/widgets/spec.ts; these lists mirror it for the editor's menus, and the server still validates
 * every spec (a 422 names the field).
 */
export const VIEWS = ['SPANS', 'TRACES'] as const;
export const AGGREGATIONS = ['count', 'sum', 'avg', 'min', 'max', 'p50', 'p75', 'p90', 'p95', 'p99', 'uniq'] as const;
export const INTERVALS = ['auto', '1m', '5m', '1h', '1d'] as const;
export const MEASURES: Record<WidgetSpec['view'], string[]> = {
  SPANS: [
    'count',
    'latency',
    'duration_ms',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'error_count',
    'error_rate',
    'user_id',
    'session_id',
    'trace_id',
    'model_name',
    'cache_read_tokens',
    'cache_write_tokens',
    'reasoning_tokens',
    'time_to_first_token_ms',
    'output_tokens_per_second',
  ],
  TRACES: [
    'count',
    'latency',
    'duration_ms',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'error_count',
    'error_rate',
    'span_count',
    'user_id',
    'session_id',
  ],
};
export const GROUP_FIELDS: Record<WidgetSpec['view'], string[]> = {
  SPANS: ['model_name', 'environment', 'kind', 'status', 'name', 'error_type', 'user_id', 'session_id'],
  TRACES: ['name', 'user_id', 'session_id'],
};
/** Measures that name a column: counted (`count`) or counted distinct (`uniq`), never summed. */
export const IDENTITY_MEASURES = ['user_id', 'session_id', 'trace_id', 'model_name'];
export const RANGE_PRESETS = ['30m', '1h', '3h', '6h', '1d', '7d', '14d', '30d', '60d', '90d'];

/** A widget's values formatted by what they measure. */
export function valueFormatter(spec: Partial<WidgetSpec> | undefined): (v: number | null | undefined) => string {
  const measure = spec?.measure;
  if (measure === 'latency' || measure === 'duration_ms') return (v) => fmtMs(v);
  if (measure === 'time_to_first_token_ms' && spec?.aggregation !== 'count') return (v) => fmtMs(v);
  if (measure === 'cost') return (v) => fmtCost(v);
  if (measure === 'error_rate')
    return (v) => (v === null || v === undefined ? '–' : `${(v * 100).toFixed(v < 0.1 ? 2 : 1)}%`);
  if (
    spec?.aggregation === 'count' ||
    spec?.aggregation === 'uniq' ||
    measure?.endsWith('tokens') ||
    measure === 'count'
  )
    return (v) => fmtInt(v);
  return (v) => fmtNumber(v);
}

export function defaultSpec(): WidgetSpec {
  return { view: 'SPANS', measure: 'count', aggregation: 'count', interval: 'auto' };
}

export function asSpec(spec: unknown): WidgetSpec | undefined {
  return spec && typeof spec === 'object' && 'view' in spec ? (spec as WidgetSpec) : undefined;
}
