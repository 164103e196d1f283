import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { PROJECT_ID_MISMATCH_DETAIL, PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';
import { failingTrace, listFindings, listSignals, patchStatus, tick } from './support.js';
import { ingestSpans } from '../support/ingest.js';

/** List signals, get a signal, list findings (docs/signals.md). */

const h = useHarness({ QUEUE_PREFIX: `signals-reads-${crypto.randomBytes(4).toString('hex')}` });

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A project with five signals, created one pass at a time (so their creation order is known). */
async function withFiveSignals() {
  const p = await projectWithKey(h());
  const names = ['a', 'b', 'c', 'd', 'e'];
  const start = Date.now() - 600_000;
  for (const [i, name] of names.entries()) {
    // Signal i gets i + 1 findings.
    const spans = Array.from({ length: i + 1 }, (_, k) =>
      failingTrace('Boom', `tool.${name}`, start + i * 10_000 + k * 1000),
    ).flat();
    await ingestSpans(h(), p.key.key, spans);
    await tick(h(), p.project.id);
  }
  return p;
}

describe('list signals', () => {
  it('newest first, with limit, page and meta; merged ones are left out (see merge.test.ts)', async () => {
    const { key } = await withFiveSignals();
    const all = await listSignals(h(), key.key);
    expect(all.meta).toEqual({ page: 0, limit: 50, total: 5 });
    expect(all.data.map((s) => s.title)).toEqual([
      'Boom in tool.e',
      'Boom in tool.d',
      'Boom in tool.c',
      'Boom in tool.b',
      'Boom in tool.a',
    ]);
    expect(all.data.map((s) => s.hit_count)).toEqual([5, 4, 3, 2, 1]);
    for (const s of all.data) {
      expect(s.created_at).toMatch(ISO);
      expect(s.first_seen_at).toMatch(ISO);
      expect(s.last_seen_at).toMatch(ISO);
      expect(Date.parse(s.last_seen_at as string)).toBeGreaterThanOrEqual(Date.parse(s.first_seen_at as string));
      expect(['none', 'pending', 'ready', 'failed']).toContain(s.rca_state);
    }
    const page1 = await listSignals(h(), key.key, { limit: '2', page: '1' });
    expect(page1.meta).toEqual({ page: 1, limit: 2, total: 5 });
    expect(page1.data.map((s) => s.title)).toEqual(['Boom in tool.c', 'Boom in tool.b']);
    const past = await listSignals(h(), key.key, { limit: '2', page: '7' });
    expect(past).toEqual({ data: [], meta: { page: 7, limit: 2, total: 5 } });
  });

  it('filter by status and by detector', async () => {
    const { owner, project, key } = await withFiveSignals();
    const all = await listSignals(h(), key.key);
    const [first, second] = all.data as { signal_id: string; detector_id: string }[];
    await patchStatus(h(), owner.token, first!.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'fixed_by_pr',
    });
    await patchStatus(h(), owner.token, second!.signal_id, {
      project_id: project.id,
      status: 'resolved',
      reason: 'fixed_by_pr',
    });
    const resolved = await listSignals(h(), key.key, { status: 'resolved' });
    expect(resolved.meta.total).toBe(2);
    expect(resolved.data.map((s) => s.signal_id)).toEqual([first!.signal_id, second!.signal_id]);
    expect((await listSignals(h(), key.key, { status: 'open' })).meta.total).toBe(3);
    expect((await listSignals(h(), key.key, { status: 'dismissed' })).meta.total).toBe(0);
    expect((await listSignals(h(), key.key, { detector_id: first!.detector_id })).meta.total).toBe(5);
    expect((await listSignals(h(), key.key, { detector_id: UNKNOWN_ID })).meta.total).toBe(0);
    expect((await listSignals(h(), key.key, { detector_id: 'whatever' })).meta.total).toBe(0);
  });

  it('validate their parameters (422) and the project_id rules (400)', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const list = (token: string, query: Record<string, string>) =>
      call(h().api, { method: 'GET', url: `${PUBLIC}/signals`, token, query });
    expectValidationAt(await list(key.key, { limit: '0' }), ['query', 'limit']);
    expectValidationAt(await list(key.key, { limit: '201' }), ['query', 'limit']);
    expectValidationAt(await list(key.key, { page: '-1' }), ['query', 'page']);
    expectValidationAt(await list(key.key, { page: '10001' }), ['query', 'page']);
    expectValidationAt(await list(key.key, { status: 'closed' }), ['query', 'status']);
    expect((await list(key.key, { limit: '200', page: '10000' })).statusCode).toBe(200);
    expectDetail(await list(owner.token, {}), 400, PROJECT_ID_REQUIRED_DETAIL);
    expectDetail(await list(key.key, { project_id: UNKNOWN_ID }), 400, PROJECT_ID_MISMATCH_DETAIL);
    expect((await list(owner.token, { project_id: project.id })).json()).toEqual({
      data: [],
      meta: { page: 0, limit: 50, total: 0 },
    });
  });
});

describe('get a signal', () => {
  it('answers the detail: the list fields plus resolved_at, merged_into_id and rca; 404 otherwise', async () => {
    const { owner, project, key } = await withFiveSignals();
    const item = (await listSignals(h(), key.key)).data[0]!;
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/signals/${item.signal_id}`,
      token: owner.token,
      query: { project_id: project.id },
    });
    expect(res.statusCode, res.body).toBe(200);
    const detail = res.json();
    expect(Object.keys(detail).sort()).toEqual([...Object.keys(item), 'merged_into_id', 'rca', 'resolved_at'].sort());
    expect(detail).toMatchObject({ ...item, resolved_at: null, merged_into_id: null });
    expectDetail(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${UNKNOWN_ID}`, token: key.key }),
      404,
      'signal not found',
    );
    const other = await projectWithKey(h());
    expectDetail(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${item.signal_id}`, token: other.key.key }),
      404,
      'signal not found',
    );
  });
});

describe('list findings', () => {
  it('newest first, by signal or detector, paged; each names its trace, span and trace start', async () => {
    const { key } = await withFiveSignals();
    const all = await listFindings(h(), key.key, { limit: '200' });
    expect(all.meta).toEqual({ page: 0, limit: 200, total: 15 });
    const found = all.data.map((f) => Date.parse(f.found_at as string));
    expect([...found].sort((a, b) => b - a)).toEqual(found);
    const e = (await listSignals(h(), key.key)).data[0]!;
    const ofE = await listFindings(h(), key.key, { signal_id: e.signal_id as string });
    expect(ofE.meta.total).toBe(5);
    expect(new Set(ofE.data.map((f) => f.signal_id))).toEqual(new Set([e.signal_id]));
    for (const f of ofE.data) {
      expect(f.trace_start_time).toMatch(ISO);
      expect(f.found_at).toMatch(ISO);
      expect(typeof f.span_id).toBe('string');
      const trace = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${f.trace_id}`, token: key.key });
      expect(trace.json().trace_start_time).toBe(f.trace_start_time);
      expect(
        trace
          .json()
          .spans.some((s: { span_id: string; status: string }) => s.span_id === f.span_id && s.status === 'error'),
      ).toBe(true);
    }
    const paged = await listFindings(h(), key.key, { signal_id: e.signal_id as string, limit: '2', page: '2' });
    expect(paged.meta).toEqual({ page: 2, limit: 2, total: 5 });
    expect(paged.data).toHaveLength(1);
    expect((await listFindings(h(), key.key, { detector_id: e.detector_id as string })).meta.total).toBe(15);
    expect((await listFindings(h(), key.key, { detector_id: UNKNOWN_ID })).meta.total).toBe(0);
    expect((await listFindings(h(), key.key, { signal_id: 'nope' })).meta.total).toBe(0);
    expectValidationAt(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/findings`, token: key.key, query: { limit: '201' } }),
      ['query', 'limit'],
    );
  });
});
