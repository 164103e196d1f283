import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { runTick } from '../../src/alerts/evaluation.js';
import { normalizePredicate } from '../../src/query/predicates.js';
import { writeScores } from '../../src/scores/service.js';
import { notificationBody } from '../../src/alerts/notifications.js';
import type { ClaimedAlert } from '../../src/alerts/claims.js';
import { measureOf } from '../../src/alerts/schema.js';

/**
 * Alerts on scores (quality.md §1): a SCORES alert ("average helpfulness over 1 h below 0.7, per
 * metadata.tenant") fires like any other, and the `score` predicate filters SPANS alerts.
 */
const h = useHarness();
const MIN = 60_000;
let token: string;
let workspaceId: string;
let projectId: string;
/** A window end a minute past now: the scores written now lie in [E - 1h, E). */
let E: number;

beforeAll(async () => {
  const owner = await signUp(h(), 'score-alerts');
  token = owner.token;
  workspaceId = owner.workspace.id;
  projectId = (await createProject(h(), token, workspaceId)).id;
  const key = (await createApiKey(h(), token, projectId)).key;
  const t0 = Date.now() - 10 * MIN;
  const span = (trace: string, tenant: string) => ({
    trace_id: trace,
    span_id: 'root',
    name: 'chat',
    kind: 'llm',
    start_time: iso(t0),
    end_time: iso(t0 + 50),
    metadata: { tenant },
  });
  await ingestSpans(h(), key, [span('t1', 'acme'), span('t2', 'beta')]);
  // acme: 0.9 and 0.8 (avg 0.85); beta: 0.4 and 0.6 (avg 0.5); all four: 0.675.
  const written = await writeScores(
    h().ctx,
    { projectId, traceTtlDays: 30 },
    [
      { trace_id: 't1', name: 'helpfulness', value: 0.9 },
      { trace_id: 't1', name: 'helpfulness', value: 0.8 },
      { trace_id: 't2', name: 'helpfulness', value: 0.4 },
      { trace_id: 't2', name: 'helpfulness', value: 0.6 },
    ],
    { source: 'evaluator', evaluatorId: 'ev', evaluatorVersion: 1 },
  );
  expect(written.accepted).toBe(4);
  E = Math.ceil(Date.now() / MIN) * MIN + MIN;
});

async function createAlert(project: string, body: Record<string, unknown>) {
  return call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/alerts`,
    token,
    payload: { name: `a-${crypto.randomBytes(3).toString('hex')}`, project_id: project, ...body },
  });
}
async function readAlert(project: string, id: string) {
  return (
    await call(h().api, { method: 'GET', url: `${PUBLIC}/alerts/${id}`, token, query: { project_id: project } })
  ).json();
}
const HELPFULNESS = {
  view: 'SCORES',
  score_name: 'helpfulness',
  measure: 'value',
  aggregation: 'avg',
  threshold: 0.7,
  threshold_operator: '<',
  window: '1h',
};

describe('an alert on the SCORES view', () => {
  it('fires per metadata.tenant when a tenant’s average helpfulness over 1 h is below 0.7', async () => {
    const res = await createAlert(projectId, { ...HELPFULNESS, group_by: 'metadata.tenant' });
    expect(res.statusCode, res.body).toBe(201);
    const alert = res.json().alert;
    expect(alert).toMatchObject({ view: 'SCORES', score_name: 'helpfulness', measure: 'value', aggregation: 'avg' });
    const report = await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [projectId] });
    expect(report.failedQueries).toBe(0);
    const read = await readAlert(projectId, alert.id);
    expect(read.status).toBe('ALERTING');
    expect(read.groups).toEqual([{ group: 'beta', status: 'ALERTING', value: 0.5, alerted_at: expect.any(String) }]);
  });

  it('fires ungrouped on the average of all, and stays OK on a score nobody wrote', async () => {
    const all = (await createAlert(projectId, HELPFULNESS)).json().alert;
    const other = (await createAlert(projectId, { ...HELPFULNESS, score_name: 'never-written' })).json().alert;
    await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [projectId] });
    expect(await readAlert(projectId, all.id)).toMatchObject({ status: 'ALERTING', last_value: 0.675 });
    // No scores in the window is no data: HOLD keeps OK.
    expect(await readAlert(projectId, other.id)).toMatchObject({ status: 'OK', last_error: null });
  });

  it('an edit to another score name remeasures; a SCORES alert needs its score name (422)', async () => {
    const alert = (await createAlert(projectId, { ...HELPFULNESS, threshold_operator: '>', threshold: 0 })).json()
      .alert;
    const patched = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/alerts/${alert.id}`,
      token,
      payload: { project_id: projectId, score_name: 'tone' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ view: 'SCORES', score_name: 'tone', measure: 'value' });
    const missing = await createAlert(projectId, { ...HELPFULNESS, score_name: undefined });
    expect(missing.statusCode).toBe(422);
    expect(JSON.stringify(missing.json().detail)).toContain('score_name');
    const spans = await createAlert(projectId, { ...HELPFULNESS, view: 'SPANS', measure: 'count' });
    expect(spans.statusCode).toBe(422);
    expect(JSON.stringify(spans.json().detail)).toContain('score_name is for the SCORES view only');
  });

  it('names its score in the webhook body; other alerts’ bodies have no score_name', () => {
    const claimed = (view: 'SCORES' | 'SPANS', stored: string) =>
      ({
        id: 'a1',
        project_id: projectId,
        name: 'unhelpful',
        view,
        ...measureOf(view, stored),
        aggregation: 'avg',
        threshold: 0.7,
        threshold_operator: '<',
        time_window: '1h',
        predicates: [],
        group_by: null,
        no_data_mode: 'HOLD',
        renotify_mode: 'NEVER',
        renotify_interval_minutes: 0,
        severity: 'warning',
        webhook_url: 'https://hooks.example.com/x',
        status: 'OK',
        spec_version: 1,
        alerted_at: null,
      }) as unknown as ClaimedAlert;
    const body = (alert: ClaimedAlert) =>
      JSON.parse(
        notificationBody({
          id: 'n1',
          alert,
          groupKey: '',
          state: 'ALERTING',
          previousState: 'OK',
          value: 0.5,
          why: 'OK → ALERTING: 0.5 < 0.7',
          windowEndMs: E,
          webUrl: 'http://web.test',
        }),
      );
    expect(body(claimed('SCORES', 'value:helpfulness'))).toMatchObject({ measure: 'value', score_name: 'helpfulness' });
    expect(body(claimed('SPANS', 'cost'))).not.toHaveProperty('score_name');
  });

  it("never reads another project's scores", async () => {
    const other = (await createProject(h(), token, workspaceId)).id;
    const alert = (await createAlert(other, { ...HELPFULNESS, no_data_mode: 'NOTIFY' })).json().alert;
    await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [other] });
    expect(await readAlert(other, alert.id)).toMatchObject({ status: 'NO_DATA', last_value: null });
  });
});

describe('the score predicate in alert and detector filters', () => {
  it('a SPANS alert counts the spans of traces whose helpfulness is below 0.5', async () => {
    const res = await createAlert(projectId, {
      view: 'SPANS',
      measure: 'count',
      aggregation: 'count',
      threshold: 0,
      threshold_operator: '>',
      window: '1h',
      filters: [{ field: 'score', key: 'helpfulness', op: '<', value: 0.5 }],
    });
    expect(res.statusCode, res.body).toBe(201);
    // The spans are 10 minutes old: a window ending a minute past now holds them.
    await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [projectId] });
    expect(await readAlert(projectId, res.json().alert.id)).toMatchObject({ status: 'ALERTING', last_value: 1 });
  });

  it('normalises the loose forms and refuses bad ones at the predicate’s field', () => {
    expect(normalizePredicate({ field: 'score.helpfulness', op: '<', value: '0.5' })).toEqual({
      ok: true,
      predicate: { filter: { field: 'score', key: 'helpfulness', op: 'lt', value: 0.5 }, negate: false },
    });
    expect(normalizePredicate({ field: 'score', key: 'tone', op: '=', value: 'polite' })).toMatchObject({
      ok: false,
      issues: [{ path: ['value'] }],
    });
    expect(normalizePredicate({ field: 'score', key: 'tone', op: 'in', value: 'polite' })).toEqual({
      ok: true,
      predicate: { filter: { field: 'score', key: 'tone', op: 'in', value: ['polite'] }, negate: false },
    });
    expect(normalizePredicate({ field: 'score', key: 'tone', op: '!=', value: 1 })).toMatchObject({
      ok: true,
      predicate: { filter: { op: 'neq' }, negate: false },
    });
    expect(normalizePredicate({ field: 'score', key: 'x', op: 'is_set' })).toMatchObject({ ok: true });
    expect(normalizePredicate({ field: 'score', key: 'x', op: 'is_set', value: 1 })).toMatchObject({ ok: false });
    expect(normalizePredicate({ field: 'score', op: '>', value: 1 })).toMatchObject({
      ok: false,
      issues: [{ path: ['key'] }],
    });
    expect(normalizePredicate({ field: 'score', key: 'x', op: 'contains', value: 'a' })).toMatchObject({
      ok: false,
      issues: [{ path: ['op'] }],
    });
  });

  it('a detector takes a score filter', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token,
      payload: {
        project_id: projectId,
        name: 'unhelpful errors',
        type: 'error',
        config: { filters: [{ field: 'score', key: 'helpfulness', op: '<', value: 0.5 }] },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});
