import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { failingTrace, patchStatus, signalTitled, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/** docs/signals.md "Signal status": every row of the state table, rules 1-4, the answer's shape, roles, CAS. */

const h = useHarness({ QUEUE_PREFIX: `signals-status-${crypto.randomBytes(4).toString('hex')}` });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A project with one open signal ("TimeoutError in tool.search"). */
async function withSignal() {
  const p = await projectWithKey(h());
  await ingestSpans(h(), p.key.key, failingTrace('TimeoutError', 'tool.search'));
  await tick(h(), p.project.id);
  const signal = await signalTitled(h(), p.key.key, 'TimeoutError in tool.search');
  return { ...p, signal };
}

const getSignal = (token: string, id: string, query: Record<string, string> = {}) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${id}`, token, query });
const dismiss = (token: string, projectId: string, id: string) =>
  call(h().web, { method: 'POST', url: `/api/projects/${projectId}/signals/${id}/dismiss`, token });

describe('open → resolved', () => {
  it('with a reason: resolved_at is set; the answer is the status change result with exactly its fields', async () => {
    const { owner, project, key, signal } = await withSignal();
    const before = Date.now();
    const res = await patchStatus(h(), owner.token, signal.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'fixed_by_pr',
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['changed', 'signal', 'updated']);
    expect(Object.keys(body.signal).sort()).toEqual([
      'detector_id',
      'project_id',
      'reopen_count',
      'resolved_at',
      'signal_id',
      'status',
      'title',
    ]);
    expect(body).toMatchObject({
      updated: true,
      signal: {
        signal_id: signal.signal_id,
        project_id: project.id,
        detector_id: signal.detector_id,
        status: 'resolved',
        title: 'TimeoutError in tool.search',
        reopen_count: 0,
      },
    });
    expect(body.changed).toContain('status');
    expect(body.changed).toContain('resolved_at');
    expect(body.signal.resolved_at).toMatch(ISO);
    expect(Date.parse(body.signal.resolved_at)).toBeGreaterThanOrEqual(before - 1000);

    const detail = (await getSignal(key.key, signal.signal_id)).json();
    expect(detail).toMatchObject({ status: 'resolved', resolved_at: body.signal.resolved_at, merged_into_id: null });
  });

  it('reason `other` needs a note; the note is at most 4000 characters', async () => {
    const { owner, project, signal } = await withSignal();
    const base = { project_id: project.id, status: 'resolved' };
    expectValidationAt(await patchStatus(h(), owner.token, signal.signal_id, base), ['body', 'reason']);
    expectValidationAt(await patchStatus(h(), owner.token, signal.signal_id, { ...base, reason: 'other' }), [
      'body',
      'note',
    ]);
    expectValidationAt(
      await patchStatus(h(), owner.token, signal.signal_id, { ...base, reason: 'other', note: 'x'.repeat(4001) }),
      ['body', 'note'],
    );
    expectValidationAt(await patchStatus(h(), owner.token, signal.signal_id, { ...base, reason: 'it went away' }), [
      'body',
      'reason',
    ]);
    const ok = await patchStatus(h(), owner.token, signal.signal_id, {
      ...base,
      reason: 'other',
      note: 'x'.repeat(4000),
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().signal.status).toBe('resolved');
  });
});

describe('resolved → open', () => {
  it('by a person: status open, resolved_at cleared, counted in reopen_count', async () => {
    const { owner, project, key, signal } = await withSignal();
    await patchStatus(h(), owner.token, signal.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'fixed_elsewhere',
    });
    const res = await patchStatus(h(), owner.token, signal.signal_id, {
      project_id: project.id,
      status: 'open',
      expected_status: 'resolved',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ updated: true, signal: { status: 'open', resolved_at: null, reopen_count: 1 } });
    expect(res.json().changed).toContain('status');
    expect((await getSignal(key.key, signal.signal_id)).json()).toMatchObject({
      status: 'open',
      resolved_at: null,
      reopen_count: 1,
    });
  });
});

describe('rules', () => {
  it('1: the status the signal already has changes nothing', async () => {
    const { owner, project, key, signal } = await withSignal();
    const same = await patchStatus(h(), owner.token, signal.signal_id, { project_id: project.id, status: 'open' });
    expect(same.statusCode, same.body).toBe(200);
    expect(same.json()).toMatchObject({ updated: false, changed: [], signal: { status: 'open', resolved_at: null } });
    const resolved = (
      await patchStatus(h(), owner.token, signal.signal_id, {
        project_id: project.id,
        status: 'resolved',
        reason: 'fixed_by_pr',
      })
    ).json();
    const again = await patchStatus(h(), owner.token, signal.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'other',
      note: 'again',
    });
    expect(again.json()).toEqual({ updated: false, changed: [], signal: resolved.signal });
    expect((await getSignal(key.key, signal.signal_id)).json().resolved_at).toBe(resolved.signal.resolved_at);
  });

  it('2: an expected_status that differs from the current status is a 409 and nothing is written', async () => {
    const { owner, project, key, signal } = await withSignal();
    const before = (await getSignal(key.key, signal.signal_id)).json();
    expectDetail(
      await patchStatus(h(), owner.token, signal.signal_id, {
        project_id: project.id,
        status: 'resolved',
        reason: 'fixed_by_pr',
        expected_status: 'resolved',
      }),
      409,
    );
    expectDetail(
      await patchStatus(h(), owner.token, signal.signal_id, {
        project_id: project.id,
        status: 'open',
        expected_status: 'dismissed',
      }),
      409,
    );
    expect((await getSignal(key.key, signal.signal_id)).json()).toEqual(before);
    const matching = await patchStatus(h(), owner.token, signal.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'fixed_by_pr',
      expected_status: 'open',
    });
    expect(matching.json()).toMatchObject({ updated: true, signal: { status: 'resolved' } });
  });

  it('3: dismissed is not a target status through the API (422)', async () => {
    const { owner, project, signal } = await withSignal();
    expectValidationAt(
      await patchStatus(h(), owner.token, signal.signal_id, { project_id: project.id, status: 'dismissed' }),
      ['body', 'status'],
    );
    expectValidationAt(await patchStatus(h(), owner.token, signal.signal_id, { project_id: project.id }), [
      'body',
      'status',
    ]);
  });

  it('4: no way out of dismissed through the API', async () => {
    const { owner, project, key, signal } = await withSignal();
    const dismissed = await dismiss(owner.token, project.id, signal.signal_id);
    expect(dismissed.statusCode, dismissed.body).toBe(200);
    expect(dismissed.json()).toMatchObject({ updated: true, changed: ['status'], signal: { status: 'dismissed' } });
    expectDetail(
      await patchStatus(h(), owner.token, signal.signal_id, { project_id: project.id, status: 'open' }),
      400,
    );
    expectDetail(
      await patchStatus(h(), owner.token, signal.signal_id, {
        project_id: project.id,
        status: 'resolved',
        reason: 'fixed_by_pr',
        expected_status: 'dismissed',
      }),
      400,
    );
    expectDetail(
      await patchStatus(h(), owner.token, signal.signal_id, {
        project_id: project.id,
        status: 'open',
        expected_status: 'open',
      }),
      409,
    );
    expect((await getSignal(key.key, signal.signal_id)).json().status).toBe('dismissed');
  });
});

describe('who may change a status', () => {
  it('a user with MEMBER or higher; API keys get 403 with the spec detail, VIEWERs 403', async () => {
    const { owner, project, key, signal } = await withSignal();
    const body = { project_id: project.id, status: 'resolved', reason: 'fixed_by_pr' };
    expectDetail(await patchStatus(h(), key.key, signal.signal_id, body), 403, USER_LOGIN_REQUIRED_DETAIL);
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    expectDetail(
      await patchStatus(h(), viewer.token, signal.signal_id, body),
      403,
      'this operation requires the MEMBER role or higher in the workspace',
    );
    const stranger = await signUp(h(), 'stranger');
    expectDetail(await patchStatus(h(), stranger.token, signal.signal_id, body), 403);
    expect((await getSignal(key.key, signal.signal_id)).json().status).toBe('open');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    expect((await patchStatus(h(), member.token, signal.signal_id, body)).json()).toMatchObject({ updated: true });
    expectDetail(
      await call(h().api, { method: 'PATCH', url: `${PUBLIC}/signals/${signal.signal_id}/status`, payload: body }),
      401,
    );
  });

  it("an unknown signal, or another project's, is a 404", async () => {
    const a = await withSignal();
    const b = await projectWithKey(h());
    const body = { status: 'resolved', reason: 'fixed_by_pr' };
    expectDetail(
      await patchStatus(h(), a.owner.token, UNKNOWN_ID, { ...body, project_id: a.project.id }),
      404,
      'signal not found',
    );
    expectDetail(
      await patchStatus(h(), a.owner.token, 'nope', { ...body, project_id: a.project.id }),
      404,
      'signal not found',
    );
    expectDetail(
      await patchStatus(h(), b.owner.token, a.signal.signal_id, { ...body, project_id: b.project.id }),
      404,
      'signal not found',
    );
    expectValidationAt(await patchStatus(h(), a.owner.token, a.signal.signal_id, body), ['body', 'project_id']);
  });
});

describe('compare-and-set under concurrency', () => {
  it('of concurrent PATCHes with the same expected_status exactly one wins; the others get 409', async () => {
    const { owner, project, key, signal } = await withSignal();
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        patchStatus(h(), owner.token, signal.signal_id, {
          project_id: project.id,
          status: 'resolved',
          reason: 'other',
          note: `attempt ${i}`,
          expected_status: 'open',
        }),
      ),
    );
    const codes = attempts.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const winner = attempts.find((r) => r.statusCode === 200)!.json();
    expect(winner).toMatchObject({ updated: true, signal: { status: 'resolved' } });
    expect((await getSignal(key.key, signal.signal_id)).json().resolved_at).toBe(winner.signal.resolved_at);

    // Reopening races the same way: one reopen, counted once.
    const reopens = await Promise.all(
      Array.from({ length: 5 }, () =>
        patchStatus(h(), owner.token, signal.signal_id, {
          project_id: project.id,
          status: 'open',
          expected_status: 'resolved',
        }),
      ),
    );
    expect(reopens.filter((r) => r.statusCode === 200)).toHaveLength(1);
    expect((await getSignal(key.key, signal.signal_id)).json()).toMatchObject({ status: 'open', reopen_count: 1 });
  });
});
