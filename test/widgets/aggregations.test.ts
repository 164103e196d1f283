import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { queryWidget, type WidgetResult } from '../../src/widgets/data.js';
import { WidgetSpecSchema, type Aggregation, type WidgetSpec, type WidgetType } from '../../src/widgets/spec.js';
import { iso } from '../support/ingest.js';

/**
 * Widget aggregations against hand-computed values on a small, fixed set of 40 spans (10 traces of
 * 4 spans, one trace every other whole hour of the past day). Every value is checked on both paths:
 * the default (rollup when it can answer) and raw spans.
 */

const h = useHarness();
const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const H = Math.floor(Date.now() / HOUR) * HOUR;
const WINDOW = { startMs: H - 24 * HOUR, endMs: H };

// [trace, hoursAgo, root name, user, region]
const TRACES: [string, number, string, string, string][] = [
  ['t01', 22, 'support', 'u1', 'eu'],
  ['t02', 20, 'support', 'u2', 'us'],
  ['t03', 18, 'research', 'u1', 'eu'],
  ['t04', 16, 'support', 'u3', 'us'],
  ['t05', 14, 'research', 'u2', 'eu'],
  ['t06', 12, 'sql', 'u4', 'us'],
  ['t07', 10, 'support', 'u1', 'eu'],
  ['t08', 8, 'research', 'u5', 'us'],
  ['t09', 6, 'sql', 'u2', 'eu'],
  ['t10', 4, 'support', '', 'us'],
];
type Row = [
  trace: string,
  span: string,
  kind: string,
  name: string,
  minute: number,
  ms: number | null,
  status: string,
  model: string,
  cost: number,
  input: number,
  output: number,
  prompt: string,
];
// Root spans are 'root'; the others are its children. status '' = not sent (unset).
const ROWS: Row[] = [
  ['t01', 'root', 'agent', 'support', 10, 2400, 'ok', '', 0, 0, 0, ''],
  ['t01', 'llm1', 'llm', 'chat', 10, 1200, 'ok', 'gpt-4o', 0.0125, 400, 200, 'v1'],
  ['t01', 'tool', 'tool', 'search_docs', 11, 300, '', '', 0, 0, 0, ''],
  ['t01', 'llm2', 'llm', 'chat', 16, 450, 'ok', 'gpt-4o-mini', 0.0006, 300, 100, 'v2'],
  ['t02', 'root', 'agent', 'support', 10, 3100, 'ok', '', 0, 0, 0, ''],
  ['t02', 'llm1', 'llm', 'chat', 10, 1800, 'error', 'gpt-4o', 0.02, 600, 350, 'v1'],
  ['t02', 'tool', 'tool', 'lookup_order', 12, 520, '', '', 0, 0, 0, ''],
  ['t02', 'ret', 'retriever', 'retrieve', 16, 90, 'ok', 'text-embedding-3-small', 0.0001, 50, 0, ''],
  ['t03', 'root', 'agent', 'research', 10, 5200, 'ok', '', 0, 0, 0, ''],
  ['t03', 'llm1', 'llm', 'chat', 11, 2600, 'ok', 'claude-3-haiku', 0.003, 1500, 500, 'v2'],
  ['t03', 'tool', 'tool', 'web_search', 13, 1400, '', '', 0, 0, 0, ''],
  ['t03', 'llm2', 'llm', 'chat', 22, 700, 'ok', 'gpt-4o', 0.009, 300, 150, 'v2'],
  ['t04', 'root', 'agent', 'support', 10, 1600, 'ok', '', 0, 0, 0, ''],
  ['t04', 'llm1', 'llm', 'chat', 10, 800, 'ok', 'gpt-4o-mini', 0.0009, 500, 150, 'v1'],
  ['t04', 'tool', 'tool', 'search_docs', 11, 250, '', '', 0, 0, 0, ''],
  ['t04', 'ret', 'retriever', 'retrieve', 20, 120, 'ok', 'text-embedding-3-small', 0.0001, 60, 0, ''],
  ['t05', 'root', 'agent', 'research', 10, 4300, 'ok', '', 0, 0, 0, ''],
  ['t05', 'llm1', 'llm', 'chat', 11, 2100, 'error', 'claude-3-haiku', 0.0025, 1200, 400, 'v1'],
  ['t05', 'tool', 'tool', 'web_search', 13, 1900, 'error', '', 0, 0, 0, ''],
  ['t05', 'ret', 'retriever', 'retrieve', 15, 110, 'ok', 'text-embedding-3-small', 0.0002, 80, 0, ''],
  ['t06', 'root', 'agent', 'sql', 10, 3700, 'ok', '', 0, 0, 0, ''],
  ['t06', 'llm1', 'llm', 'chat', 10, 1500, 'ok', 'gpt-4o', 0.015, 700, 250, 'v2'],
  ['t06', 'tool', 'tool', 'run_sql', 12, 900, '', '', 0, 0, 0, ''],
  ['t06', 'llm2', 'llm', 'chat', 17, 650, 'ok', 'gpt-4o', 0.0085, 350, 120, 'v1'],
  ['t07', 'root', 'agent', 'support', 10, 2000, 'ok', '', 0, 0, 0, ''],
  ['t07', 'llm1', 'llm', 'chat', 10, 950, 'ok', 'gpt-4o-mini', 0.0011, 600, 200, 'v2'],
  ['t07', 'tool', 'tool', 'send_email', 11, 600, '', '', 0, 0, 0, ''],
  ['t07', 'ret', 'retriever', 'retrieve', 14, 100, 'ok', 'text-embedding-3-small', 0.0001, 40, 0, ''],
  ['t08', 'root', 'agent', 'research', 10, 6000, 'ok', '', 0, 0, 0, ''],
  ['t08', 'llm1', 'llm', 'chat', 12, 3000, 'ok', 'claude-3-haiku', 0.004, 2000, 600, 'v1'], // total_tokens sent as 2700
  ['t08', 'tool', 'tool', 'web_search', 14, 1700, '', '', 0, 0, 0, ''],
  ['t08', 'llm2', 'llm', 'chat', 25, 800, 'ok', 'gpt-4o', 0.011, 400, 180, 'v2'],
  ['t09', 'root', 'agent', 'sql', 10, 2900, 'ok', '', 0, 0, 0, ''],
  ['t09', 'llm1', 'llm', 'chat', 10, 1300, 'ok', 'gpt-4o', 0.014, 650, 220, 'v1'],
  ['t09', 'tool', 'tool', 'run_sql', 12, 1100, 'error', '', 0, 0, 0, ''],
  ['t09', 'ret', 'retriever', 'retrieve', 13, 95, 'ok', 'text-embedding-3-small', 0.0001, 55, 0, ''],
  ['t10', 'root', 'agent', 'support', 10, 1100, 'ok', '', 0, 0, 0, ''],
  ['t10', 'llm1', 'llm', 'chat', 10, 500, 'ok', 'gpt-4o-mini', 0.0007, 350, 120, 'v1'],
  ['t10', 'tool', 'tool', 'search_docs', 11, null, '', '', 0, 0, 0, ''], // still open: no duration
  ['t10', 'llm2', 'llm', 'chat', 18, 450, 'ok', 'claude-3-haiku', 0.0012, 500, 90, 'v2'],
];

const traceOf = (id: string) => TRACES.find((t) => t[0] === id)!;
/** The fixture as the oracle sees it. */
const SPANS = ROWS.map(([trace, span, kind, name, minute, ms, status, model, cost, input, output, prompt]) => {
  const [, hoursAgo, , user, region] = traceOf(trace);
  const start = H - hoursAgo * HOUR + minute * MIN + 5_000;
  return {
    trace,
    span,
    kind,
    name,
    start,
    ms,
    status: status || 'unset',
    model,
    cost,
    input,
    output,
    user,
    region: span === 'root' ? region : '',
    prompt,
    total: trace === 't08' && span === 'llm1' ? 2700 : input + output,
  };
});
type S = (typeof SPANS)[number];

let projectId: string;
beforeAll(async () => {
  const setup = await projectWithKey(h());
  projectId = setup.project.id;
  const spans = SPANS.map((s) => ({
    trace_id: s.trace,
    span_id: s.span,
    ...(s.span === 'root' ? {} : { parent_span_id: 'root' }),
    name: s.name,
    kind: s.kind,
    start_time: iso(s.start),
    ...(s.ms === null ? {} : { end_time: iso(s.start + s.ms) }),
    ...(s.status === 'unset' ? {} : { status: s.status }),
    ...(s.model ? { model_name: s.model } : {}),
    ...(s.cost ? { cost: s.cost } : {}),
    ...(s.input ? { input_tokens: s.input } : {}),
    ...(s.output ? { output_tokens: s.output } : {}),
    ...(s.total !== s.input + s.output ? { total_tokens: s.total } : {}),
    ...(s.user ? { user_id: s.user } : {}),
    environment: s.trace === 't10' ? 'staging' : 'production',
    ...(s.region ? { metadata: { region: s.region } } : s.prompt ? { metadata: { prompt_version: s.prompt } } : {}),
    ...(s.status === 'error' ? { error_type: 'SomeError' } : {}),
  }));
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/traces`,
    token: setup.key.key,
    payload: { spans },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ accepted: 40, rejected: [] });
});

function spec(measure: string, aggregation: Aggregation, extra: Partial<WidgetSpec> = {}): WidgetSpec {
  return WidgetSpecSchema.parse({ view: 'SPANS', measure, aggregation, ...extra });
}
/** The default path and the raw path; both must answer the same. */
async function both(type: WidgetType, s: WidgetSpec, window = WINDOW): Promise<[WidgetResult, WidgetResult]> {
  return Promise.all([
    queryWidget(h().ctx, projectId, type, s, window),
    queryWidget(h().ctx, projectId, type, s, window, { raw: true }),
  ]);
}
function expectValue(actual: unknown, expected: number | null, label: string) {
  if (expected === null) expect(actual, label).toBeNull();
  else {
    expect(typeof actual, `${label}: ${String(actual)}`).toBe('number');
    expect(actual as number, label).toBeCloseTo(expected, 8);
  }
}
function expectRows(actual: unknown[][], expected: unknown[][], label: string) {
  expect(actual.length, `${label}: ${JSON.stringify(actual)}`).toBe(expected.length);
  actual.forEach((row, i) => {
    expect(row.slice(0, -1), label).toEqual(expected[i]!.slice(0, -1));
    expectValue(row.at(-1), expected[i]!.at(-1) as number | null, `${label} row ${i}`);
  });
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const durations = (spans: S[]) => spans.flatMap((s) => (s.ms === null ? [] : [s.ms]));
/**
 * The band of the exact quantile: from the nearest-rank element (sorted[ceil(q·n) − 1]) to the
 * element above the interpolated one (sorted[ceil(q·(n − 1))]); every usual definition of the exact
 * quantile falls in it. In a 40-value tail neighbours are far apart, so the band matters.
 */
function exactQuantileBand(values: number[], q: number): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const lo = Math.max(0, Math.min(Math.ceil(q * n) - 1, Math.floor(q * (n - 1))));
  const hi = Math.min(n - 1, Math.max(Math.floor(q * n), Math.ceil(q * (n - 1))));
  return [sorted[lo]!, sorted[hi]!];
}
/** Rows of a table: grouped, ordered by value desc then group asc. */
function groupedRows(spans: S[], key: (s: S) => string[], value: (g: S[]) => number | null): unknown[][] {
  const groups = new Map<string, S[]>();
  for (const s of spans) groups.set(JSON.stringify(key(s)), [...(groups.get(JSON.stringify(key(s))) ?? []), s]);
  return [...groups.entries()]
    .map(([k, g]) => [...(JSON.parse(k) as string[]), value(g)])
    .sort(
      (a, b) =>
        (b.at(-1) as number) - (a.at(-1) as number) ||
        JSON.stringify(a.slice(0, -1)).localeCompare(JSON.stringify(b.slice(0, -1))),
    );
}
/** Every bucket of the aligned range, values from the oracle, `empty` where no span starts. */
function seriesRows(
  window: { startMs: number; endMs: number },
  stepMs: number,
  value: (g: S[]) => number | null,
  empty: 0 | null,
): unknown[][] {
  const rows: unknown[][] = [];
  for (let t = Math.floor(window.startMs / stepMs) * stepMs; t < window.endMs; t += stepMs) {
    const g = SPANS.filter((s) => s.start >= t && s.start < t + stepMs);
    rows.push([new Date(t).toISOString(), g.length ? value(g) : empty]);
  }
  return rows;
}

describe('stat: every aggregation against hand-computed values', () => {
  // count 40 spans, 39 with a duration (sum 60285 ms, 36 distinct), costs sum 0.1046 (18 distinct),
  // tokens in 10635 / out 3630 / total 14365 (one span reports 2700 for 2600), 4 errors, users u1..u5 on 36 spans.
  const cases: [string, Aggregation, number][] = [
    ['count', 'count', 40],
    ['latency', 'sum', 60285],
    ['latency', 'avg', 60285 / 39],
    ['latency', 'count', 39],
    ['latency', 'max', 6000],
    ['latency', 'min', 90],
    ['latency', 'uniq', 36],
    ['duration_ms', 'sum', 60285],
    ['duration_ms', 'avg', 60285 / 39],
    ['duration_ms', 'max', 6000],
    ['duration_ms', 'min', 90],
    ['cost', 'sum', 0.1046],
    ['cost', 'avg', 0.1046 / 40],
    ['cost', 'count', 40],
    ['cost', 'max', 0.02],
    ['cost', 'min', 0],
    ['cost', 'uniq', 18],
    ['input_tokens', 'sum', 10635],
    ['input_tokens', 'avg', 10635 / 40],
    ['input_tokens', 'max', 2000],
    ['input_tokens', 'min', 0],
    ['output_tokens', 'sum', 3630],
    ['output_tokens', 'avg', 3630 / 40],
    ['output_tokens', 'max', 600],
    ['output_tokens', 'uniq', 13],
    ['total_tokens', 'sum', 14365],
    ['total_tokens', 'avg', 14365 / 40],
    ['total_tokens', 'max', 2700],
    ['total_tokens', 'min', 0],
    ['error_count', 'sum', 4],
    ['error_count', 'count', 4],
    ['error_count', 'avg', 0.1],
    ['error_count', 'max', 1],
    ['error_count', 'min', 0],
    ['error_rate', 'avg', 0.1],
    ['error_rate', 'sum', 0.1],
    ['error_rate', 'max', 0.1],
    ['user_id', 'uniq', 5],
    ['user_id', 'count', 36],
    ['trace_id', 'uniq', 10],
    ['model_name', 'uniq', 4],
    ['model_name', 'count', 20],
  ];
  for (const [measure, aggregation, expected] of cases) {
    it(`${measure} ${aggregation} = ${expected}`, async () => {
      for (const result of await both('stat', spec(measure, aggregation))) {
        expect(result.columns).toEqual(['value']);
        expect(result.rows).toHaveLength(1);
        expectValue(result.rows[0]![0], expected, `${measure}/${aggregation} via ${String(result.meta.source)}`);
      }
    });
  }

  const quantiles: [Aggregation, number][] = [
    ['p50', 0.5],
    ['p75', 0.75],
    ['p90', 0.9],
    ['p95', 0.95],
    ['p99', 0.99],
  ];
  for (const [measure, values] of [
    ['latency', durations(SPANS)],
    ['cost', SPANS.map((s) => s.cost)],
    ['total_tokens', SPANS.map((s) => s.total)],
  ] as const) {
    for (const [aggregation, q] of quantiles) {
      it(`${measure} ${aggregation} is within the data and close to the exact quantile (t-digest)`, async () => {
        const lo = Math.min(...values);
        const hi = Math.max(...values);
        const [bandLo, bandHi] = exactQuantileBand(values, q);
        const tolerance = 0.05 * (hi - lo);
        for (const result of await both('stat', spec(measure, aggregation))) {
          const v = result.rows[0]![0] as number;
          expect(typeof v).toBe('number');
          expect(v).toBeGreaterThanOrEqual(lo);
          expect(v).toBeLessThanOrEqual(hi);
          const label = `${measure} ${aggregation} via ${String(result.meta.source)}: ${v} vs exact ${bandLo}..${bandHi}`;
          expect(v, label).toBeGreaterThanOrEqual(bandLo - tolerance);
          expect(v, label).toBeLessThanOrEqual(bandHi + tolerance);
        }
      });
    }
  }

  it('reads the rollup by default and raw spans when asked', async () => {
    const [rollup, raw] = await both('stat', spec('cost', 'sum'));
    expect(rollup.meta.source).toBe('span_rollup_totals_1h');
    expect(raw.meta.source).toBe('spans');
    const [rawOnly] = await both('stat', spec('cost', 'max'));
    expect(rawOnly.meta.source).toBe('spans');
  });
});

describe('group_by and filters', () => {
  const cases: [string, WidgetType, WidgetSpec, unknown[][]][] = [
    [
      'cost by model',
      'table',
      spec('cost', 'sum', { group_by: ['model_name'] }),
      groupedRows(
        SPANS,
        (s) => [s.model],
        (g) => sum(g.map((s) => s.cost)),
      ),
    ],
    [
      'count by model',
      'bar',
      spec('count', 'count', { group_by: ['model_name'] }),
      [
        ['', 20],
        ['gpt-4o', 7],
        ['text-embedding-3-small', 5],
        ['claude-3-haiku', 4],
        ['gpt-4o-mini', 4],
      ],
    ],
    [
      'count by kind',
      'bar',
      spec('count', 'count', { group_by: ['kind'] }),
      [
        ['llm', 15],
        ['agent', 10],
        ['tool', 10],
        ['retriever', 5],
      ],
    ],
    [
      'avg latency by kind',
      'table',
      spec('latency', 'avg', { group_by: ['kind'] }),
      groupedRows(
        SPANS,
        (s) => [s.kind],
        (g) => sum(durations(g)) / durations(g).length,
      ),
    ],
    [
      'max latency by kind and status',
      'table',
      spec('latency', 'max', { group_by: ['kind', 'status'] }),
      groupedRows(
        SPANS,
        (s) => [s.kind, s.status],
        (g) => Math.max(...durations(g)),
      ),
    ],
    [
      'count by metadata.region',
      'table',
      spec('count', 'count', { group_by: ['metadata.region'] }),
      [
        ['', 30],
        ['eu', 5],
        ['us', 5],
      ],
    ],
    [
      'tokens by metadata.prompt_version',
      'table',
      spec('total_tokens', 'sum', { group_by: ['metadata.prompt_version'] }),
      groupedRows(
        SPANS,
        (s) => [s.prompt],
        (g) => sum(g.map((s) => s.total)),
      ),
    ],
    [
      'cost of two models',
      'stat',
      spec('cost', 'sum', { filters: [{ field: 'model_name', op: 'in', value: ['gpt-4o', 'claude-3-haiku'] }] }),
      [[0.1007]],
    ],
    [
      'count of two models',
      'stat',
      spec('count', 'count', { filters: [{ field: 'model_name', op: 'in', value: ['gpt-4o', 'claude-3-haiku'] }] }),
      [[11]],
    ],
    [
      'count where cost > 0.01',
      'stat',
      spec('count', 'count', { filters: [{ field: 'cost', op: 'gt', value: 0.01 }] }),
      [[5]],
    ],
    [
      'cost where cost > 0.01 by model',
      'table',
      spec('cost', 'sum', { group_by: ['model_name'], filters: [{ field: 'cost', op: 'gt', value: 0.01 }] }),
      [['gpt-4o', 0.0725]],
    ],
    [
      'count where prompt_version = v2',
      'stat',
      spec('count', 'count', { filters: [{ field: 'metadata', key: 'prompt_version', op: 'eq', value: 'v2' }] }),
      [[SPANS.filter((s) => s.prompt === 'v2').length]],
    ],
    [
      'errors of llm spans',
      'stat',
      spec('error_count', 'sum', { filters: [{ field: 'span_kind', op: 'in', value: ['llm'] }] }),
      [[2]],
    ],
    [
      'error rate of tools',
      'stat',
      spec('error_rate', 'avg', { filters: [{ field: 'span_kind', op: 'in', value: ['tool'] }] }),
      [[0.2]],
    ],
    [
      'users of error spans',
      'stat',
      spec('user_id', 'uniq', { filters: [{ field: 'status', op: 'in', value: ['error'] }] }),
      [[1]],
    ],
    ['no match', 'stat', spec('cost', 'sum', { filters: [{ field: 'model_name', op: 'in', value: ['nope'] }] }), [[0]]],
    [
      'no match (avg)',
      'stat',
      spec('latency', 'avg', { filters: [{ field: 'model_name', op: 'in', value: ['nope'] }] }),
      [[null]],
    ],
  ];
  for (const [label, type, s, expected] of cases) {
    it(label, async () => {
      for (const result of await both(type, s)) {
        expect(result.columns).toEqual([...(s.group_by ?? []), 'value']);
        expectRows(result.rows, expected, `${label} via ${String(result.meta.source)}`);
      }
    });
  }

  it('uses the rollup only when every filter and group-by is a rollup dimension', async () => {
    const source = async (s: WidgetSpec) => (await queryWidget(h().ctx, projectId, 'table', s, WINDOW)).meta.source;
    expect(
      await source(
        spec('count', 'count', { group_by: ['kind'], filters: [{ field: 'model_name', op: 'in', value: ['gpt-4o'] }] }),
      ),
    ).toMatch(/^span_rollup/);
    // One metadata key and rollup dimensions: the metadata rollup (clickhouse/0006); with a field it lacks, raw spans.
    expect(await source(spec('count', 'count', { group_by: ['metadata.region'] }))).toMatch(/^span_rollup_meta_/);
    expect(await source(spec('count', 'count', { group_by: ['metadata.region', 'user_id'] }))).toBe('spans');
    expect(await source(spec('count', 'count', { filters: [{ field: 'cost', op: 'gt', value: 0.01 }] }))).toBe('spans');
  });
});

describe('TRACES view', () => {
  const traces = (measure: string, aggregation: Aggregation, extra: Partial<WidgetSpec> = {}) =>
    WidgetSpecSchema.parse({ view: 'TRACES', measure, aggregation, ...extra });
  const cases: [string, WidgetType, WidgetSpec, unknown[][]][] = [
    ['trace count', 'stat', traces('count', 'count'), [[10]]],
    ['trace cost sum', 'stat', traces('cost', 'sum'), [[0.1046]]],
    ['trace cost max', 'stat', traces('cost', 'max'), [[0.0235]]],
    ['trace error rate (traces with an error)', 'stat', traces('error_rate', 'avg'), [[0.3]]],
    ['trace error_count sum', 'stat', traces('error_count', 'sum'), [[4]]],
    ['trace tokens', 'stat', traces('total_tokens', 'sum'), [[14365]]],
    ['span_count avg', 'stat', traces('span_count', 'avg'), [[4]]],
    ['trace users', 'stat', traces('user_id', 'uniq'), [[5]]],
    [
      'traces by name',
      'table',
      traces('count', 'count', { group_by: ['name'] }),
      [
        ['support', 5],
        ['research', 3],
        ['sql', 2],
      ],
    ],
    [
      'cost by trace name',
      'table',
      traces('cost', 'sum', { group_by: ['name'] }),
      groupedRows(
        SPANS,
        (s) => [traceOf(s.trace)[2]],
        (g) => sum(g.map((s) => s.cost)),
      ),
    ],
    [
      'error rate by trace name',
      'table',
      traces('error_rate', 'avg', { group_by: ['name'] }),
      [
        ['research', 1 / 3],
        ['sql', 0.5],
        ['support', 0.2],
      ].sort((a, b) => (b[1] as number) - (a[1] as number)),
    ],
    [
      'traces by region',
      'table',
      traces('count', 'count', { group_by: ['metadata.region'] }),
      [
        ['eu', 5],
        ['us', 5],
      ],
    ],
  ];
  for (const [label, type, s, expected] of cases) {
    it(label, async () => {
      const result = await queryWidget(h().ctx, projectId, type, s, WINDOW);
      expect(result.meta.source).toBe('traces');
      expectRows(result.rows, expected, label);
    });
  }
});

describe('timeseries buckets', () => {
  const count = (g: S[]) => g.length;
  const avgLatency = (g: S[]) => (durations(g).length ? sum(durations(g)) / durations(g).length : null);
  const errorRate = (g: S[]) => g.filter((s) => s.status === 'error').length / g.length;
  const t03 = H - 18 * HOUR;
  const cases: [string, WidgetSpec, { startMs: number; endMs: number }, number, (g: S[]) => number | null, 0 | null][] =
    [
      ['count per hour', spec('count', 'count', { interval: '1h' }), WINDOW, HOUR, count, 0],
      ['cost per hour', spec('cost', 'sum', { interval: '1h' }), WINDOW, HOUR, (g) => sum(g.map((s) => s.cost)), 0],
      [
        'users per hour',
        spec('user_id', 'uniq', { interval: '1h' }),
        WINDOW,
        HOUR,
        (g) => new Set(g.map((s) => s.user).filter(Boolean)).size,
        0,
      ],
      ['avg latency per hour', spec('latency', 'avg', { interval: '1h' }), WINDOW, HOUR, avgLatency, null],
      [
        'max latency per hour',
        spec('latency', 'max', { interval: '1h' }),
        WINDOW,
        HOUR,
        (g) => Math.max(...durations(g)),
        null,
      ],
      [
        'min latency per hour',
        spec('latency', 'min', { interval: '1h' }),
        WINDOW,
        HOUR,
        (g) => Math.min(...durations(g)),
        null,
      ],
      ['error rate per hour', spec('error_rate', 'avg', { interval: '1h' }), WINDOW, HOUR, errorRate, null],
      [
        'count per minute',
        spec('count', 'count', { interval: '1m' }),
        { startMs: t03, endMs: t03 + HOUR },
        MIN,
        count,
        0,
      ],
      [
        'avg latency per minute',
        spec('latency', 'avg', { interval: '1m' }),
        { startMs: t03, endMs: t03 + HOUR },
        MIN,
        avgLatency,
        null,
      ],
      [
        'count per 5 minutes',
        spec('count', 'count', { interval: '5m' }),
        { startMs: t03, endMs: t03 + 3 * HOUR },
        5 * MIN,
        count,
        0,
      ],
      [
        'tokens per 5 minutes',
        spec('total_tokens', 'sum', { interval: '5m' }),
        { startMs: t03, endMs: t03 + 3 * HOUR },
        5 * MIN,
        (g) => sum(g.map((s) => s.total)),
        0,
      ],
      ['count per day', spec('count', 'count', { interval: '1d' }), WINDOW, DAY, count, 0],
      [
        'error rate per day',
        spec('error_rate', 'avg', { interval: '1d' }),
        { startMs: H - 7 * DAY, endMs: H },
        DAY,
        errorRate,
        null,
      ],
    ];
  for (const [label, s, window, stepMs, value, empty] of cases) {
    it(label, async () => {
      for (const result of await both('timeseries', s, window)) {
        expect(result.columns).toEqual(['time', 'value']);
        expect(result.meta.interval_seconds).toBe(stepMs / 1000);
        expectRows(result.rows, seriesRows(window, stepMs, value, empty), `${label} via ${String(result.meta.source)}`);
      }
    });
  }

  it('quantiles per hour are null in empty buckets and within each bucket otherwise', async () => {
    for (const result of await both('timeseries', spec('latency', 'p95', { interval: '1h' }))) {
      const expected = seriesRows(WINDOW, HOUR, (g) => Math.max(...durations(g)), null);
      expect(result.rows).toHaveLength(24);
      result.rows.forEach((row, i) => {
        if (expected[i]![1] === null) expect(row[1]).toBeNull();
        else expect(row[1] as number).toBeLessThanOrEqual(expected[i]![1] as number);
      });
    }
  });

  it('a grouped series has every bucket for every group', async () => {
    for (const result of await both('timeseries', spec('cost', 'sum', { interval: '1h', group_by: ['model_name'] }))) {
      expect(result.columns).toEqual(['time', 'model_name', 'value']);
      expect(result.rows).toHaveLength(24 * 5);
      for (const [time, model, value] of result.rows as [string, string, number][]) {
        const t = Date.parse(time);
        expectValue(
          value,
          sum(SPANS.filter((s) => s.model === model && s.start >= t && s.start < t + HOUR).map((s) => s.cost)),
          `${time} ${model}`,
        );
      }
    }
  });

  // Among the steps giving 30 to 300 points, auto takes the one nearest 100 points.
  const autos: [string, number, number][] = [
    ['1h', HOUR, 60],
    ['1d', DAY, 900],
    ['7d', 7 * DAY, 7200],
    ['30d', 30 * DAY, 21600],
    ['90d', 90 * DAY, 86400],
  ];
  for (const [label, length, step] of autos) {
    it(`auto interval over ${label}: 30 to 300 points, all buckets present`, async () => {
      // The 1h window holds trace t10 (4 spans); the others hold all 40.
      const window =
        label === '1h' ? { startMs: H - 4 * HOUR, endMs: H - 3 * HOUR } : { startMs: H - length, endMs: H };
      for (const result of await both('timeseries', spec('count', 'count', { interval: 'auto' }), window)) {
        expect(result.meta.interval_seconds).toBe(step);
        expect(result.rows.length).toBeGreaterThanOrEqual(30);
        expect(result.rows.length).toBeLessThanOrEqual(300);
        const times = result.rows.map((r) => Date.parse(r[0] as string));
        expect(times[0]).toBe(Date.parse(result.meta.range_start as string));
        expect(times[0]! % (step * 1000)).toBe(0);
        expect(times[0]!).toBeLessThanOrEqual(window.startMs);
        expect(times.at(-1)! + step * 1000).toBeGreaterThanOrEqual(window.endMs);
        times.slice(1).forEach((t, i) => expect(t - times[i]!).toBe(step * 1000));
        expect(sum(result.rows.map((r) => r[1] as number))).toBe(label === '1h' ? 4 : 40);
      }
    });
  }
});
