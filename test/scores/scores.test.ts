import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/** Scores (quality.md §1): written with partial success, replaced by id, deleted at once, read everywhere. */
const h = useHarness();

type Tenant = Awaited<ReturnType<typeof projectWithKey>>;

const post = (token: string, scores: unknown[], query: Record<string, string> = {}) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/scores`, token, payload: { scores }, query });
const get = (token: string, path: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}${path}`, token, query });

async function twoTraces(t: Tenant) {
  const t0 = Date.now() - 60_000;
  const span = (trace: string, id: string, parent = '') => ({
    trace_id: trace,
    span_id: id,
    parent_span_id: parent || undefined,
    name: 'chat',
    kind: 'llm',
    start_time: iso(t0),
    end_time: iso(t0 + 100),
    session_id: 'sess-1',
    input: 'hi',
    output: 'hello',
  });
  await ingestSpans(h(), t.key.key, [span('t-a', 'root'), span('t-a', 'child', 'root'), span('t-b', 'root')]);
}

describe('POST /scores', () => {
  it('stores valid scores beside rejected ones, and reads them by trace, name and id', async () => {
    const t = await projectWithKey(h());
    await twoTraces(t);
    const res = await post(t.key.key, [
      { score_id: 's1', trace_id: 't-a', name: 'helpfulness', value: 0.8, comment: 'good' },
      { trace_id: 't-a', span_id: 'child', name: 'helpfulness', value: 0.4 },
      { name: 'no-target', value: 1 },
      { trace_id: 't-b', name: 'tone', data_type: 'categorical', string_value: 'polite' },
      { trace_id: 't-b', name: 'correct', data_type: 'boolean', value: 1 },
      { trace_id: 't-b', name: 'bad-bool', data_type: 'boolean', value: 2 },
      { trace_id: 't-b', name: 'nan', value: 'x' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.accepted).toBe(4);
    expect(body.rejected.map((r: { index: number }) => r.index)).toEqual([2, 5, 6]);
    expect(body.rejected[0].errors).toEqual(['trace_id: trace_id is required unless session_id is given']);
    expect(body.rejected[1].errors).toEqual(['value: a boolean score is 0 or 1']);

    const one = await get(t.key.key, '/scores/s1');
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toMatchObject({
      score_id: 's1',
      trace_id: 't-a',
      span_id: null,
      name: 'helpfulness',
      data_type: 'numeric',
      value: 0.8,
      string_value: null,
      comment: 'good',
      source: 'api',
      project_id: t.project.id,
    });
    const byTrace = await get(t.key.key, '/scores', { trace_id: 't-a' });
    expect(byTrace.json().meta.total).toBe(2);
    const bool = (await get(t.key.key, '/scores', { name: 'correct' })).json().data[0];
    expect(bool).toMatchObject({ data_type: 'boolean', value: 1, string_value: 'true' });

    // The detail carries the trace's and its spans' scores; the list item one summary per name.
    const detail = (await get(t.key.key, '/traces/t-a')).json();
    expect(detail.scores.map((s: { span_id: string | null; value: number }) => [s.span_id, s.value]).sort()).toEqual([
      [null, 0.8],
      ['child', 0.4],
    ]);
    const list = (await get(t.key.key, '/traces')).json();
    const a = list.data.find((i: { trace_id: string }) => i.trace_id === 't-a');
    const b = list.data.find((i: { trace_id: string }) => i.trace_id === 't-b');
    expect(a.scores).toEqual([
      { name: 'helpfulness', data_type: 'numeric', avg: 0.6000000000000001, values: {}, count: 2 },
    ]);
    expect(b.scores).toEqual([
      { name: 'correct', data_type: 'boolean', avg: 1, values: {}, count: 1 },
      { name: 'tone', data_type: 'categorical', avg: null, values: { polite: 1 }, count: 1 },
    ]);
  });

  it('replaces a re-sent score_id (keeping created_at) and deletes one at once', async () => {
    const t = await projectWithKey(h());
    await twoTraces(t);
    expect((await post(t.key.key, [{ score_id: 'r1', trace_id: 't-a', name: 'q', value: 1 }])).json().accepted).toBe(1);
    const first = (await get(t.key.key, '/scores/r1')).json();
    expect((await post(t.key.key, [{ score_id: 'r1', trace_id: 't-b', name: 'q', value: 5 }])).json().accepted).toBe(1);
    const second = (await get(t.key.key, '/scores/r1')).json();
    expect(second).toMatchObject({ trace_id: 't-b', value: 5, created_at: first.created_at });
    // The score moved: the first trace no longer has it, in any read (its old row may not be merged away yet).
    expect((await get(t.key.key, '/scores', { trace_id: 't-a' })).json().meta.total).toBe(0);
    expect((await get(t.key.key, '/traces/t-a')).json().scores).toEqual([]);
    const summaries = Object.fromEntries(
      (await get(t.key.key, '/traces'))
        .json()
        .data.map((i: { trace_id: string; scores: unknown }) => [i.trace_id, i.scores]),
    );
    expect(summaries).toEqual({
      't-a': [],
      't-b': [{ name: 'q', data_type: 'numeric', avg: 5, values: {}, count: 1 }],
    });
    expect(
      (await get(t.key.key, '/traces', { filters: JSON.stringify([{ field: 'score', key: 'q', op: 'gt', value: 2 }]) }))
        .json()
        .data.map((i: { trace_id: string }) => i.trace_id),
    ).toEqual(['t-b']);

    const del = await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/r1`, token: t.key.key });
    expect(del.statusCode, del.body).toBe(204);
    expect((await get(t.key.key, '/scores/r1')).statusCode).toBe(404);
    expect((await get(t.key.key, '/traces/t-b')).json().scores).toEqual([]);
    expect((await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/r1`, token: t.key.key })).statusCode).toBe(
      404,
    );
  });

  it('takes scores for a trace that has not arrived yet, and for a session', async () => {
    const t = await projectWithKey(h());
    const res = await post(t.key.key, [
      { trace_id: 'later', name: 'q', value: 3 },
      { session_id: 'sess-1', name: 'csat', value: 4 },
    ]);
    expect(res.json()).toEqual({ accepted: 2, rejected: [] });
    await twoTraces(t);
    const t0 = Date.now() - 30_000;
    await ingestSpans(h(), t.key.key, [
      { trace_id: 'later', span_id: 'r', name: 'x', start_time: iso(t0), end_time: iso(t0 + 1), session_id: 'sess-1' },
    ]);
    expect((await get(t.key.key, '/traces/later')).json().scores).toMatchObject([{ name: 'q', value: 3 }]);
    const session = (await get(t.key.key, '/sessions/sess-1')).json();
    expect(session.scores).toMatchObject([{ name: 'csat', value: 4, trace_id: null, session_id: 'sess-1' }]);
  });

  it('filters the trace list by score: numbers, labels, presence', async () => {
    const t = await projectWithKey(h());
    await twoTraces(t);
    await post(t.key.key, [
      { trace_id: 't-a', span_id: 'child', name: 'h', value: 0.2 },
      { trace_id: 't-b', name: 'h', value: 0.9 },
      { trace_id: 't-b', name: 'tone', string_value: 'rude', data_type: 'categorical' },
    ]);
    const ids = async (filters: unknown[]) =>
      (await get(t.key.key, '/traces', { filters: JSON.stringify(filters) }))
        .json()
        .data.map((i: { trace_id: string }) => i.trace_id)
        .sort();
    expect(await ids([{ field: 'score', key: 'h', op: 'lt', value: 0.5 }])).toEqual(['t-a']);
    expect(await ids([{ field: 'score', key: 'h', op: 'gte', value: 0.2 }])).toEqual(['t-a', 't-b']);
    expect(await ids([{ field: 'score', key: 'h', op: 'neq', value: 0.2 }])).toEqual(['t-b']);
    expect(await ids([{ field: 'score', key: 'tone', op: 'in', value: ['rude'] }])).toEqual(['t-b']);
    expect(await ids([{ field: 'score', key: 'tone', op: 'is_set' }])).toEqual(['t-b']);
    expect(await ids([{ field: 'score', key: 'tone', op: 'is_not_set' }])).toEqual(['t-a']);
    const bad = await get(t.key.key, '/traces', {
      filters: JSON.stringify([{ field: 'score', key: 'h', op: 'in', value: 1 }]),
    });
    expect(bad.statusCode).toBe(400);
  });

  it('validates against score configs: type, range, categories; 409 on a second config of a name', async () => {
    const t = await projectWithKey(h());
    await twoTraces(t);
    const config = (payload: Record<string, unknown>) =>
      call(h().api, { method: 'POST', url: `${PUBLIC}/score-configs`, token: t.key.key, payload });
    const tone = await config({
      name: 'tone',
      data_type: 'categorical',
      categories: [
        { label: 'polite', value: 1 },
        { label: 'rude', value: 0 },
      ],
    });
    expect(tone.statusCode, tone.body).toBe(201);
    expect((await config({ name: 'tone', data_type: 'numeric' })).statusCode).toBe(409);
    expect((await config({ name: 'x', data_type: 'categorical' })).statusCode).toBe(422);
    expect((await config({ name: 'r', data_type: 'numeric', min_value: 0, max_value: 1 })).statusCode).toBe(201);
    const res = await post(t.key.key, [
      { trace_id: 't-a', name: 'tone', string_value: 'rude' },
      { trace_id: 't-a', name: 'tone', string_value: 'meh' },
      { trace_id: 't-a', name: 'r', value: 2 },
      { trace_id: 't-a', name: 'r', value: 1 },
    ]);
    expect(res.json().accepted).toBe(2);
    expect(res.json().rejected.map((r: { index: number }) => r.index)).toEqual([1, 2]);
    const stored = (await get(t.key.key, '/scores', { name: 'tone' })).json().data[0];
    expect(stored).toMatchObject({
      data_type: 'categorical',
      value: 0,
      string_value: 'rude',
      config_id: tone.json().id,
    });

    const patched = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/score-configs/${tone.json().id}`,
      token: t.key.key,
      payload: { archived: true, description: 'old' },
    });
    expect(patched.json()).toMatchObject({ archived: true, description: 'old', data_type: 'categorical' });
    expect((await get(t.key.key, '/score-configs')).json().meta.total).toBe(2);
  });

  it('keeps projects apart and needs MEMBER to write', async () => {
    const a = await projectWithKey(h(), 'a');
    const b = await projectWithKey(h(), 'b');
    await post(a.key.key, [{ score_id: 'mine', trace_id: 't', name: 'q', value: 1 }]);
    expect((await get(b.key.key, '/scores/mine')).statusCode).toBe(404);
    expect((await get(b.key.key, '/scores')).json().meta.total).toBe(0);
    expect((await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/mine`, token: b.key.key })).statusCode).toBe(
      404,
    );
    // B writing the same score_id makes B's own score, never touching A's.
    await post(b.key.key, [{ score_id: 'mine', trace_id: 't', name: 'q', value: 9 }]);
    expect((await get(a.key.key, '/scores/mine')).json().value).toBe(1);
    const cfg = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/score-configs`,
      token: a.key.key,
      payload: { name: 'c', data_type: 'boolean' },
    });
    expect((await get(b.key.key, `/score-configs/${cfg.json().id}`)).statusCode).toBe(404);

    const viewer = await signUp(h(), 'viewer');
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${a.owner.workspace.id}/members`,
      token: a.owner.token,
      payload: { email: viewer.user.email, role: 'VIEWER' },
    });
    const q = { project_id: a.project.id };
    expect((await get(viewer.token, '/scores', q)).statusCode).toBe(200);
    expect((await post(viewer.token, [{ trace_id: 't', name: 'q', value: 1 }], q)).statusCode).toBe(403);
    const own = await post(a.owner.token, [{ score_id: 'by-user', trace_id: 't', name: 'q', value: 1 }], q);
    expect(own.json().accepted).toBe(1);
    expect((await get(a.key.key, '/scores/by-user')).json().author_user_id).toBe(a.owner.user.id);
  });

  it("public SQL reads the project's live scores", async () => {
    const t = await projectWithKey(h());
    await post(t.key.key, [
      { score_id: 'k1', trace_id: 't', name: 'q', value: 1 },
      { score_id: 'k2', trace_id: 't', name: 'q', value: 3 },
    ]);
    await call(h().api, { method: 'DELETE', url: `${PUBLIC}/scores/k2`, token: t.key.key });
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: t.key.key,
      payload: { query: 'SELECT score_id, value FROM scores ORDER BY score_id' },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rows ?? res.json().data).toEqual([['k1', 1]]);
  });
});
