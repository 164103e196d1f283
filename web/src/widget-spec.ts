import { fmtCost, fmtInt, fmtMs, fmtNumber } from './format';
import type { WidgetSpec } from './types';
import { GROUP_FIELDS, MEASURES, VIEWS } from '../../src/widgets/vocabulary';

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

/**
 * The SCORES view (docs/scores.md, "Scores in widgets"): one score name's values, `measure: "value"`,
 * grouped by the score's source or label and the trace dimensions. Written here as well as in the
 * server's lists so the editor offers it whether or not the served vocabulary names it yet.
 */
export const SCORES_VIEW = 'SCORES';
export type EditorSpec = Omit<WidgetSpec, 'view'> & {
  view: WidgetSpec['view'] | typeof SCORES_VIEW;
  score_name?: string;
};
export const EDITOR_VIEWS = [...new Set<string>([...VIEWS, SCORES_VIEW])] as EditorSpec['view'][];
export const SCORE_AGGREGATIONS = ['avg', 'min', 'max', 'sum', 'count', 'p50', 'p75', 'p90', 'p95', 'p99'];
const SCORE_GROUP_FIELDS = [
  'score_source',
  'score_string_value',
  'evaluator_version',
  'model_name',
  'environment',
  'name',
  'user_id',
  'session_id',
  'prompt_name',
  'prompt_version',
];
export const VIEW_LABELS: Record<string, string> = { SPANS: 'Spans', TRACES: 'Traces', SCORES: 'Scores' };

export function measuresOf(view: string): readonly string[] {
  if (view === SCORES_VIEW) return ['value'];
  return (MEASURES as Record<string, readonly string[]>)[view] ?? ['count'];
}

export function groupFieldsOf(view: string): readonly string[] {
  return (GROUP_FIELDS as Record<string, readonly string[]>)[view] ?? (view === SCORES_VIEW ? SCORE_GROUP_FIELDS : []);
}

/** A widget's values formatted by what they measure. */
export function valueFormatter(
  spec: { measure?: string; aggregation?: string } | undefined,
): (v: number | null | undefined) => string {
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
