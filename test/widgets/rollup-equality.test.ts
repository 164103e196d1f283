import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { queryWidget, type WidgetResult } from '../../src/widgets/data.js';
import { WidgetSpecSchema, type Aggregation, type WidgetSpec, type WidgetType } from '../../src/widgets/spec.js';

/**
 * The rollup path and the raw path answer the same question (src/widgets/planner.ts): on generated
 * data, for many specs, `queryWidget` (span_rollup_1m / span_rollup_1h) equals `queryWidget(..., {raw})`
 * (spans): exactly for counts, sums, averages, min/max and uniq (to 1e-6), quantiles within the
 * t-digest's error (relative 5% or 50 ms).
 */

const h = useHarness();
const HOUR = 3_600_000;
const END = Math.floor(Date.now() / HOUR) * HOUR;
const TWO_DAYS = { startMs: END - 48 * HOUR, endMs: END };
const SPANS = generateSpans({
  traces: 300,
  startMs: TWO_DAYS.startMs,
  endMs: END - 10 * 60_000,
  seed: 11,
  errorShare: 0.1,
});
/** The 3-hour window (whole hours) with the most errors, so error measures have data at the 1m grain. */
const THREE_HOURS = (() => {
  const errors = (start: number) =>
    SPANS.filter(
      (x) => x.status === 'error' && Date.parse(x.start_time) >= start && Date.parse(x.start_time) < start + 3 * HOUR,
    ).length;
  let best = END - 3 * HOUR;
  for (let start = END - 48 * HOUR; start <= END - 3 * HOUR; start += HOUR)
    if (errors(start) > errors(best)) best = start;
  return { startMs: best, endMs: best + 3 * HOUR };
})();
let projectId: string;

beforeAll(async () => {
  const setup = await projectWithKey(h());
  projectId = setup.project.id;
  const spans = SPANS;
  for (let i = 0; i < spans.length; i += 1000) {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: setup.key.key,
      payload: { spans: spans.slice(i, i + 1000) },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rejected).toEqual([]);
  }
});

function spec(measure: string, aggregation: Aggregation, extra: Partial<WidgetSpec> = {}): WidgetSpec {
  return WidgetSpecSchema.parse({ view: 'SPANS', measure, aggregation, ...extra });
}
const QUANTILES = new Set<string>(['p50', 'p75', 'p90', 'p95', 'p99']);

/** Measures the rollups hold a state for. */
const MEASURES: [string, Aggregation][] = [
  ['count', 'count'],
  ['error_rate', 'avg'],
  ['error_count', 'sum'],
  ['error_count', 'avg'],
  ['latency', 'sum'],
  ['latency', 'avg'],
  ['latency', 'count'],
  ['latency', 'min'],
  ['latency', 'max'],
  ['duration_ms', 'avg'],
  ['latency', 'p50'],
  ['latency', 'p75'],
  ['latency', 'p90'],
  ['latency', 'p95'],
  ['latency', 'p99'],
  ['cost', 'sum'],
  ['cost', 'avg'],
  ['cost', 'count'],
  ['input_tokens', 'sum'],
  ['output_tokens', 'sum'],
  ['total_tokens', 'sum'],
  ['total_tokens', 'avg'],
  ['user_id', 'uniq'],
  ['session_id', 'uniq'],
  ['trace_id', 'uniq'],
];
const DIMENSIONS = ['model_name', 'environment', 'kind', 'status', 'name', 'error_type'];
const FILTERS: WidgetSpec['filters'][] = [
  [{ field: 'model_name', op: 'in', value: ['gpt-4o', 'claude-3-haiku'] }],
  [{ field: 'environment', op: 'in', value: ['production'] }],
  [{ field: 'span_kind', op: 'in', value: ['llm', 'tool'] }],
  [{ field: 'status', op: 'in', value: ['error'] }],
  [{ field: 'error_type', op: 'in', value: ['TimeoutError', 'RateLimitError'] }],
  [{ field: 'name', op: 'in', value: ['generate-answer', 'search_docs', 'vector_search', 'rag-chat'] }],
  [
    { field: 'span_kind', op: 'in', value: ['llm'] },
    { field: 'environment', op: 'in', value: ['production', 'staging'] },
  ],
];

type Case = {
  label: string;
  type: WidgetType;
  spec: WidgetSpec;
  window: { startMs: number; endMs: number };
  source: 'span_rollup_1m' | 'span_rollup_1h';
};
const CASES: Case[] = [];
/** The generator sets user_id on root (agent) spans only: users of model, llm/tool or llm-only spans are 0 on both paths. */
const noUsers = (s: WidgetSpec) =>
  s.measure === 'user_id' &&
  (s.filters ?? []).some((f) => f.field === 'model_name' || (f.field === 'span_kind' && !f.value.includes('agent')));
for (const [measure, aggregation] of MEASURES) {
  const tag = `${measure}/${aggregation}`;
  CASES.push({
    label: `stat ${tag} over 2 days`,
    type: 'stat',
    spec: spec(measure, aggregation),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
  CASES.push({
    label: `stat ${tag} over 3 hours`,
    type: 'stat',
    spec: spec(measure, aggregation),
    window: THREE_HOURS,
    source: 'span_rollup_1m',
  });
  CASES.push({
    label: `series ${tag} per hour`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '1h' }),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
  CASES.push({
    label: `table ${tag} by kind`,
    type: 'table',
    spec: spec(measure, aggregation, { group_by: ['kind'] }),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
}
for (const [measure, aggregation] of [
  ['count', 'count'],
  ['cost', 'sum'],
  ['latency', 'avg'],
  ['latency', 'max'],
  ['latency', 'p95'],
  ['error_rate', 'avg'],
  ['user_id', 'uniq'],
] as [string, Aggregation][]) {
  const tag = `${measure}/${aggregation}`;
  for (const dim of DIMENSIONS) {
    CASES.push({
      label: `table ${tag} by ${dim}`,
      type: 'table',
      spec: spec(measure, aggregation, { group_by: [dim] }),
      window: TWO_DAYS,
      source: 'span_rollup_1h',
    });
    CASES.push({
      label: `bar ${tag} by ${dim} over 3 hours`,
      type: 'bar',
      spec: spec(measure, aggregation, { group_by: [dim] }),
      window: THREE_HOURS,
      source: 'span_rollup_1m',
    });
  }
  CASES.push({
    label: `table ${tag} by kind, status, model`,
    type: 'table',
    spec: spec(measure, aggregation, { group_by: ['kind', 'status', 'model_name'] }),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
  FILTERS.forEach((filters, i) => {
    CASES.push({
      label: `stat ${tag} filter #${i}`,
      type: 'stat',
      spec: spec(measure, aggregation, { filters }),
      window: TWO_DAYS,
      source: 'span_rollup_1h',
    });
    CASES.push({
      label: `table ${tag} by model filter #${i}`,
      type: 'table',
      spec: spec(measure, aggregation, { filters, group_by: ['model_name'] }),
      window: TWO_DAYS,
      source: 'span_rollup_1h',
    });
  });
  CASES.push({
    label: `series ${tag} per minute`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '1m' }),
    window: THREE_HOURS,
    source: 'span_rollup_1m',
  });
  CASES.push({
    label: `series ${tag} per 5 minutes`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '5m' }),
    window: TWO_DAYS,
    source: 'span_rollup_1m',
  });
  CASES.push({
    label: `series ${tag} per day`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '1d' }),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
  CASES.push({
    label: `series ${tag} auto over 2 days`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: 'auto' }),
    window: TWO_DAYS,
    source: 'span_rollup_1m',
  });
  CASES.push({
    label: `series ${tag} auto over 3 hours`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: 'auto' }),
    window: THREE_HOURS,
    source: 'span_rollup_1m',
  });
  CASES.push({
    label: `series ${tag} per hour by model`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '1h', group_by: ['model_name'] }),
    window: TWO_DAYS,
    source: 'span_rollup_1h',
  });
  CASES.push({
    label: `series ${tag} per 5 minutes by status, filtered`,
    type: 'timeseries',
    spec: spec(measure, aggregation, { interval: '5m', group_by: ['status'], filters: FILTERS[2] }),
    window: TWO_DAYS,
    source: 'span_rollup_1m',
  });
}

function sameNumber(a: unknown, b: unknown, quantile: boolean): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== 'number' || typeof b !== 'number') return false;
  const diff = Math.abs(a - b);
  if (quantile) return diff <= 50 || diff <= 0.05 * Math.max(Math.abs(a), Math.abs(b));
  return diff <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));
}

/** Rows by their key (time and groups): quantiles may order groups differently within their error. */
function keyed(result: WidgetResult): Map<string, unknown> {
  return new Map(result.rows.map((r) => [JSON.stringify(r.slice(0, -1)), r.at(-1)]));
}

function expectOrderedByValue(result: WidgetResult) {
  const values = result.rows.map((r) => r.at(-1) as number | null);
  values.slice(1).forEach((v, i) => {
    const prev = values[i]!;
    if (prev === null) expect(v, 'nulls last').toBeNull();
    else if (v !== null) expect(v).toBeLessThanOrEqual(prev);
  });
}

describe('rollup and raw paths agree', () => {
  it('ingested the generated data', async () => {
    expect(SPANS.length).toBeGreaterThan(1000);
    const [rollup] = await Promise.all([
      queryWidget(h().ctx, projectId, 'stat', spec('count', 'count'), { startMs: END - 72 * HOUR, endMs: END + HOUR }),
    ]);
    expect(rollup.rows[0]![0]).toBe(SPANS.length);
  });

  for (const c of CASES) {
    it(c.label, async () => {
      const [rollup, raw] = await Promise.all([
        queryWidget(h().ctx, projectId, c.type, c.spec, c.window),
        queryWidget(h().ctx, projectId, c.type, c.spec, c.window, { raw: true }),
      ]);
      // Without filters and group-bys the dimension-free totals of the same grain answer.
      const totals = !c.spec.group_by?.length && !c.spec.filters?.length;
      // ... daily totals when the buckets are whole days.
      const daily = totals && rollup.meta.interval_seconds === 86400;
      expect(rollup.meta.source).toBe(
        daily ? 'span_rollup_totals_1d' : totals ? c.source.replace('span_rollup_', 'span_rollup_totals_') : c.source,
      );
      expect(raw.meta.source).toBe('spans');
      expect(rollup.columns).toEqual(raw.columns);
      expect({ ...rollup.meta, source: 'x' }).toEqual({ ...raw.meta, source: 'x' });
      expect(
        rollup.rows.some((r) => r.at(-1) !== null && r.at(-1) !== 0),
        'the case has data',
      ).toBe(!noUsers(c.spec));
      const quantile = QUANTILES.has(c.spec.aggregation);
      const a = keyed(rollup);
      const b = keyed(raw);
      expect(rollup.rows.length, 'rollup rows have distinct keys').toBe(a.size);
      if (!quantile || c.type === 'timeseries' || c.type === 'stat')
        expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
      const mismatches: string[] = [];
      for (const [key, value] of a) {
        if (!b.has(key)) continue; // a quantile table's limit may cut a different tail
        if (!sameNumber(value, b.get(key), quantile))
          mismatches.push(`${key}: rollup ${String(value)} raw ${String(b.get(key))}`);
      }
      expect(mismatches, mismatches.slice(0, 5).join('\n')).toEqual([]);
      if (c.type === 'table' || c.type === 'bar') {
        expectOrderedByValue(rollup);
        expectOrderedByValue(raw);
        if (!quantile) expect(rollup.rows.map((r) => r.slice(0, -1))).toEqual(raw.rows.map((r) => r.slice(0, -1)));
      }
      if (!quantile && c.type !== 'timeseries') expect(rollup.truncated).toBe(raw.truncated);
    });
  }

  it('a table limit cuts both paths at the same groups', async () => {
    const s = spec('count', 'count', { group_by: ['name'], limit: 3 });
    const [rollup, raw] = await Promise.all([
      queryWidget(h().ctx, projectId, 'table', s, TWO_DAYS),
      queryWidget(h().ctx, projectId, 'table', s, TWO_DAYS, { raw: true }),
    ]);
    expect(rollup.rows).toHaveLength(3);
    expect(rollup.rows).toEqual(raw.rows);
    expect(rollup.truncated).toBe(true);
    expect(raw.truncated).toBe(true);
  });
});
