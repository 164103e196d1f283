import { z } from 'zod';
import { SpanFilterSchema, type SpanFilter } from '../query/predicates.js';
import {
  AGGREGATIONS,
  GROUP_FIELDS,
  IDENTITY_MEASURES,
  INTERVALS,
  MEASURES,
  SCORE_AGGREGATIONS,
  VIEWS,
  type WidgetType,
} from './vocabulary.js';

/**
 * A query widget's spec (docs/dashboards.md): one contract for writes (422 on an invalid spec), the
 * planner (src/query/span-plan.ts) and `POST /widgets/query`. Pure.
 */

// The spec's words live in vocabulary.ts (shared with the web app's editor).
export {
  AGGREGATIONS,
  GROUP_FIELDS,
  IDENTITY_MEASURES,
  INTERVALS,
  MEASURES,
  QUERY_WIDGET_TYPES,
  SCORE_AGGREGATIONS,
  VIEWS,
  WIDGET_TYPES,
  type Aggregation,
  type Interval,
  type View,
  type WidgetType,
} from './vocabulary.js';

export const MAX_GROUP_BY = 3;
export const MAX_WIDGET_ROWS = 1000;
const METADATA_GROUP = /^metadata\.[A-Za-z0-9_.:-]{1,256}$/;

/** A widget's filters are span predicates (src/query/predicates.ts). */
export type WidgetFilter = SpanFilter;

export const WidgetSpecSchema = z
  .strictObject({
    view: z.enum(VIEWS),
    // The SCORES view's score name (required there, refused elsewhere): quality.md §1.
    score_name: z.string().min(1).max(128).optional(),
    measure: z.string().min(1).max(64),
    aggregation: z.enum(AGGREGATIONS),
    group_by: z.array(z.string().min(1).max(300)).max(MAX_GROUP_BY).optional(),
    interval: z.enum(INTERVALS).optional(),
    filters: z.array(SpanFilterSchema).max(20).optional(),
    limit: z.int().min(1).max(MAX_WIDGET_ROWS).optional(),
  })
  .superRefine((spec, ctx) => {
    if (spec.view === 'SCORES' && spec.score_name === undefined)
      ctx.addIssue({ code: 'custom', path: ['score_name'], message: 'the SCORES view needs score_name' });
    if (spec.view !== 'SCORES' && spec.score_name !== undefined)
      ctx.addIssue({ code: 'custom', path: ['score_name'], message: 'score_name is for the SCORES view only' });
    if (spec.view === 'SCORES' && !(SCORE_AGGREGATIONS as readonly string[]).includes(spec.aggregation))
      ctx.addIssue({
        code: 'custom',
        path: ['aggregation'],
        message: `the SCORES view takes aggregation ${SCORE_AGGREGATIONS.join(', ')}`,
      });
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
    const numeric = !IDENTITY_MEASURES.includes(spec.measure);
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
  // Where the money goes (issue 37): the models that cost most, and the users whose traces cost most
  // (a trace's user and total, so a child span without the user still counts for it).
  {
    title: 'Cost by model',
    type: 'bar',
    spec: { view: 'SPANS', measure: 'cost', aggregation: 'sum', group_by: ['model_name'], limit: 10 },
  },
  {
    title: 'Cost by user',
    type: 'bar',
    spec: { view: 'TRACES', measure: 'cost', aggregation: 'sum', group_by: ['user_id'], limit: 10 },
  },
];
