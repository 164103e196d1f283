/**
 * The aggregations a span measure takes (docs/dashboards.md). Pure, no imports: the query layer
 * (measures.ts), the widget vocabulary (src/widgets/vocabulary.ts) and the web app's editor read this list.
 */
export const AGGREGATIONS = ['sum', 'avg', 'count', 'max', 'min', 'p50', 'p75', 'p90', 'p95', 'p99', 'uniq'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
