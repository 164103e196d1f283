import { z } from 'zod';
import { SpanFilterSchema, type SpanFilter } from '../query/predicates.js';
import { AGGREGATIONS } from '../query/measures.js';

/**
 * A query widget's spec (docs/dashboards.md): one contract for writes (422 on an invalid spec), the
 * planner (src/query/span-plan.ts) and `POST /widgets/query`. Pure.
 */

export const WIDGET_TYPES = ['timeseries', 'stat', 'table', 'bar', 'markdown'] as const;
export const QUERY_WIDGET_TYPES = ['timeseries', 'stat', 'table', 'bar'] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];

export const VIEWS = ['SPANS', 'TRACES'] as const;
export type View = (typeof VIEWS)[number];

export { AGGREGATIONS, type Aggregation } from '../query/measures.js';

export const INTERVALS = ['auto', '1m', '5m', '1h', '1d'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * Measures by view. `latency` is an alias of `duration_ms`. `error_rate` is the share of rows in
 * error (spans with status error; traces with at least one), whatever the aggregation.
 * `count` counts rows; with `uniq`, a measure names the column whose distinct values are counted.
 */
export const MEASURES: Record<View, readonly string[]> = {
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
    // More span fields (docs/spans.md): read from raw spans, the rollups keep no state for them.
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

/** Fields a widget may group by (`metadata.<key>` too). */
export const GROUP_FIELDS: Record<View, readonly string[]> = {
  SPANS: ['model_name', 'environment', 'kind', 'status', 'name', 'error_type', 'user_id', 'session_id'],
  TRACES: ['name', 'user_id', 'session_id'],
};

export const MAX_GROUP_BY = 3;
export const MAX_WIDGET_ROWS = 1000;
const METADATA_GROUP = /^metadata\.[A-Za-z0-9_.:-]{1,256}$/;

/** A widget's filters are span predicates (src/query/predicates.ts). */
export type WidgetFilter = SpanFilter;

export const WidgetSpecSchema = z
  .strictObject({
    view: z.enum(VIEWS),
    measure: z.string().min(1).max(64),
    aggregation: z.enum(AGGREGATIONS),
    group_by: z.array(z.string().min(1).max(300)).max(MAX_GROUP_BY).optional(),
    interval: z.enum(INTERVALS).optional(),
    filters: z.array(SpanFilterSchema).max(20).optional(),
    limit: z.int().min(1).max(MAX_WIDGET_ROWS).optional(),
  })
  .superRefine((spec, ctx) => {
    if (!MEASURES[spec.view].includes(spec.measure)) {
      ctx.addIssue({
        code: 'custom',
        path: ['measure'],
        message: `measure must be one of ${MEASURES[spec.view].join(', ')} for view ${spec.view}`,
      });
    }
    for (const [i, field] of (spec.group_by ?? []).entries()) {
      if (!GROUP_FIELDS[spec.view].includes(field) && !METADATA_GROUP.test(field)) {
        ctx.addIssue({
          code: 'custom',
          path: ['group_by', i],
          message: `cannot group ${spec.view} by ${field}; use ${GROUP_FIELDS[spec.view].join(', ')} or metadata.<key>`,
        });
      }
    }
    const numeric = !['user_id', 'session_id', 'trace_id', 'model_name'].includes(spec.measure);
    if (!numeric && spec.aggregation !== 'uniq' && spec.aggregation !== 'count') {
      ctx.addIssue({
        code: 'custom',
        path: ['aggregation'],
        message: `measure ${spec.measure} takes aggregation uniq or count`,
      });
    }
  });
export type WidgetSpec = z.infer<typeof WidgetSpecSchema>;

/**
 * The most a stored spec may take as JSON: a dashboard read and its data read load every widget's
 * spec (up to 50 per dashboard), so one widget can't make them megabytes.
 */
export const MAX_SPEC_BYTES = 64 * 1024;

/** A widget's spec as its type requires: query widgets need a valid spec, markdown any JSON. */
export function specIssues(type: WidgetType, spec: unknown): z.core.$ZodIssue[] {
  const size = Buffer.byteLength(JSON.stringify(spec) ?? '');
  if (size > MAX_SPEC_BYTES) {
    return [
      {
        code: 'custom',
        path: [],
        message: `spec must be at most ${MAX_SPEC_BYTES} bytes of JSON`,
        input: spec,
      } as z.core.$ZodIssue,
    ];
  }
  if (type === 'markdown') return [];
  const result = WidgetSpecSchema.safeParse(spec);
  return result.success ? [] : result.error.issues;
}

/** The default "Overview" dashboard of every project (docs/dashboards.md). */
export const OVERVIEW_WIDGETS: { title: string; type: WidgetType; spec: WidgetSpec }[] = [
  {
    title: 'Volume',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'count', aggregation: 'count', interval: 'auto' },
  },
  {
    title: 'Error rate',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'error_rate', aggregation: 'avg', interval: 'auto' },
  },
  {
    title: 'Latency p50',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'latency', aggregation: 'p50', interval: 'auto' },
  },
  {
    title: 'Latency p95',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'latency', aggregation: 'p95', interval: 'auto' },
  },
  {
    title: 'Latency p99',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'latency', aggregation: 'p99', interval: 'auto' },
  },
  { title: 'Cost', type: 'timeseries', spec: { view: 'SPANS', measure: 'cost', aggregation: 'sum', interval: 'auto' } },
  {
    title: 'Tokens',
    type: 'timeseries',
    spec: { view: 'SPANS', measure: 'total_tokens', aggregation: 'sum', interval: 'auto' },
  },
];
