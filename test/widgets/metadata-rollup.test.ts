import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { queryWidget, type WidgetResult } from '../../src/widgets/data.js';
import { WidgetSpecSchema, type Aggregation, type WidgetSpec, type WidgetType } from '../../src/widgets/spec.js';
import { readMigrations, ROOT_DIR, splitStatements } from '../../src/stores/migrate.js';
import { ingestSpans } from '../support/ingest.js';
import { waitUntil } from '../support/wait.js';

/**
 * The metadata rollup (clickhouse/0006_span_rollup_metadata.sql) answers as raw spans do: widgets
 * that filter by one metadata key or group by `metadata.<key>` read span_rollup_meta_1h and equal
 * `queryWidget(..., {raw})` on real ingested data, where a key is sometimes only on a child span,
 * sometimes set to '', spans of a trace arrive hours after the rest, a batch is re-sent (ingest
 * drops it), and part of the data was stored before the rollup existed (the migration's backfill).
 */

const h = useHarness();
const HOUR = 3_600_000;
const END = Math.floor(Date.now() / HOUR) * HOUR;
const WEEK = { startMs: END - 7 * 24 * HOUR, endMs: END };
const SPANS = (() => {
  const spans = generateSpans({
    traces: 400,
    startMs: WEEK.startMs,
    endMs: END - 10 * 60_000,
    seed: 23,
    errorShare: 0.1,
  });
  const roots = new Map(spans.filter((s) => !s.parent_span_id).map((s) => [s.trace_id, s]));
  let n = 0;
  for (const [traceId, root] of roots) {
    n++;
    const child = spans.find((s) => s.trace_id === traceId && s.parent_span_id);
    // Every 5th trace: the tier only on a child span (and the root without it).
    if (n % 5 === 0 && child) {
      const { customer_tier: tier, ...rest } = (root.metadata ?? {}) as Record<string, string>;
      root.metadata = rest;
      child.metadata = { ...(child.metadata ?? {}), customer_tier: `child-${tier ?? 'x'}` };
    }
    // Every 7th trace: an empty region (metadata[region] = '' like a span without it).
    if (n % 7 === 0) root.metadata = { ...(root.metadata ?? {}), region: '' };
  }
  return spans;
})();
/** Sent last, hours after their traces' other spans were stored. */
const LATE = SPANS.filter((_, i) => i % 9 === 4);
const FIRST = SPANS.filter((_, i) => i % 9 !== 4);
let projectId: string;

beforeAll(async () => {
  const setup = await projectWithKey(h());
  projectId = setup.project.id;
  const client = h().ctx.ch.client;
  // The first part is stored "before the migration": its rollup rows are dropped, the view's start
  // moved to now, and the migration's backfill (its last statement) rebuilds them at the end.
  await ingestSpans(h(), setup.key.key, FIRST);
  for (const t of ['span_rollup_meta_1h', 'span_rollup_meta_totals_1h', 'span_rollup_meta_totals_1d'])
    await client.command({ query: `TRUNCATE TABLE ${t}` });
  await client.command({ query: 'TRUNCATE TABLE span_rollup_meta_1h_since' });
  // The view's start is after every span of the first part was stored: the engine's clock is past them.
  await waitUntil(async () => {
    const res = await client.query({
      query: 'SELECT now64(3) > max(ingested_at) AS past FROM spans',
      format: 'JSONEachRow',
    });
    return Number((await res.json<{ past: number | string }>())[0]!.past) === 1;
  }, "the engine's clock to pass the first part's ingest");
  await client.command({ query: 'INSERT INTO span_rollup_meta_1h_since SELECT now64(3)' });
  await ingestSpans(h(), setup.key.key, LATE);
  // Re-sent spans: ingest drops what it stored already, so nothing counts twice.
  await ingestSpans(h(), setup.key.key, SPANS.slice(0, 2500));
  const migration = readMigrations(path.join(ROOT_DIR, 'clickhouse')).find((m) => m.name === 'span_rollup_metadata')!;
  const backfill = splitStatements(migration.sql).at(-1)!;
  expect(backfill).toMatch(/^INSERT INTO span_rollup_meta_1h\s/);
  await client.command({ query: backfill });
});

function spec(measure: string, aggregation: Aggregation, extra: Partial<WidgetSpec> = {}): WidgetSpec {
  return WidgetSpecSchema.parse({ view: 'SPANS', measure, aggregation, ...extra });
}
const QUANTILES = new Set<string>(['p50', 'p75', 'p90', 'p95', 'p99']);
const MEASURES: [string, Aggregation][] = [
  ['count', 'count'],
  ['error_rate', 'avg'],
  ['error_count', 'sum'],
  ['latency', 'avg'],
  ['latency', 'max'],
  ['latency', 'min'],
  ['latency', 'p95'],
  ['latency', 'p50'],
  ['cost', 'sum'],
  ['cost', 'avg'],
  ['total_tokens', 'sum'],
  ['user_id', 'uniq'],
  ['session_id', 'uniq'],
  ['trace_id', 'uniq'],
];
const REGION = { field: 'metadata' as const, op: 'eq' as const, key: 'region', value: 'us-east-1' };
const TIER_CONTAINS = { field: 'metadata' as const, op: 'contains' as const, key: 'customer_tier', value: 'r' };
type Source = 'span_rollup_meta_1h' | 'span_rollup_meta_totals_1h' | 'span_rollup_meta_totals_1d';
const SHAPES: { label: string; type: WidgetType; extra: Partial<WidgetSpec>; source: Source }[] = [
  { label: 'stat, region filter', type: 'stat', extra: { filters: [REGION] }, source: 'span_rollup_meta_totals_1h' },
  {
    label: 'series, region filter',
    type: 'timeseries',
    extra: { interval: 'auto', filters: [REGION] },
    source: 'span_rollup_meta_totals_1h',
  },
  {
    label: 'series per day, region filter',
    type: 'timeseries',
    extra: { interval: '1d', filters: [REGION] },
    source: 'span_rollup_meta_totals_1d',
  },
  {
    label: 'bar by model, region filter',
    type: 'bar',
    extra: { group_by: ['model_name'], filters: [REGION] },
    source: 'span_rollup_meta_1h',
  },
  {
    label: 'table by tier',
    type: 'table',
    extra: { group_by: ['metadata.customer_tier'] },
    source: 'span_rollup_meta_totals_1h',
  },
  {
    label: 'series by tier',
    type: 'timeseries',
    extra: { interval: '1h', group_by: ['metadata.customer_tier'] },
    source: 'span_rollup_meta_totals_1h',
  },
  {
    label: 'series by tier, top 2',
    type: 'timeseries',
    extra: { interval: '1d', group_by: ['metadata.customer_tier'], limit: 2 },
    source: 'span_rollup_meta_totals_1d',
  },
  {
    label: 'series by tier per 2 hours, agent and llm spans',
    type: 'timeseries',
    extra: {
      interval: 'auto',
      group_by: ['metadata.customer_tier'],
      filters: [{ field: 'span_kind', op: 'in', value: ['agent', 'llm'] }],
    },
    source: 'span_rollup_meta_1h',
  },
  {
    label: 'table by tier and kind, production',
    type: 'table',
    extra: {
      group_by: ['metadata.customer_tier', 'kind'],
      filters: [{ field: 'environment', op: 'in', value: ['production'] }],
    },
    source: 'span_rollup_meta_1h',
  },
  {
    label: 'table by tier, tier contains "r"',
    type: 'table',
    extra: { group_by: ['metadata.customer_tier'], filters: [TIER_CONTAINS] },
    source: 'span_rollup_meta_totals_1h',
  },
  {
    label: 'stat, region filter and llm spans',
    type: 'stat',
    extra: { filters: [REGION, { field: 'span_kind', op: 'in', value: ['agent', 'llm'] }] },
    source: 'span_rollup_meta_1h',
  },
  {
    label: 'table by region, two region filters',
    type: 'table',
    extra: { group_by: ['metadata.region'], filters: [REGION, { ...REGION, op: 'contains', value: 'east' }] },
    source: 'span_rollup_meta_totals_1h',
  },
];

function sameNumber(a: unknown, b: unknown, quantile: boolean): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== 'number' || typeof b !== 'number') return false;
  const diff = Math.abs(a - b);
  if (quantile) return diff <= 50 || diff <= 0.05 * Math.max(Math.abs(a), Math.abs(b));
  return diff <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
}

function keyed(result: WidgetResult): Map<string, unknown> {
  return new Map(result.rows.map((r) => [JSON.stringify(r.slice(0, -1)), r.at(-1)]));
}

describe('the metadata rollup and raw spans agree', () => {
  it('holds every stored span once per key, and the data has the cases', async () => {
    const count = spec('count', 'count', { group_by: ['metadata.customer_tier'] });
    const [rollup, raw] = await Promise.all([
      queryWidget(h().ctx, projectId, 'table', count, WEEK),
      queryWidget(h().ctx, projectId, 'table', count, WEEK, { raw: true }),
    ]);
    expect(rollup.meta.source).toBe('span_rollup_meta_totals_1h');
    const total = (r: WidgetResult) => r.rows.reduce((n, row) => n + (row.at(-1) as number), 0);
    expect(total(raw)).toBe(SPANS.length);
    expect(total(rollup)).toBe(SPANS.length);
    expect(rollup.rows.map((r) => r[0])).toEqual(expect.arrayContaining(['', 'free', 'pro', 'child-free']));
  });

  for (const shape of SHAPES) {
    for (const [measure, aggregation] of MEASURES) {
      it(`${shape.label}: ${measure}/${aggregation}`, async () => {
        const s = spec(measure, aggregation, shape.extra);
        const [rollup, raw] = await Promise.all([
          queryWidget(h().ctx, projectId, shape.type, s, WEEK),
          queryWidget(h().ctx, projectId, shape.type, s, WEEK, { raw: true }),
        ]);
        expect(rollup.meta.source).toBe(shape.source);
        expect(raw.meta.source).toBe('spans');
        expect(rollup.columns).toEqual(raw.columns);
        // Region is on root spans only: their cost and tokens are 0 on both paths.
        const hasData = (r: WidgetResult) => r.rows.some((row) => row.at(-1) !== null && row.at(-1) !== 0);
        expect(hasData(rollup), 'the case has data').toBe(hasData(raw));
        expect(hasData(raw) || ['cost', 'total_tokens'].includes(measure)).toBe(true);
        const quantile = QUANTILES.has(aggregation);
        const a = keyed(rollup);
        const b = keyed(raw);
        if (!quantile || shape.type === 'timeseries' || shape.type === 'stat')
          expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
        const mismatches: string[] = [];
        for (const [key, value] of a) {
          if (!b.has(key)) continue;
          if (!sameNumber(value, b.get(key), quantile))
            mismatches.push(`${key}: rollup ${String(value)} raw ${String(b.get(key))}`);
        }
        expect(mismatches, mismatches.slice(0, 5).join('\n')).toEqual([]);
        if (!quantile && shape.type !== 'timeseries')
          expect(rollup.rows.map((r) => r.slice(0, -1))).toEqual(raw.rows.map((r) => r.slice(0, -1)));
      });
    }
  }

  it('reads raw spans for what the rollup cannot answer', async () => {
    const cases: [WidgetType, WidgetSpec, { startMs: number; endMs: number }][] = [
      // Two keys; a field outside the rollup; a step finer than an hour.
      ['table', spec('count', 'count', { group_by: ['metadata.customer_tier'], filters: [REGION] }), WEEK],
      ['table', spec('count', 'count', { group_by: ['user_id'], filters: [REGION] }), WEEK],
      [
        'table',
        spec('count', 'count', {
          group_by: ['metadata.customer_tier'],
          filters: [{ field: 'cost', op: 'gt', value: 0 }],
        }),
        WEEK,
      ],
      [
        'timeseries',
        spec('count', 'count', { interval: '5m', filters: [REGION] }),
        { startMs: END - 6 * HOUR, endMs: END },
      ],
      ['stat', spec('cost', 'max', { filters: [REGION] }), WEEK],
    ];
    for (const [type, s, window] of cases)
      expect((await queryWidget(h().ctx, projectId, type, s, window)).meta.source, JSON.stringify(s)).toBe('spans');
  });
});
