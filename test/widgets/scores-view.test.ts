import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { writeScores } from '../../src/scores/service.js';

/**
 * The SCORES view of widgets (quality.md §1; docs/scores.md, "The SCORES view"): one score name's
 * values aggregated, each answer with its count and, for avg, the 95% interval; grouped by the
 * score's fields and its trace's; filtered by the predicate table. Every expectation is computed by hand.
 */
const h = useHarness();

type Tenant = Awaited<ReturnType<typeof projectWithKey>>;
let a: Tenant;

const query = (token: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/widgets/query`,
    token,
    payload: { spec, range: '1h', ...extra },
  });

const HELP = { view: 'SCORES', score_name: 'helpfulness', measure: 'value' };

/** Three traces: t1 and t3 by tenant acme on gpt-4o, t2 by tenant beta on claude (its child on gpt-4o too). */
async function seed(t: Tenant) {
  const t0 = Date.now() - 5 * 60_000;
  const span = (trace: string, id: string, model: string, tenant: string, parent?: string) => ({
    trace_id: trace,
    span_id: id,
    parent_span_id: parent,
    name: `${trace}-root`,
    kind: 'llm',
    model_name: model,
    start_time: iso(t0),
    end_time: iso(t0 + 100),
    environment: 'prod',
    metadata: { tenant },
  });
  await ingestSpans(h(), t.key.key, [
    span('t1', 'r', 'gpt-4o', 'acme'),
    span('t2', 'r', 'claude', 'beta'),
    span('t2', 'c', 'gpt-4o', 'beta', 'r'),
    span('t3', 'r', 'gpt-4o', 'acme'),
  ]);
  const project = { projectId: t.project.id, traceTtlDays: 30 };
  // helpfulness: api 0.9 (t1), 0.5 (t3), 0.2 (t2); evaluator v3: 0.6 (t1), 0.1 (t2). Another name beside.
  const api = await writeScores(
    h().ctx,
    project,
    [
      { trace_id: 't1', name: 'helpfulness', value: 0.9 },
      { trace_id: 't3', name: 'helpfulness', value: 0.5 },
      { trace_id: 't2', span_id: 'c', name: 'helpfulness', value: 0.2 },
      { trace_id: 't1', name: 'toxicity', value: 0.8 },
      { trace_id: 't2', name: 'toxicity', value: 0.1 },
      { trace_id: 't3', name: 'tone', data_type: 'categorical', string_value: 'polite', value: 1 },
    ],
    { source: 'api' },
  );
  expect(api.rejected).toEqual([]);
  const judged = await writeScores(
    h().ctx,
    project,
    [
      { trace_id: 't1', name: 'helpfulness', value: 0.6 },
      { trace_id: 't2', name: 'helpfulness', value: 0.1 },
    ],
    { source: 'evaluator', evaluatorId: 'ev-1', evaluatorVersion: 3 },
  );
  expect(judged.rejected).toEqual([]);
}

const VALUES = [0.9, 0.5, 0.2, 0.6, 0.1];
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
/** The normal-approximation 95% interval of the mean (sample standard deviation). */
function ci(xs: number[]): [number, number] {
  const m = mean(xs);
  const s = Math.sqrt(xs.reduce((acc, x) => acc + (x - m) ** 2, 0) / (xs.length - 1));
  const half = (1.959964 * s) / Math.sqrt(xs.length);
  return [m - half, m + half];
}

beforeAll(async () => {
  a = await projectWithKey(h());
  await seed(a);
});

describe('POST /widgets/query with view SCORES', () => {
  it('answers avg with its count and 95% interval, like any widget', async () => {
    const res = await query(a.key.key, { ...HELP, aggregation: 'avg' }, { type: 'stat' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'ok', columns: ['value', 'count', 'ci_low', 'ci_high'] });
    expect(body.meta).toMatchObject({ view: 'SCORES', source: 'scores', aggregation: 'avg' });
    const [value, count, low, high] = body.rows[0];
    const [l, u] = ci(VALUES);
    expect(count).toBe(5);
    expect(value).toBeCloseTo(mean(VALUES), 9);
    expect(low).toBeCloseTo(l, 6);
    expect(high).toBeCloseTo(u, 6);
  });

  it('answers min, max, sum, count and p50 as computed by hand', async () => {
    const expected: Record<string, number> = { min: 0.1, max: 0.9, sum: 2.3, count: 5, p50: 0.5 };
    for (const [aggregation, want] of Object.entries(expected)) {
      const res = await query(a.key.key, { ...HELP, aggregation }, { type: 'stat' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().columns).toEqual(['value', 'count']);
      const [value, count] = res.json().rows[0];
      expect(value, aggregation).toBeCloseTo(want, 9);
      expect(count).toBe(5);
    }
  });

  it('groups by score source and evaluator version', async () => {
    const res = await query(
      a.key.key,
      { ...HELP, aggregation: 'avg', group_by: ['score_source', 'evaluator_version'] },
      { type: 'table' },
    );
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().rows as unknown[][];
    expect(res.json().columns).toEqual(['score_source', 'evaluator_version', 'value', 'count', 'ci_low', 'ci_high']);
    const api = rows.find((r) => r[0] === 'api')!;
    const evaluator = rows.find((r) => r[0] === 'evaluator')!;
    expect(api.slice(1, 4)).toEqual(['', expect.closeTo(mean([0.9, 0.5, 0.2]), 9), 3]);
    expect(evaluator.slice(1, 4)).toEqual(['3', expect.closeTo(0.35, 9), 2]);
    const [l, u] = ci([0.6, 0.1]);
    expect(evaluator[4]).toBeCloseTo(l, 6);
    expect(evaluator[5]).toBeCloseTo(u, 6);
  });

  it("groups by the trace's metadata key and models", async () => {
    const byTenant = await query(
      a.key.key,
      { ...HELP, aggregation: 'avg', group_by: ['metadata.tenant'] },
      { type: 'table' },
    );
    expect(byTenant.statusCode, byTenant.body).toBe(200);
    const tenants = Object.fromEntries((byTenant.json().rows as unknown[][]).map((r) => [r[0], [r[1], r[2]]]));
    expect(tenants).toEqual({
      acme: [expect.closeTo(mean([0.9, 0.5, 0.6]), 9), 3],
      beta: [expect.closeTo(mean([0.2, 0.1]), 9), 2],
    });
    // t2 used two models: its scores count in both.
    const byModel = await query(
      a.key.key,
      { ...HELP, aggregation: 'count', group_by: ['model_name'] },
      { type: 'bar' },
    );
    const models = Object.fromEntries((byModel.json().rows as unknown[][]).map((r) => [r[0], r[1]]));
    expect(models).toEqual({ 'gpt-4o': 5, claude: 2 });
  });

  it('groups a categorical score by its label', async () => {
    const res = await query(
      a.key.key,
      { view: 'SCORES', score_name: 'tone', measure: 'value', aggregation: 'count', group_by: ['score_string_value'] },
      { type: 'table' },
    );
    expect(res.json().rows).toEqual([['polite', 1, 1]]);
  });

  it('filters by the predicate table, a score filter included', async () => {
    const acme = await query(
      a.key.key,
      { ...HELP, aggregation: 'avg', filters: [{ field: 'metadata', key: 'tenant', op: 'eq', value: 'acme' }] },
      { type: 'stat' },
    );
    expect(acme.json().rows[0].slice(0, 2)).toEqual([expect.closeTo(mean([0.9, 0.5, 0.6]), 9), 3]);
    // Traces whose toxicity is above 0.5: t1 only.
    const toxic = await query(
      a.key.key,
      { ...HELP, aggregation: 'max', filters: [{ field: 'score', key: 'toxicity', op: 'gt', value: 0.5 }] },
      { type: 'stat' },
    );
    expect(toxic.json().rows).toEqual([[0.9, 2]]);
    // Traces without a toxicity score: t3.
    const unscored = await query(
      a.key.key,
      { ...HELP, aggregation: 'sum', filters: [{ field: 'score', key: 'toxicity', op: 'is_not_set' }] },
      { type: 'stat' },
    );
    expect(unscored.json().rows).toEqual([[0.5, 1]]);
  });

  it('answers a time series whose buckets carry value, count and interval', async () => {
    const res = await query(a.key.key, { ...HELP, aggregation: 'avg', interval: '5m' }, { type: 'timeseries' });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.columns).toEqual(['time', 'value', 'count', 'ci_low', 'ci_high']);
    const filled = (body.rows as unknown[][]).filter((r) => r[2] !== 0);
    expect(filled).toHaveLength(1);
    expect(filled[0]![2]).toBe(5);
    // Empty buckets: no value, no scores, no interval.
    expect((body.rows as unknown[][]).find((r) => r[2] === 0)!.slice(1)).toEqual([null, 0, null, null]);
  });

  it('draws a grouped time series of the top groups only, each bucket as the table answers the group', async () => {
    const spec = { ...HELP, aggregation: 'avg', interval: '5m', group_by: ['metadata.tenant'] };
    const table = await query(a.key.key, spec, { type: 'table' });
    expect(table.statusCode, table.body).toBe(200);
    const whole = Object.fromEntries((table.json().rows as unknown[][]).map((r) => [r[0], r.slice(1, 3)]));
    const series = await query(a.key.key, spec, { type: 'timeseries' });
    expect(series.statusCode, series.body).toBe(200);
    const filled = (series.json().rows as unknown[][]).filter((r) => r[3] !== 0 && r[3] !== null);
    // All scores fall in one 5-minute bucket: each tenant's bucket is its whole-range answer.
    expect(Object.fromEntries(filled.map((r) => [r[1], r.slice(2, 4)]))).toEqual(whole);
    // Only the best group is drawn when one is asked for (acme's average is the higher).
    const top = await query(a.key.key, { ...spec, limit: 1 }, { type: 'timeseries' });
    expect(top.statusCode, top.body).toBe(200);
    const groups = new Set((top.json().rows as unknown[][]).filter((r) => r[3] !== 0).map((r) => r[1]));
    expect([...groups]).toEqual(['acme']);
  });

  it('answers a window without scores as empty, and a replaced or deleted score by its newest row', async () => {
    const none = await query(a.key.key, { ...HELP, score_name: 'nothing', aggregation: 'avg' }, { type: 'stat' });
    expect(none.json().rows).toEqual([[null, 0, null, null]]);
    const t = await projectWithKey(h());
    await writeScores(
      h().ctx,
      { projectId: t.project.id, traceTtlDays: 30 },
      [{ score_id: 'x', trace_id: 'q', name: 'n', value: 1 }],
      {
        source: 'api',
      },
    );
    await writeScores(
      h().ctx,
      { projectId: t.project.id, traceTtlDays: 30 },
      [{ score_id: 'x', trace_id: 'q', name: 'n', value: 4 }],
      {
        source: 'api',
      },
    );
    const spec = { view: 'SCORES', score_name: 'n', measure: 'value', aggregation: 'sum' };
    expect((await query(t.key.key, spec, { type: 'stat' })).json().rows).toEqual([[4, 1]]);
    const del = await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/x`, token: t.key.key });
    expect(del.statusCode).toBe(204);
    expect((await query(t.key.key, spec, { type: 'stat' })).json().rows).toEqual([[0, 0]]);
  });

  it('refuses a SCORES spec without score_name, with another measure or with uniq (422)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ view: 'SCORES', measure: 'value', aggregation: 'avg' }, 'score_name'],
      [{ ...HELP, measure: 'cost', aggregation: 'avg' }, 'measure'],
      [{ ...HELP, aggregation: 'uniq' }, 'aggregation'],
      [{ ...HELP, aggregation: 'avg', group_by: ['kind'] }, 'group_by'],
      [{ view: 'SPANS', score_name: 'x', measure: 'count', aggregation: 'count' }, 'score_name'],
    ];
    for (const [spec, field] of cases) {
      const res = await query(a.key.key, spec);
      expect(res.statusCode, JSON.stringify(spec)).toBe(422);
      expect(JSON.stringify(res.json().detail)).toContain(field);
    }
  });

  it("never reads another project's scores", async () => {
    const b = await projectWithKey(h());
    const res = await query(b.key.key, { ...HELP, aggregation: 'count' }, { type: 'stat' });
    expect(res.json().rows).toEqual([[0, 0]]);
    // B's key naming A's project is refused.
    const cross = await query(b.key.key, { ...HELP, aggregation: 'count' }, { type: 'stat', project_id: a.project.id });
    expect([400, 403, 404]).toContain(cross.statusCode);
  });
});

describe('the score predicate in the SPANS and TRACES views', () => {
  it('counts the spans and traces whose trace has a matching score', async () => {
    const filters = [{ field: 'score', key: 'helpfulness', op: 'lt', value: 0.3 }];
    const spans = await query(
      a.key.key,
      { view: 'SPANS', measure: 'count', aggregation: 'count', filters },
      { type: 'stat' },
    );
    expect(spans.statusCode, spans.body).toBe(200);
    // t2 (0.2 and 0.1): its two spans, read from raw spans.
    expect(spans.json()).toMatchObject({ rows: [[2]], meta: { source: 'spans' } });
    const traces = await query(
      a.key.key,
      { view: 'TRACES', measure: 'count', aggregation: 'count', filters },
      { type: 'stat' },
    );
    expect(traces.json().rows).toEqual([[1]]);
  });
});
