import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { queryWidget } from '../../src/widgets/data.js';
import { runTick, measureGroup } from '../../src/alerts/evaluation.js';
import { groupAlerts, groupQuery, MAX_GROUPS, type MeasuredAlert } from '../../src/alerts/queries.js';
import { normalizeFilters, widgetSpec, WINDOWS, type AlertWindow } from '../../src/alerts/schema.js';
import type { Aggregation } from '../../src/widgets/spec.js';

/**
 * Evaluation on real stores: an alert's value for [end - window, end) is the widget engine's answer
 * for the same spec and window (rollup and raw paths, with filters, grouped), alerts sharing filters
 * and window share one query, and every no-data mode, ERROR and recovery, and pause/resume behave as
 * the state machine says once written to Postgres.
 */

const h = useHarness();
const MIN = 60_000;
/** A whole minute safely in the past: the generated spans end 10 minutes after it, still in the past. */
const E = Math.floor(Date.now() / MIN) * MIN - 20 * MIN;
const SPANS = [
  ...generateSpans({ traces: 500, startMs: E - 130 * MIN, endMs: E + 10 * MIN, seed: 23, errorShare: 0.15 }),
  // The generator follows a daily rhythm, which at some hours leaves [E - 1m, E) without a span; an
  // empty window is no data (null), not 0. A few traces start in it whatever the hour.
  ...generateSpans({ traces: 3, startMs: E - MIN, endMs: E - MIN / 2, seed: 29 }),
];
let token: string;
let workspaceId: string;
let projectId: string;

beforeAll(async () => {
  const owner = await signUp(h(), 'alerts');
  token = owner.token;
  workspaceId = owner.workspace.id;
  projectId = (await createProject(h(), token, workspaceId)).id;
  await ingestSpans(h(), (await createApiKey(h(), token, projectId)).key, SPANS);
});

async function newProject() {
  return (await createProject(h(), token, workspaceId)).id;
}
async function createAlert(project: string, body: Record<string, unknown>) {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/alerts`,
    token,
    payload: {
      name: `a-${crypto.randomBytes(3).toString('hex')}`,
      project_id: project,
      view: 'SPANS',
      threshold: 0,
      ...body,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().alert as { id: string };
}
async function readAlert(project: string, id: string) {
  return (
    await call(h().api, { method: 'GET', url: `${PUBLIC}/alerts/${id}`, token, query: { project_id: project } })
  ).json();
}
async function evaluations(project: string, id: string) {
  return (
    await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/alerts/${id}/evaluations`,
      token,
      query: { project_id: project },
    })
  ).json();
}
function tick(project: string, windowEndMs: number, tickToken = crypto.randomUUID()) {
  return runTick(h().ctx, { token: tickToken, windowEndMs, projectIds: [project] });
}

type Case = { measure: string; aggregation: Aggregation; window: AlertWindow; filters?: Record<string, unknown>[] };
const widgetAnswer = async (c: Case, groupBy: string | null = null) => {
  const spec = widgetSpec({
    measure: c.measure,
    aggregation: c.aggregation,
    predicates: normalizeFilters((c.filters ?? []) as never),
    group_by: groupBy,
  });
  return queryWidget(h().ctx, projectId, groupBy ? 'table' : 'stat', spec, {
    startMs: E - WINDOWS[c.window] * MIN,
    endMs: E,
  });
};

describe('an alert’s value is the widget engine’s answer for the same spec and window', () => {
  const CASES: Case[] = [
    { measure: 'count', aggregation: 'count', window: '1m' },
    { measure: 'count', aggregation: 'count', window: '5m' },
    { measure: 'latency', aggregation: 'p95', window: '1h' },
    { measure: 'latency', aggregation: 'avg', window: '30m' },
    { measure: 'latency', aggregation: 'max', window: '2h' },
    { measure: 'cost', aggregation: 'sum', window: '1h' },
    { measure: 'cost', aggregation: 'max', window: '1h' }, // no rollup state: raw spans
    { measure: 'error_rate', aggregation: 'avg', window: '1h' },
    { measure: 'user_id', aggregation: 'uniq', window: '2h' },
    { measure: 'total_tokens', aggregation: 'avg', window: '10m' },
    {
      measure: 'count',
      aggregation: 'count',
      window: '1h',
      filters: [{ field: 'model_name', op: '=', value: 'gpt-4o' }],
    },
    {
      measure: 'latency',
      aggregation: 'p50',
      window: '1h',
      filters: [{ field: 'span_kind', op: 'in', value: ['llm'] }],
    },
    {
      measure: 'latency',
      aggregation: 'p99',
      window: '1h',
      filters: [{ field: 'environment', value: 'production', key: '' }],
    },
    { measure: 'cost', aggregation: 'sum', window: '1h', filters: [{ field: 'cost', op: '>', value: '0.001' }] }, // raw filter
    {
      measure: 'count',
      aggregation: 'count',
      window: '2h',
      filters: [{ field: 'metadata.region', op: '=', value: 'eu-west-1' }],
    },
    {
      measure: 'error_count',
      aggregation: 'sum',
      window: '30m',
      filters: [
        { field: 'span_kind', op: 'in', value: ['llm', 'tool'] },
        { field: 'status', op: 'eq', value: 'error' },
      ],
    },
  ];

  it('for every measure, aggregation, window and filter kind, through a tick; shared definitions share a query', async () => {
    const project = projectId;
    const ids: string[] = [];
    for (const c of CASES) ids.push((await createAlert(project, { ...c, filters: c.filters ?? [], threshold: -1 })).id);
    const report = await tick(project, E);
    expect(report).toMatchObject({ claimed: CASES.length, committed: CASES.length, failedQueries: 0 });
    // The five unfiltered 1h/2h/... specs on the rollup share per window; count 1h and filters differ.
    expect(report.queries).toBeLessThan(CASES.length);
    for (const [i, c] of CASES.entries()) {
      const expected = (await widgetAnswer(c)).rows[0]![0];
      expect(expected, JSON.stringify(c)).not.toBeNull();
      const alert = await readAlert(project, ids[i]!);
      expect([c, alert.last_value]).toEqual([c, expected]);
      expect(alert.last_evaluated_at).not.toBeNull();
      const history = await evaluations(project, ids[i]!);
      expect(history.data).toEqual([
        {
          window_start: new Date(E - WINDOWS[c.window] * MIN).toISOString(),
          window_end: new Date(E).toISOString(),
          value: expected,
          state: 'ALERTING',
          previous_state: 'OK',
          notified: false,
          groups: null,
          error: null,
          evaluated_at: expect.any(String),
        },
      ]);
    }
  });

  it('puts alerts of one project with the same window and filters in one query, one value column each', async () => {
    const base = {
      project_id: projectId,
      time_window: '1h' as const,
      predicates: normalizeFilters([{ field: 'model_name', op: '=', value: 'gpt-4o' }]),
      group_by: null,
      threshold_operator: '>' as const,
    };
    const alerts: MeasuredAlert[] = [
      { ...base, id: 'a', measure: 'count', aggregation: 'count' },
      { ...base, id: 'b', measure: 'latency', aggregation: 'p95' },
      { ...base, id: 'c', measure: 'cost', aggregation: 'sum' },
      { ...base, id: 'd', measure: 'cost', aggregation: 'max' }, // raw spans: its own query
      { ...base, id: 'e', measure: 'count', aggregation: 'count', time_window: '5m' },
      { ...base, id: 'f', measure: 'count', aggregation: 'count', project_id: crypto.randomUUID() },
    ];
    const groups = groupAlerts(alerts, E);
    expect(groups.map((g) => [g.source, g.alerts.map((a) => a.id)])).toEqual([
      ['span_rollup_1m', ['a', 'b', 'c']],
      ['spans', ['d']],
      ['span_rollup_1m', ['e']],
      ['span_rollup_1m', ['f']],
    ]);
    expect(groupQuery(groups[0]!).query).toMatch(/AS v0, .* AS v1, .* AS v2\nFROM span_rollup_1m/s);
    const outcome = await measureGroup(h().ctx, groups[0]!);
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    for (const [id, measure, aggregation] of [
      ['a', 'count', 'count'],
      ['b', 'latency', 'p95'],
      ['c', 'cost', 'sum'],
    ] as const) {
      const expected = (
        await widgetAnswer({
          measure,
          aggregation,
          window: '1h',
          filters: [{ field: 'model_name', op: '=', value: 'gpt-4o' }],
        })
      ).rows[0]![0];
      expect(outcome.answers.get(id)!.get('')).toBe(expected);
    }
  });

  it('per group: each group’s value is the widget table’s row for it (groups without the dimension left out)', async () => {
    for (const [groupBy, measure, aggregation] of [
      ['model_name', 'latency', 'p95'],
      ['user_id', 'count', 'count'],
      ['metadata.region', 'cost', 'sum'],
      ['environment', 'error_rate', 'avg'],
    ] as const) {
      const alert: MeasuredAlert = {
        id: 'g',
        project_id: projectId,
        measure,
        aggregation,
        time_window: '2h',
        predicates: [],
        group_by: groupBy,
        threshold_operator: '>',
      };
      const outcome = await measureGroup(h().ctx, groupAlerts([alert], E)[0]!);
      if (!outcome.ok) throw new Error(outcome.error);
      const table = await widgetAnswer({ measure, aggregation, window: '2h' }, groupBy);
      const expected = new Map(table.rows.filter((r) => r[0] !== '').map((r) => [String(r[0]), r[1]]));
      const answered = outcome.answers.get('g')!;
      expect(expected.size, groupBy).toBeGreaterThan(1);
      // The widget's top 100 may hold the '' group, which the alert leaves out and replaces by the next group.
      const shared = new Map([...answered].filter(([g]) => expected.has(g)).sort());
      expect([groupBy, shared]).toEqual([groupBy, new Map([...expected].sort())]);
      expect(answered.size - expected.size).toBe(
        table.rows.some((r) => r[0] === '') && table.rows.length === 100 ? 1 : 0,
      );
    }
  });

  it('`!=` is the complement of `=`', async () => {
    const all = (await widgetAnswer({ measure: 'count', aggregation: 'count', window: '1h' })).rows[0]![0] as number;
    const gpt = (
      await widgetAnswer({
        measure: 'count',
        aggregation: 'count',
        window: '1h',
        filters: [{ field: 'model_name', value: 'gpt-4o' }],
      })
    ).rows[0]![0] as number;
    const alert: MeasuredAlert = {
      id: 'n',
      project_id: projectId,
      measure: 'count',
      aggregation: 'count',
      time_window: '1h',
      predicates: normalizeFilters([{ field: 'model_name', op: '!=', value: 'gpt-4o' }]),
      group_by: null,
      threshold_operator: '>',
    };
    const outcome = await measureGroup(h().ctx, groupAlerts([alert], E)[0]!);
    expect(outcome.ok && outcome.answers.get('n')!.get('')).toBe(all - gpt);
    expect(gpt).toBeGreaterThan(0);
  });

  it('keeps at most 100 groups per alert: the top by value, lowest first for `<`', async () => {
    const project = await newProject();
    const key = (await createApiKey(h(), token, project)).key;
    const spans = Array.from({ length: 130 }, (_, i) =>
      Array.from({ length: (i % 7) + 1 }, (_, j) => ({
        trace_id: `t${i}`,
        span_id: `s${j}`,
        name: 'op',
        start_time: new Date(E - 5 * MIN + j * 1000).toISOString(),
        user_id: `u${String(i).padStart(3, '0')}`,
      })),
    ).flat();
    await ingestSpans(h(), key, spans);
    const base = {
      project_id: project,
      measure: 'count',
      aggregation: 'count' as const,
      time_window: '10m' as const,
      predicates: [],
      group_by: 'user_id',
    };
    const group = groupAlerts<MeasuredAlert>(
      [
        { ...base, id: 'high', threshold_operator: '>' },
        { ...base, id: 'low', threshold_operator: '<' },
      ],
      E,
    );
    expect(group).toHaveLength(1);
    const outcome = await measureGroup(h().ctx, group[0]!);
    if (!outcome.ok) throw new Error(outcome.error);
    const high = outcome.answers.get('high')!;
    const low = outcome.answers.get('low')!;
    expect([high.size, low.size]).toEqual([MAX_GROUPS, MAX_GROUPS]);
    // 130 users with 1..7 spans: the top 100 by count leave out 30 of the smallest; the bottom 100 the reverse.
    expect([Math.min(...high.values()), Math.max(...low.values())]).toEqual([2, 6]);
    expect([...high.values()].filter((v) => v === 7).length).toBe(18);
    expect([...low.values()].filter((v) => v === 1).length).toBe(19);
    expect([...low.values()].includes(7)).toBe(false);
  });
});

describe('what is written for each outcome', () => {
  it('no data follows no_data_mode: HOLD stays OK, ZERO compares 0, NOTIFY goes NO_DATA', async () => {
    const project = await newProject();
    const hold = await createAlert(project, {
      measure: 'count',
      threshold_operator: '<',
      threshold: 1,
      no_data_mode: 'HOLD',
    });
    const zero = await createAlert(project, {
      measure: 'count',
      threshold_operator: '<',
      threshold: 1,
      no_data_mode: 'ZERO',
    });
    const notify = await createAlert(project, {
      measure: 'latency',
      aggregation: 'p95',
      threshold: 100,
      no_data_mode: 'NOTIFY',
    });
    const omitted = await createAlert(project, { measure: 'count', threshold_operator: '<', threshold: 1 });
    const report = await tick(project, E);
    // Same window, no filters, all on the rollup: one query.
    expect(report).toMatchObject({ committed: 4, queries: 1 });
    const states = await Promise.all(
      [hold, zero, notify, omitted].map(async (a) => [
        (await readAlert(project, a.id)).status,
        (await evaluations(project, a.id)).data[0],
      ]),
    );
    expect(states.map(([s]) => s)).toEqual(['OK', 'ALERTING', 'NO_DATA', 'OK']);
    expect(states.map(([, e]) => [e.state, e.previous_state, e.value])).toEqual([
      ['OK', 'OK', null],
      ['ALERTING', 'OK', null],
      ['NO_DATA', 'OK', null],
      ['OK', 'OK', null],
    ]);
  });

  it('a failing query goes ERROR with last_error and last_error_at, and recovers on the next good evaluation', async () => {
    const project = await newProject();
    const key = (await createApiKey(h(), token, project)).key;
    await ingestSpans(h(), key, [
      {
        trace_id: 't',
        span_id: 's',
        name: 'op',
        start_time: new Date(E - 30_000).toISOString(),
        end_time: new Date(E - 29_000).toISOString(),
      },
    ]);
    const broken = await createAlert(project, { measure: 'count', threshold: 0 });
    const healthy = await createAlert(project, {
      measure: 'latency',
      threshold: 0,
      filters: [{ field: 'name', value: 'op' }],
    });
    // A predicate no request could write (the API checks values): ClickHouse refuses to read 'abc' as a number.
    await h().ctx.pg.pool.query(
      `UPDATE alerts SET predicates = '[{"filter":{"field":"cost","op":"gt","value":"abc"},"negate":false}]' WHERE id = $1`,
      [broken.id],
    );
    const first = await tick(project, E);
    expect(first).toMatchObject({ committed: 2, queries: 2, failedQueries: 1 });
    const failed = await readAlert(project, broken.id);
    expect(failed).toMatchObject({
      status: 'ERROR',
      last_value: null,
      last_error: expect.stringMatching(/^the alert's query failed: .*abc/i),
      last_error_at: expect.any(String),
    });
    expect((await evaluations(project, broken.id)).data[0]).toMatchObject({
      state: 'ERROR',
      previous_state: 'OK',
      error: failed.last_error,
    });
    expect((await readAlert(project, healthy.id)).status).toBe('ALERTING');

    await h().ctx.pg.pool.query(`UPDATE alerts SET predicates = '[]' WHERE id = $1`, [broken.id]);
    await tick(project, E + MIN);
    const recovered = await readAlert(project, broken.id);
    expect(recovered).toMatchObject({
      status: 'ALERTING',
      last_value: 1,
      last_error: failed.last_error,
      last_error_at: failed.last_error_at,
    });
    expect(
      (await evaluations(project, broken.id)).data.map((e: { state: string; previous_state: string }) => [
        e.state,
        e.previous_state,
      ]),
    ).toEqual([
      ['ALERTING', 'ERROR'],
      ['ERROR', 'OK'],
    ]);
  });

  it('a paused alert is never evaluated; resumed, it starts at the next tick, not with the windows it missed', async () => {
    const project = await newProject();
    const alert = await createAlert(project, {
      measure: 'count',
      threshold_operator: '<',
      threshold: 1,
      no_data_mode: 'ZERO',
    });
    const act = (name: string) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/alerts/${alert.id}/${name}`,
        token,
        payload: { project_id: project },
      });
    await act('pause');
    expect(await tick(project, E)).toMatchObject({ claimed: 0 });
    expect((await readAlert(project, alert.id)).status).toBe('PAUSED');
    await act('resume');
    // Every window that closed before the resume counts as passed.
    expect(await tick(project, E + MIN)).toMatchObject({ claimed: 0 });
    const next = Math.floor((Date.now() + 60_000) / MIN) * MIN;
    expect(await tick(project, next)).toMatchObject({ claimed: 1, committed: 1 });
    expect((await evaluations(project, alert.id)).data.map((e: { window_end: string }) => e.window_end)).toEqual([
      new Date(next).toISOString(),
    ]);
  });

  it('evaluates a window once: the same tick again, or another token for the same window, finds nothing due', async () => {
    const project = await newProject();
    await createAlert(project, { measure: 'count' });
    const jobToken = crypto.randomUUID();
    expect(await tick(project, E, jobToken)).toMatchObject({ committed: 1 });
    expect(await tick(project, E, jobToken)).toMatchObject({ claimed: 0 });
    expect(await tick(project, E, crypto.randomUUID())).toMatchObject({ claimed: 0 });
    // An older window never overwrites a newer one.
    expect(await tick(project, E - MIN)).toMatchObject({ claimed: 0 });
  });
});
