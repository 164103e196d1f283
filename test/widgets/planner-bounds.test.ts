import { describe, expect, it } from 'vitest';
import {
  MAX_SERIES_CELLS,
  MAX_SERIES_GROUPS,
  MAX_SERIES_POINTS,
  MAX_POINTS,
  seriesStep,
} from '../../src/query/series-steps.js';
import { planWidget } from '../../src/query/span-plan.js';
import { resolveWindow, WINDOW_END_SKEW_MS } from '../../src/widgets/data.js';
import { RequestValidationError } from '../../src/errors.js';
import type { WidgetSpec, WidgetType } from '../../src/widgets/spec.js';

/**
 * The widget planner bounds every answer before a query runs (issue 9): pure, no database. The
 * crash of issue 9 was a "1m" series over 1970..2100: ~68 million buckets built in JavaScript.
 */

const MIN = 60_000;
const DAY = 86_400_000;
const NOW = Date.UTC(2025, 5, 1, 12, 0, 0);
const spec = (extra: Partial<WidgetSpec> = {}): WidgetSpec => ({
  view: 'SPANS',
  measure: 'count',
  aggregation: 'count',
  ...extra,
});

function buckets(plan: ReturnType<typeof planWidget>): number {
  return Math.ceil((plan.rangeEndMs - plan.rangeStartMs) / (plan.stepSeconds * 1000));
}

describe('series steps', () => {
  it('keeps a fixed interval that fits', () => {
    expect(seriesStep('1m', DAY, 1)).toEqual({ step: 60, coarsenedFrom: null, maxBuckets: 1441 });
    expect(seriesStep('1h', 7 * DAY, 10)).toMatchObject({ step: 3600, coarsenedFrom: null });
  });

  it('coarsens a fixed interval past the point cap to the smallest step that fits, and says so', () => {
    const s = seriesStep('1m', 90 * DAY, 1);
    expect(s.coarsenedFrom).toBe(60);
    expect(s.step).toBe(7200); // 1h gives 2,161 buckets, 2h 1,081
    expect(s.maxBuckets).toBeLessThanOrEqual(MAX_SERIES_POINTS);
  });

  it('gives many groups fewer buckets: buckets × groups stay within the cell cap', () => {
    for (const groups of [1, 10, 13, 50]) {
      for (const interval of ['1m', '5m', '1h', '1d', 'auto']) {
        for (const days of [1 / 24, 1, 7, 30, 90, 365, 3650]) {
          const s = seriesStep(interval, days * DAY, groups);
          expect(s.maxBuckets, `${interval} over ${days}d × ${groups}`).toBeLessThanOrEqual(MAX_SERIES_POINTS);
          expect(s.maxBuckets * groups, `${interval} over ${days}d × ${groups}`).toBeLessThanOrEqual(MAX_SERIES_CELLS);
        }
      }
    }
  });

  it('leaves "auto" as it was for the preset windows (at most 300 points)', () => {
    for (const days of [1 / 48, 1, 7, 30, 90])
      expect(seriesStep('auto', days * DAY, MAX_SERIES_GROUPS).maxBuckets).toBeLessThanOrEqual(MAX_POINTS + 1);
  });
});

describe('plans', () => {
  it('plans the crash request of issue 9 within the caps', () => {
    const window = resolveWindow(
      { start_time: '1970-01-01T00:00:00.000Z', end_time: '2100-01-01T00:00:00.000Z' },
      NOW,
      3650,
      'body',
    );
    expect(window.endMs).toBe(NOW + WINDOW_END_SKEW_MS);
    const plan = planWidget('timeseries', spec({ interval: '1m' }), 'p', window);
    expect(buckets(plan)).toBeLessThanOrEqual(plan.maxBuckets);
    expect(plan.maxBuckets).toBeLessThanOrEqual(MAX_SERIES_POINTS);
    expect(plan.coarsenedFromSeconds).toBe(60);
  });

  it('caps the groups of a series at MAX_SERIES_GROUPS whatever its limit; tables keep their limit', () => {
    const window = { startMs: NOW - 90 * DAY, endMs: NOW };
    const series = planWidget(
      'timeseries',
      spec({ group_by: ['model_name'], limit: 1000, interval: '1m' }),
      'p',
      window,
    );
    expect(series.groupLimit).toBe(MAX_SERIES_GROUPS);
    expect(Object.values(series.query_params)).toContain(MAX_SERIES_GROUPS);
    expect(series.maxBuckets * MAX_SERIES_GROUPS).toBeLessThanOrEqual(MAX_SERIES_CELLS);
    const table = planWidget('table', spec({ group_by: ['model_name'], limit: 1000 }), 'p', window);
    expect(table.groupLimit).toBe(1000);
    expect(table.maxRows).toBe(1000);
  });

  it('puts time, memory and answer limits in the SQL of every widget query (both views, every shape)', () => {
    const window = { startMs: NOW - 7 * DAY, endMs: NOW };
    const cases: [WidgetType, WidgetSpec][] = [
      ['stat', spec()],
      ['table', spec({ group_by: ['kind'] })],
      ['timeseries', spec({ interval: '1h' })],
      ['timeseries', spec({ interval: '1h', group_by: ['metadata.region'] })],
      ['stat', spec({ view: 'TRACES' })],
      ['table', spec({ view: 'TRACES', group_by: ['name'] })],
      ['timeseries', spec({ view: 'TRACES', group_by: ['user_id'], interval: '5m' })],
    ];
    for (const [type, s] of cases) {
      for (const raw of [false, true]) {
        const plan = planWidget(type, s, 'p', window, { raw });
        const settings = plan.query.slice(plan.query.lastIndexOf('SETTINGS'));
        for (const name of ['max_execution_time', 'max_memory_usage', 'max_result_rows', 'max_result_bytes'])
          expect(settings, `${type} ${JSON.stringify(s)}`).toContain(name);
        expect(settings).toContain(`max_result_rows = ${plan.maxRows}`);
        expect(settings).toContain(`max_result_bytes = ${16 * 1024 * 1024}`);
        // A dashboard shares its answer among its widgets: each gets a smaller byte limit.
        expect(planWidget(type, s, 'p', window, { raw, answerBytes: 4 * 1024 * 1024 }).query).toContain(
          `max_result_bytes = ${4 * 1024 * 1024}`,
        );
        if (s.view === 'TRACES') expect(settings).toContain('do_not_merge_across_partitions_select_final = 1');
      }
    }
  });
});

describe('windows', () => {
  const refused = (input: Parameters<typeof resolveWindow>[0]) => {
    try {
      resolveWindow(input, NOW, 30, 'body');
    } catch (error) {
      expect(error).toBeInstanceOf(RequestValidationError);
      return (error as RequestValidationError).issues.map((i) => i.loc);
    }
    throw new Error('not refused');
  };

  it('pulls an end past now + skew back to it; a past window stays as given', () => {
    const w = resolveWindow(
      { start_time: new Date(NOW - DAY).toISOString(), end_time: new Date(NOW + 30 * DAY).toISOString() },
      NOW,
      30,
    );
    expect(w).toEqual({ range: null, startMs: NOW - DAY, endMs: NOW + WINDOW_END_SKEW_MS, clamped: false });
    const past = resolveWindow(
      { start_time: new Date(NOW - DAY).toISOString(), end_time: new Date(NOW - MIN).toISOString() },
      NOW,
      30,
    );
    expect(past).toEqual({ range: null, startMs: NOW - DAY, endMs: NOW - MIN, clamped: false });
  });

  it('refuses a window entirely in the future, and unparsable bounds, at their own loc', () => {
    expect(
      refused({ start_time: new Date(NOW + 2 * MIN).toISOString(), end_time: new Date(NOW + DAY).toISOString() }),
    ).toEqual([['body', 'start_time']]);
    expect(refused({ start_time: 'not a date', end_time: new Date(NOW).toISOString() })).toEqual([
      ['body', 'start_time'],
    ]);
    expect(refused({ start_time: new Date(NOW - DAY).toISOString(), end_time: 'not a date' })).toEqual([
      ['body', 'end_time'],
    ]);
  });
});
