import { describe, expect, it } from 'vitest';
import { planWidget } from '../../src/query/span-plan.js';
import type { WidgetSpec, WidgetType } from '../../src/widgets/spec.js';

/**
 * Which widgets the planner sends to the metadata rollup (span_rollup_meta_1h): pure, no database.
 * test/widgets/metadata-rollup.test.ts checks on stored data that those answers equal raw spans'.
 */

const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 1, 12, 34, 0);
const LONG = { startMs: NOW - 30 * DAY, endMs: NOW };
const REGION = { field: 'metadata' as const, op: 'eq' as const, key: 'region', value: 'us-east' };
const spec = (extra: Partial<WidgetSpec> = {}): WidgetSpec => ({
  view: 'SPANS',
  measure: 'count',
  aggregation: 'count',
  ...extra,
});
const plan = (type: WidgetType, s: WidgetSpec, window = LONG, metadataRollup = true) =>
  planWidget(type, s, 'p', window, { metadataRollup });

describe('the metadata rollup in the planner', () => {
  it('answers one metadata key with rollup dimensions, at whole-hour steps', () => {
    const cases: [WidgetType, WidgetSpec][] = [
      ['timeseries', spec({ interval: 'auto', filters: [REGION] })],
      ['bar', spec({ measure: 'latency', aggregation: 'p95', group_by: ['model_name'], filters: [REGION] })],
      [
        'table',
        spec({
          group_by: ['metadata.customer_tier', 'kind'],
          filters: [{ field: 'environment', op: 'in', value: ['production'] }],
        }),
      ],
      [
        'timeseries',
        spec({ measure: 'cost', aggregation: 'sum', interval: '1d', group_by: ['metadata.region'], filters: [REGION] }),
      ],
      [
        'stat',
        spec({
          measure: 'user_id',
          aggregation: 'uniq',
          filters: [REGION, { ...REGION, op: 'contains', value: 'east' }],
        }),
      ],
    ];
    for (const [type, s] of cases) {
      const p = plan(type, s);
      expect(p.source, JSON.stringify(s)).toMatch(/^span_rollup_meta_/);
      expect(p.query).toContain(`FROM ${p.source}`);
      expect(p.query).not.toContain('metadata[');
    }
  });

  it('reads the dimension-free totals when the key is all a widget names, per day for whole-day steps', () => {
    expect(
      plan('bar', spec({ measure: 'latency', aggregation: 'p95', group_by: ['model_name'], filters: [REGION] })).source,
    ).toBe('span_rollup_meta_1h');
    expect(plan('table', spec({ group_by: ['metadata.customer_tier', 'kind'] })).source).toBe('span_rollup_meta_1h');
    expect(
      plan('bar', spec({ measure: 'latency', aggregation: 'p95', group_by: ['metadata.customer_tier'] })).source,
    ).toBe('span_rollup_meta_totals_1h');
    // ... its whole days from the daily totals, the hours at either end from the hourly ones.
    const bar = plan('bar', spec({ measure: 'latency', aggregation: 'p95', group_by: ['metadata.customer_tier'] }));
    expect(bar.query).toMatch(
      /FROM span_rollup_meta_totals_1d WHERE .* UNION ALL SELECT \* FROM span_rollup_meta_totals_1h WHERE /s,
    );
    expect(
      plan('bar', spec({ group_by: ['metadata.customer_tier'] }), { startMs: NOW - 20 * 3_600_000, endMs: NOW }).query,
    ).not.toContain('UNION ALL');
    expect(plan('timeseries', spec({ interval: '1d', filters: [REGION] })).source).toBe('span_rollup_meta_totals_1d');
    expect(
      plan('timeseries', spec({ interval: 'auto', group_by: ['metadata.customer_tier'] }), {
        startMs: NOW - 90 * DAY,
        endMs: NOW,
      }).source,
    ).toBe('span_rollup_meta_totals_1d');
  });

  it('adds the spans without a value (the key-set rows) only to a group-by without a metadata filter', () => {
    expect(plan('table', spec({ group_by: ['metadata.customer_tier'] })).query).toContain(
      "meta_key = '' AND NOT has(key_set, ",
    );
    expect(plan('table', spec({ group_by: ['metadata.region'], filters: [REGION] })).query).not.toContain('key_set');
  });

  it('leaves everything else to raw spans, and alerts (no metadataRollup) on the sources they know', () => {
    const raw: [WidgetType, WidgetSpec, { startMs: number; endMs: number }?][] = [
      ['table', spec({ group_by: ['metadata.customer_tier'], filters: [REGION] })],
      ['table', spec({ group_by: ['session_id'], filters: [REGION] })],
      ['stat', spec({ filters: [REGION, { field: 'duration_ms', op: 'gt', value: 100 }] })],
      ['stat', spec({ measure: 'cost', aggregation: 'max', filters: [REGION] })],
      ['timeseries', spec({ interval: '5m', filters: [REGION] }), { startMs: NOW - 6 * 3_600_000, endMs: NOW }],
      ['stat', spec({ filters: [REGION] }), { startMs: NOW - 3_600_000, endMs: NOW }],
    ];
    for (const [type, s, window] of raw) expect(plan(type, s, window).source, JSON.stringify(s)).toBe('spans');
    expect(plan('stat', spec({ filters: [REGION] }), LONG, false).source).toBe('spans');
    expect(planWidget('stat', spec({ filters: [REGION] }), 'p', LONG, { raw: true, metadataRollup: true }).source).toBe(
      'spans',
    );
  });
});
