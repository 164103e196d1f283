import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, useHarness } from '../support/harness.js';
import { expectDetail, UNKNOWN_ID } from '../support/expect.js';
import { annotationProject, otherProject } from './setup.js';

/** Annotation queues (quality.md §3): queues, items, claims, completes, roles, project isolation. */
const h = useHarness();
let p: Awaited<ReturnType<typeof annotationProject>>;
beforeAll(async () => {
  p = await annotationProject(h());
});

type Options = { token?: string; payload?: unknown; query?: Record<string, string> };
const req = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, o: Options = {}) =>
  call(h().api, {
    method,
    url: `${PUBLIC}${path}`,
    token: o.token ?? p.owner.token,
    query: { project_id: p.projectId, ...(o.query ?? {}) },
    ...(o.payload === undefined ? {} : { payload: o.payload as object }),
  });

async function queue(name: string, configIds = [p.quality.id, p.accuracy.id]) {
  const res = await req('POST', '/annotation-queues', { payload: { name, score_config_ids: configIds } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; name: string };
}

describe('annotation queues', () => {
  it('creates, lists with counts, reads, edits and deletes a queue; checks its configs', async () => {
    const made = await req('POST', '/annotation-queues', {
      payload: { name: 'first', description: 'by hand', score_config_ids: [p.quality.id] },
    });
    expect(made.statusCode, made.body).toBe(201);
    const q = made.json();
    expect(q).toMatchObject({
      name: 'first',
      description: 'by hand',
      score_config_ids: [p.quality.id],
      pending: 0,
      completed: 0,
      project_id: p.projectId,
    });
    expectDetail(
      await req('POST', '/annotation-queues', { payload: { name: 'first', score_config_ids: [p.quality.id] } }),
      409,
      "the project already has an annotation queue named 'first'",
    );
    const unknown = await req('POST', '/annotation-queues', {
      payload: { name: 'x', score_config_ids: [UNKNOWN_ID] },
    });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().detail[0]).toMatchObject({
      loc: ['body', 'score_config_ids', 0],
      msg: `no score config '${UNKNOWN_ID}' in this project`,
    });
    expect((await req('POST', '/annotation-queues', { payload: { name: 'x', score_config_ids: [] } })).statusCode).toBe(
      422,
    );
    const many = Array.from({ length: 21 }, () => p.quality.id);
    expect(
      (await req('POST', '/annotation-queues', { payload: { name: 'x', score_config_ids: many } })).statusCode,
    ).toBe(422);
    const twice = await req('POST', '/annotation-queues', {
      payload: { name: 'x', score_config_ids: [p.quality.id, p.quality.id] },
    });
    expect(twice.json().detail[0].msg).toBe('a score config is named once');

    const list = (await req('GET', '/annotation-queues')).json();
    expect(list.data.map((x: { name: string }) => x.name)).toContain('first');
    const patched = await req('PATCH', `/annotation-queues/${q.id}`, {
      payload: { name: 'renamed', score_config_ids: [p.quality.id, p.accuracy.id], description: null },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      name: 'renamed',
      description: null,
      score_config_ids: [p.quality.id, p.accuracy.id],
    });
    const del = await req('DELETE', `/annotation-queues/${q.id}`);
    expect(del.json()).toEqual({ deleted: true, id: q.id });
    expectDetail(await req('GET', `/annotation-queues/${q.id}`), 404, 'annotation queue not found');
    expectDetail(await req('GET', '/annotation-queues/not-a-uuid'), 404, 'annotation queue not found');
  });

  it('adds items by id and by filter, once each, and lists and removes them', async () => {
    const q = await queue('items');
    const byId = await req('POST', `/annotation-queues/${q.id}/items`, {
      payload: { items: [{ trace_id: 'tr-1' }, { trace_id: 'tr-1', span_id: 'tr-1-root' }, { trace_id: 'tr-1' }] },
    });
    expect(byId.statusCode, byId.body).toBe(201);
    expect(byId.json().added.map((i: { trace_id: string; span_id: string | null }) => [i.trace_id, i.span_id])).toEqual(
      [
        ['tr-1', null],
        ['tr-1', 'tr-1-root'],
      ],
    );
    expect(byId.json().existing).toEqual([]);

    // The filter takes what the trace list gives: the prod traces, newest first; tr-1 is there already.
    const byFilter = await req('POST', `/annotation-queues/${q.id}/items`, {
      payload: { filters: [{ field: 'environment', op: 'in', value: ['prod'] }], limit: 10 },
    });
    expect(byFilter.statusCode, byFilter.body).toBe(201);
    expect(byFilter.json().added.map((i: { trace_id: string }) => i.trace_id)).toEqual(['tr-2']);
    expect(byFilter.json().existing.map((i: { trace_id: string }) => i.trace_id)).toEqual(['tr-1']);
    expect(byFilter.json().existing[0].item_id).toBe(byId.json().added[0].item_id);

    const limited = await req('POST', `/annotation-queues/${q.id}/items`, { payload: { filters: [], limit: 1 } });
    expect(limited.json().added.map((i: { trace_id: string }) => i.trace_id)).toEqual(['tr-3']);

    for (const bad of [
      {},
      { items: [] },
      { items: [{ trace_id: 'a' }], filters: [] },
      { items: [{ trace_id: 'a' }], limit: 3 },
      { filters: [], limit: 1001 },
      { filters: [{ field: 'nope' }] },
      { items: Array.from({ length: 1001 }, (_, i) => ({ trace_id: `t${i}` })) },
    ]) {
      const res = await req('POST', `/annotation-queues/${q.id}/items`, { payload: bad });
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
    }

    const items = (await req('GET', `/annotation-queues/${q.id}/items`)).json();
    expect(items.meta.total).toBe(4);
    expect(items.data.map((i: { trace_id: string; status: string }) => [i.trace_id, i.status])).toEqual([
      ['tr-1', 'pending'],
      ['tr-1', 'pending'],
      ['tr-2', 'pending'],
      ['tr-3', 'pending'],
    ]);
    const removed = await req('DELETE', `/annotation-queues/${q.id}/items/${items.data[1].id}`);
    expect(removed.statusCode).toBe(204);
    expect((await req('GET', `/annotation-queues/${q.id}`)).json()).toMatchObject({ pending: 3, completed: 0 });
    expect(
      (await req('GET', `/annotation-queues/${q.id}/items`, { query: { status: 'completed' } })).json().meta.total,
    ).toBe(0);
    expectDetail(
      await req('DELETE', `/annotation-queues/${q.id}/items/${items.data[1].id}`),
      404,
      'annotation queue item not found',
    );
  });

  it('two reviewers claim different items; a complete stores annotation scores that filter the trace list', async () => {
    const q = await queue('review');
    await req('POST', `/annotation-queues/${q.id}/items`, {
      payload: { items: [{ trace_id: 'tr-1' }, { trace_id: 'tr-2' }, { trace_id: 'tr-3' }] },
    });
    const next = (token: string, payload: unknown = {}) =>
      req('POST', `/annotation-queues/${q.id}/next`, { token, payload });
    const [a, b] = await Promise.all([next(p.reviewerA.token), next(p.reviewerB.token)]);
    expect(a.statusCode, a.body).toBe(200);
    expect(b.statusCode, b.body).toBe(200);
    const itemA = a.json().item;
    const itemB = b.json().item;
    expect(itemA.id).not.toBe(itemB.id);
    expect([itemA.trace_id, itemB.trace_id].sort()).toEqual(['tr-1', 'tr-2']);
    expect(itemA.held_by).toBe(p.reviewerA.user.id);
    expect(a.json().trace).toMatchObject({ trace_id: itemA.trace_id, comment_count: 0, scores: [] });
    expect(a.json().trace.spans[0].input).toBe(`question of ${itemA.trace_id}`);
    // Asking again resumes the reviewer's own item.
    expect((await next(p.reviewerA.token)).json().item.id).toBe(itemA.id);

    // B may not complete (nor release) A's item.
    const path = (item: { id: string }, what: string) => `/annotation-queues/${q.id}/items/${item.id}/${what}`;
    expectDetail(
      await req('POST', path(itemA, 'complete'), { token: p.reviewerB.token, payload: { scores: [] } }),
      409,
      'the item is held by another reviewer',
    );
    expectDetail(
      await req('POST', path(itemA, 'release'), { token: p.reviewerB.token, payload: {} }),
      409,
      'the item is held by another reviewer',
    );

    // A wrong score: 422, and nothing is written.
    const wrong = await req('POST', path(itemA, 'complete'), {
      token: p.reviewerA.token,
      payload: {
        scores: [
          { config_id: p.quality.id, string_value: 'good' },
          { config_id: p.accuracy.id, value: 11 },
        ],
        comment: 'never stored',
      },
    });
    expect(wrong.statusCode, wrong.body).toBe(422);
    expect(wrong.json().detail).toEqual([
      { loc: ['body', 'scores', 1], msg: "value: above the config's max_value 10", type: 'value_error' },
    ]);
    const foreign = await req('POST', path(itemA, 'complete'), {
      token: p.reviewerA.token,
      payload: { scores: [{ config_id: UNKNOWN_ID, value: 1 }] },
    });
    expect(foreign.json().detail[0]).toMatchObject({
      loc: ['body', 'scores', 0, 'config_id'],
      msg: 'not a score config of this queue',
    });
    expect((await req('GET', '/scores', { query: { trace_id: itemA.trace_id } })).json().meta.total).toBe(0);
    expect((await req('GET', '/comments', { query: { trace_id: itemA.trace_id } })).json().meta.total).toBe(0);

    const done = await req('POST', path(itemA, 'complete'), {
      token: p.reviewerA.token,
      payload: {
        scores: [
          { config_id: p.quality.id, string_value: 'good', comment: 'clear' },
          { config_id: p.accuracy.id, value: 7 },
        ],
        comment: 'a <b>fine</b> answer',
      },
    });
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json().item).toMatchObject({
      status: 'completed',
      completed_by: p.reviewerA.user.id,
      held_by: null,
    });
    const scores = (await req('GET', '/scores', { query: { trace_id: itemA.trace_id } })).json().data;
    expect(
      scores
        .map((s: Record<string, unknown>) => [s.name, s.value, s.string_value, s.source, s.author_user_id, s.config_id])
        .sort(),
    ).toEqual([
      ['accuracy', 7, null, 'annotation', p.reviewerA.user.id, p.accuracy.id],
      ['quality', 1, 'good', 'annotation', p.reviewerA.user.id, p.quality.id],
    ]);
    const detail = (await req('GET', `/traces/${itemA.trace_id}`)).json();
    expect(detail.comment_count).toBe(1);
    expect(detail.scores).toHaveLength(2);
    const filtered = await req('GET', '/traces', {
      query: { filters: JSON.stringify([{ field: 'score', key: 'quality', op: 'in', value: ['good'] }]) },
    });
    expect(filtered.json().data.map((t: { trace_id: string }) => t.trace_id)).toEqual([itemA.trace_id]);
    const numeric = await req('GET', '/traces', {
      query: { filters: JSON.stringify([{ field: 'score', key: 'accuracy', op: 'gte', value: 7 }]) },
    });
    expect(numeric.json().data.map((t: { trace_id: string }) => t.trace_id)).toEqual([itemA.trace_id]);

    expectDetail(
      await req('POST', path(itemA, 'complete'), { token: p.reviewerA.token, payload: { scores: [] } }),
      409,
      'the item is already completed',
    );
    expect((await req('GET', `/annotation-queues/${q.id}`)).json()).toMatchObject({ pending: 2, completed: 1 });
    expect(
      (await req('GET', `/annotation-queues/${q.id}/items`, { query: { status: 'completed' } })).json().data[0].id,
    ).toBe(itemA.id);

    // A's next is the third item; B releases theirs, skips it, and then nothing is free for B.
    const third = (await next(p.reviewerA.token)).json().item;
    expect(third.trace_id).toBe('tr-3');
    const released = await req('POST', path(itemB, 'release'), { token: p.reviewerB.token, payload: {} });
    expect(released.statusCode, released.body).toBe(200);
    expect(released.json().held_by).toBeNull();
    const skipped = await next(p.reviewerB.token, { exclude_item_ids: [itemB.id] });
    expect(skipped.statusCode).toBe(204);
    expect((await next(p.reviewerB.token)).json().item.id).toBe(itemB.id);
  });

  it("adds an item's trace to the next version of a dataset, expected output as edited", async () => {
    const q = await queue('to-dataset');
    const item = (
      await req('POST', `/annotation-queues/${q.id}/items`, { payload: { items: [{ trace_id: 'tr-2' }] } })
    ).json().added[0];
    const byKey = (method: 'POST' | 'GET', path: string, payload?: unknown) =>
      call(h().api, {
        method,
        url: `${PUBLIC}${path}`,
        token: p.key.key,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    const dataset = (await byKey('POST', '/datasets', { name: 'reviewed' })).json();
    const v1 = await byKey('POST', `/datasets/${dataset.id}/versions`, {
      test_cases: [{ input: { q: 1 }, expected: 'one', metadata: { from: 'api' } }],
    });
    expect(v1.statusCode, v1.body).toBe(201);
    const add = (token: string, payload: unknown) =>
      req('POST', `/annotation-queues/${q.id}/items/${item.item_id}/add-to-dataset`, { token, payload });
    const made = await add(p.reviewerA.token, { dataset_id: dataset.id, expected: { answer: 'better' } });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ dataset_id: dataset.id, version_number: 2, test_case_count: 2 });
    const v2 = (await byKey('GET', `/dataset-versions/${made.json().dataset_version_id}`)).json();
    expect(v2.items.map((c: Record<string, unknown>) => [c.input, c.expected, c.metadata, c.source_trace_id])).toEqual([
      [{ q: 1 }, 'one', { from: 'api' }, null],
      ['question of tr-2', { answer: 'better' }, null, 'tr-2'],
    ]);
    // Without `expected`, the trace's output is copied.
    const copied = await add(p.reviewerB.token, { dataset_id: dataset.id });
    const v3 = (await byKey('GET', `/dataset-versions/${copied.json().dataset_version_id}`)).json();
    expect(v3.items[2]).toMatchObject({ input: 'question of tr-2', expected: 'answer of tr-2' });
    expectDetail(await add(p.viewer.token, { dataset_id: dataset.id }), 403);
    expectDetail(await add(p.reviewerA.token, { dataset_id: UNKNOWN_ID }), 404, 'dataset not found');
  });

  it('roles and credentials: VIEWERs read, MEMBERs review, API keys may not review', async () => {
    const q = await queue('roles');
    await req('POST', `/annotation-queues/${q.id}/items`, { payload: { items: [{ trace_id: 'tr-1' }] } });
    expect((await req('GET', `/annotation-queues/${q.id}`, { token: p.viewer.token })).statusCode).toBe(200);
    expect((await req('GET', `/annotation-queues/${q.id}/items`, { token: p.viewer.token })).statusCode).toBe(200);
    expectDetail(
      await req('POST', '/annotation-queues', {
        token: p.viewer.token,
        payload: { name: 'v', score_config_ids: [p.quality.id] },
      }),
      403,
      'this operation requires the MEMBER role or higher in the workspace',
    );
    expectDetail(await req('POST', `/annotation-queues/${q.id}/next`, { token: p.viewer.token, payload: {} }), 403);
    expectDetail(await req('DELETE', `/annotation-queues/${q.id}`, { token: p.viewer.token }), 403);
    expectDetail(
      await req('POST', `/annotation-queues/${q.id}/next`, { token: p.key.key, payload: {} }),
      403,
      'this operation requires a user login; API keys are project-scoped',
    );
    // An API key manages queues and items.
    const byKey = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/annotation-queues/${q.id}/items`,
      token: p.key.key,
      payload: { items: [{ trace_id: 'tr-2' }] },
    });
    expect(byKey.statusCode, byKey.body).toBe(201);
  });

  it("another project can't read, fill or review this project's queue", async () => {
    const q = await queue('isolated');
    const item = (
      await req('POST', `/annotation-queues/${q.id}/items`, { payload: { items: [{ trace_id: 'tr-1' }] } })
    ).json().added[0];
    const other = await otherProject(h());
    const as = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: unknown) =>
      call(h().api, {
        method,
        url: `${PUBLIC}${path}`,
        token: other.owner.token,
        query: { project_id: other.project.id },
        ...(payload === undefined ? {} : { payload: payload as object }),
      });
    expectDetail(await as('GET', `/annotation-queues/${q.id}`), 404, 'annotation queue not found');
    expectDetail(await as('GET', `/annotation-queues/${q.id}/items`), 404);
    expectDetail(await as('POST', `/annotation-queues/${q.id}/items`, { items: [{ trace_id: 'x' }] }), 404);
    expectDetail(await as('POST', `/annotation-queues/${q.id}/next`, {}), 404);
    expectDetail(await as('POST', `/annotation-queues/${q.id}/items/${item.item_id}/complete`, { scores: [] }), 404);
    expectDetail(await as('PATCH', `/annotation-queues/${q.id}`, { name: 'mine' }), 404);
    expectDetail(await as('DELETE', `/annotation-queues/${q.id}`), 404);
    expect((await as('GET', '/annotation-queues')).json().data).toEqual([]);
    // A queue of the other project can't name this project's score configs.
    const foreign = await as('POST', '/annotation-queues', { name: 'steal', score_config_ids: [p.quality.id] });
    expect(foreign.statusCode).toBe(422);
    // Nor can the other user act on this project by naming it.
    const named = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/annotation-queues/${q.id}`,
      token: other.owner.token,
      query: { project_id: p.projectId },
    });
    expectDetail(named, 403, 'you do not have access to this project');
    expect((await req('GET', `/annotation-queues/${q.id}`)).json().pending).toBe(1);
  });
});
