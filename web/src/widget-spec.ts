import { fmtCost, fmtInt, fmtMs, fmtNumber } from './format';
import type { WidgetSpec } from './types';

/**
 * What a query widget's spec may say (docs/dashboards.md): the lists are the server's own
 * (src/widgets/vocabulary.ts, which the spec's schema reads too), so the editor's menus never drift
 * from what the server accepts; the server still validates every spec (a 422 names the field).
 */
export {
  AGGREGATIONS,
  GROUP_FIELDS,
  IDENTITY_MEASURES,
  INTERVALS,
  MEASURES,
  VIEWS,
} from '../../src/widgets/vocabulary';
/** The windows `GET /dashboards/{id}/data` takes as `range` (src/widgets/data.ts, RANGES). */
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
