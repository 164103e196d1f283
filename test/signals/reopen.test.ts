import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { failingTrace, hex, patchStatus, signalTitled, span, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * The automatic row of docs/signals.md "Signal status": a resolved signal reopens when the detector
 * finds the problem in a trace that STARTED after the resolve; a late finding from an older trace
 * does not reopen it; a dismissed signal never reopens.
 */

const h = useHarness({ QUEUE_PREFIX: `signals-reopen-${crypto.randomBytes(4).toString('hex')}` });

const getSignal = (token: string, id: string) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${id}`, token }).then((r) => r.json());

/** A project with a resolved "Boom in tool.x" signal; returns when it was resolved. */
async function resolvedSignal() {
  const p = await projectWithKey(h());
  await ingestSpans(h(), p.key.key, failingTrace('Boom', 'tool.x', Date.now() - 3_600_000));
  await tick(h(), p.project.id);
  const signal = await signalTitled(h(), p.key.key, 'Boom in tool.x');
  const resolved = await patchStatus(h(), p.owner.token, signal.signal_id, {
    project_id: p.project.id,
    status: 'resolved',
    reason: 'fixed_by_pr',
  });
  expect(resolved.statusCode, resolved.body).toBe(200);
  return { ...p, signal, resolvedAt: Date.parse(resolved.json().signal.resolved_at) };
}

describe('a resolved signal', () => {
  it('reopens on a finding from a trace that started after the resolve; reopen_count rises', async () => {
    const { key, project, signal, resolvedAt } = await resolvedSignal();
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.x', resolvedAt + 1000));
    const report = await tick(h(), project.id);
    expect(report.passes[0]!.reopened).toEqual([signal.signal_id]);
    expect(await getSignal(key.key, signal.signal_id)).toMatchObject({
      status: 'open',
      reopen_count: 1,
      resolved_at: null,
      hit_count: 2,
      rca_state: expect.stringMatching(/pending|ready/),
    });
  });

  it('stays resolved on a late finding from a trace that started before the resolve (it still counts)', async () => {
    const { key, project, signal, resolvedAt } = await resolvedSignal();
    // Stored after the resolve, from a trace that started ten minutes before it.
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.x', resolvedAt - 600_000));
    const report = await tick(h(), project.id);
    expect(report.passes[0]).toMatchObject({ findings: 1, reopened: [] });
    expect(await getSignal(key.key, signal.signal_id)).toMatchObject({
      status: 'resolved',
      reopen_count: 0,
      resolved_at: new Date(resolvedAt).toISOString(),
      hit_count: 2,
    });
  });

  it('goes by when the TRACE started, not the failing span: a new error in an older trace does not reopen it', async () => {
    const { key, project, signal, resolvedAt } = await resolvedSignal();
    const trace = `t-${hex()}`;
    // The trace's root started before the resolve and was stored then.
    await ingestSpans(h(), key.key, [
      span({ trace_id: trace, span_id: 'root', start: resolvedAt - 5_000, durationMs: 60_000 }),
    ]);
    await tick(h(), project.id);
    // Its failing child starts after the resolve.
    await ingestSpans(h(), key.key, [
      span({
        trace_id: trace,
        span_id: 'child',
        parent_span_id: 'root',
        name: 'tool.x',
        status: 'error',
        error_type: 'Boom',
        start: resolvedAt + 2_000,
      }),
    ]);
    await tick(h(), project.id);
    expect(await getSignal(key.key, signal.signal_id)).toMatchObject({
      status: 'resolved',
      reopen_count: 0,
      hit_count: 2,
    });
    // A trace that starts after the resolve does reopen it.
    await ingestSpans(h(), key.key, failingTrace('Boom', 'tool.x', resolvedAt + 3_000));
    await tick(h(), project.id);
    expect(await getSignal(key.key, signal.signal_id)).toMatchObject({ status: 'open', reopen_count: 1, hit_count: 3 });
  });
});

describe('a dismissed signal', () => {
  it('never reopens on new findings (they still count)', async () => {
    const p = await projectWithKey(h());
    await ingestSpans(h(), p.key.key, failingTrace('Boom', 'tool.y', Date.now() - 60_000));
    await tick(h(), p.project.id);
    const signal = await signalTitled(h(), p.key.key, 'Boom in tool.y');
    const dismissed = await call(h().web, {
      method: 'POST',
      url: `/api/projects/${p.project.id}/signals/${signal.signal_id}/dismiss`,
      token: p.owner.token,
    });
    expect(dismissed.statusCode, dismissed.body).toBe(200);
    await ingestSpans(h(), p.key.key, [
      ...failingTrace('Boom', 'tool.y', Date.now() + 1000),
      ...failingTrace('Boom', 'tool.y', Date.now() + 2000),
    ]);
    const report = await tick(h(), p.project.id);
    expect(report.passes[0]).toMatchObject({ findings: 2, reopened: [] });
    expect(await getSignal(p.key.key, signal.signal_id)).toMatchObject({
      status: 'dismissed',
      reopen_count: 0,
      hit_count: 3,
    });
  });
});
