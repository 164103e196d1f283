import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { failingTrace, listFindings, listSignals, signalTitled, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/** The web application's dismiss and merge (docs/signals.md), and what a merge means to lists, findings and the trace filter. */

const h = useHarness({ QUEUE_PREFIX: `signals-merge-${crypto.randomBytes(4).toString('hex')}` });

const dismiss = (token: string, projectId: string, id: string) =>
  call(h().web, { method: 'POST', url: `/api/projects/${projectId}/signals/${id}/dismiss`, token });
const merge = (token: string, projectId: string, id: string, into: unknown) =>
  call(h().web, {
    method: 'POST',
    url: `/api/projects/${projectId}/signals/${id}/merge`,
    token,
    payload: { into_signal_id: into },
  });
const getSignal = (token: string, id: string) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${id}`, token }).then((r) => r.json());

/** A project with three signals: tool.a (1 hit), tool.b (2 hits), tool.c (3 hits). */
async function threeSignals() {
  const p = await projectWithKey(h());
  const t0 = Date.now() - 600_000;
  await ingestSpans(h(), p.key.key, [
    ...failingTrace('Boom', 'tool.a', t0),
    ...failingTrace('Boom', 'tool.b', t0 + 1000),
    ...failingTrace('Boom', 'tool.b', t0 + 2000),
    ...failingTrace('Boom', 'tool.c', t0 + 3000),
    ...failingTrace('Boom', 'tool.c', t0 + 4000),
    ...failingTrace('Boom', 'tool.c', t0 + 5000),
  ]);
  await tick(h(), p.project.id);
  const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((n) => signalTitled(h(), p.key.key, `Boom in tool.${n}`)));
  return { ...p, a: a!, b: b!, c: c! };
}

async function tracesOf(key: string, signalId: string) {
  const res = await call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/traces`,
    token: key,
    query: { filters: JSON.stringify([{ field: 'signal_id', op: 'eq', value: signalId }]) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res
    .json()
    .data.map((t: { trace_id: string }) => t.trace_id)
    .sort();
}

describe('dismiss', () => {
  it('open or resolved → dismissed, with a session token and MEMBER or higher; again changes nothing', async () => {
    const { owner, project, key, a, b } = await threeSignals();
    expectDetail(await dismiss(key.key, project.id, a.signal_id), 403, USER_LOGIN_REQUIRED_DETAIL);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expectDetail(await dismiss(viewer.token, project.id, a.signal_id), 403);
    expectDetail(await dismiss((await signUp(h(), 'stranger')).token, project.id, a.signal_id), 403);
    expectDetail(await dismiss(owner.token, project.id, UNKNOWN_ID), 404, 'signal not found');

    const res = await dismiss(owner.token, project.id, a.signal_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      updated: true,
      changed: ['status'],
      signal: { signal_id: a.signal_id, status: 'dismissed', project_id: project.id },
    });
    expect((await dismiss(owner.token, project.id, a.signal_id)).json()).toMatchObject({ updated: false, changed: [] });
    // From resolved too.
    await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/signals/${b.signal_id}/status`,
      token: owner.token,
      payload: { project_id: project.id, status: 'resolved', reason: 'fixed_by_pr' },
    });
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    expect((await dismiss(member.token, project.id, b.signal_id)).json()).toMatchObject({
      updated: true,
      signal: { status: 'dismissed' },
    });
    expect((await listSignals(h(), key.key, { status: 'dismissed' })).data.map((s) => s.signal_id).sort()).toEqual(
      [a.signal_id, b.signal_id].sort(),
    );
  });
});

describe('merge', () => {
  it("moves the source's findings to the target: hits, findings, lists and the trace filter", async () => {
    const { owner, project, key, a, b, c } = await threeSignals();
    const aTraces = await tracesOf(key.key, a.signal_id);
    const bTraces = await tracesOf(key.key, b.signal_id);
    expect(aTraces).toHaveLength(1);
    expect(bTraces).toHaveLength(2);

    const res = await merge(owner.token, project.id, a.signal_id, b.signal_id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().signal).toMatchObject({ signal_id: a.signal_id, merged_into_id: b.signal_id });
    expect(res.json().merged_into).toMatchObject({ signal_id: b.signal_id, merged_into_id: null, hit_count: 3 });

    // The source answers GET with merged_into_id and leaves every list.
    expect(await getSignal(key.key, a.signal_id)).toMatchObject({
      signal_id: a.signal_id,
      merged_into_id: b.signal_id,
    });
    const open = await listSignals(h(), key.key);
    expect(open.data.map((s) => s.signal_id).sort()).toEqual([b.signal_id, c.signal_id].sort());
    expect(open.meta.total).toBe(2);
    expect((await listSignals(h(), key.key, { status: 'open' })).meta.total).toBe(2);
    expect((await getSignal(key.key, b.signal_id)).hit_count).toBe(3);

    // Its findings count for the target.
    const ofB = await listFindings(h(), key.key, { signal_id: b.signal_id });
    expect(ofB.meta.total).toBe(3);
    expect(new Set(ofB.data.map((f) => f.signal_id))).toEqual(new Set([b.signal_id]));
    expect(ofB.data.map((f) => f.trace_id).sort()).toEqual([...aTraces, ...bTraces].sort());

    // The trace filter on the target matches the source's traces too.
    expect(await tracesOf(key.key, b.signal_id)).toEqual([...aTraces, ...bTraces].sort());

    // New findings of the source's group count for the target.
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.a'));
    await tick(h(), project.id);
    expect((await getSignal(key.key, b.signal_id)).hit_count).toBe(4);
    expect((await getSignal(key.key, a.signal_id)).hit_count).toBe(1);
    expect((await listFindings(h(), key.key, { signal_id: b.signal_id })).meta.total).toBe(4);
    expect(await tracesOf(key.key, b.signal_id)).toHaveLength(4);
    expect((await listSignals(h(), key.key)).meta.total).toBe(2);

    // Merging the target on: the signals merged into it follow (no chains).
    const on = await merge(owner.token, project.id, b.signal_id, c.signal_id);
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json().merged_into.hit_count).toBe(7);
    expect(await getSignal(key.key, a.signal_id)).toMatchObject({ merged_into_id: c.signal_id });
    expect((await listFindings(h(), key.key, { signal_id: c.signal_id })).meta.total).toBe(7);
    expect(await tracesOf(key.key, c.signal_id)).toHaveLength(7);
    expect((await listSignals(h(), key.key)).data.map((s) => s.signal_id)).toEqual([c.signal_id]);
  });

  it('is a 409 into itself, into a merged or dismissed signal, or of a signal merged already; 404 for unknown ones', async () => {
    const { owner, project, a, b, c } = await threeSignals();
    expectDetail(await merge(owner.token, project.id, a.signal_id, a.signal_id), 409);
    expect((await dismiss(owner.token, project.id, c.signal_id)).statusCode).toBe(200);
    expectDetail(await merge(owner.token, project.id, a.signal_id, c.signal_id), 409);
    expect((await merge(owner.token, project.id, b.signal_id, a.signal_id)).statusCode).toBe(200);
    expectDetail(await merge(owner.token, project.id, c.signal_id, b.signal_id), 409); // b is merged
    expectDetail(await merge(owner.token, project.id, b.signal_id, a.signal_id), 409); // b was merged already
    expectDetail(await merge(owner.token, project.id, a.signal_id, UNKNOWN_ID), 404);
    expectDetail(await merge(owner.token, project.id, UNKNOWN_ID, a.signal_id), 404, 'signal not found');
    expectValidationAt(await merge(owner.token, project.id, a.signal_id, undefined), ['body', 'into_signal_id']);
    // A merged signal's status is its target's business now.
    expectDetail(await dismiss(owner.token, project.id, b.signal_id), 409);
  });

  it('needs MEMBER or higher in the project, with a user login', async () => {
    const { owner, project, key, a, b } = await threeSignals();
    expectDetail(await merge(key.key, project.id, a.signal_id, b.signal_id), 403, USER_LOGIN_REQUIRED_DETAIL);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expectDetail(await merge(viewer.token, project.id, a.signal_id, b.signal_id), 403);
    const other = await projectWithKey(h());
    expectDetail(await merge(other.owner.token, other.project.id, a.signal_id, b.signal_id), 404);
    expect((await getSignal(key.key, a.signal_id)).merged_into_id).toBeNull();
  });
});
