import { describe, expect, it } from 'vitest';
import { projectWithKey, publicGet, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { getSession, getTrace, listTraces } from '../../src/traces/service.js';
import { DETAIL_BOUNDS } from '../../src/traces/read-bounds.js';
import { QueryLimitError } from '../../src/errors.js';

/**
 * Trace, list and session reads stay bounded however large the trace or session (issue 9, part 2):
 * a trace detail answers at most 5,000 spans and 32 MiB of their long fields, a session at most
 * 1,000 traces and 32 MiB, a list page at most 32 MiB (else 400 asking for a smaller limit). The
 * byte budgets are parameters of the services, so tests show them on small data; the HTTP tests use
 * the production bounds.
 */

const h = useHarness();
const MIN = 60_000;

const get = publicGet(h);

describe('GET /traces/{trace_id}', () => {
  it("answers the first 5,000 spans by start time of a larger trace, with truncated and the whole trace's own fields", async () => {
    const { key } = await projectWithKey(h());
    const t0 = Date.now() - 60 * MIN;
    const total = DETAIL_BOUNDS.maxSpans + 100;
    // Sent newest first, so the answer's order is the store's, not the request's.
    const spans = Array.from({ length: total }, (_, i) => ({
      trace_id: 'big',
      span_id: `s${String(i).padStart(5, '0')}`,
      parent_span_id: i === 0 ? null : 's00000',
      name: i === 0 ? 'agent' : 'step',
      start_time: iso(t0 + i),
      end_time: iso(t0 + i + 10),
      cost: 0.001,
    })).reverse();
    await ingestSpans(h(), key.key, spans, 10_000);

    const res = await get(key.key, '/traces/big');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const { spans: answered, truncated, comment_count: comments, ...item } = res.json();
    expect(comments).toBe(0);
    expect(truncated).toBe(true);
    expect(answered).toHaveLength(DETAIL_BOUNDS.maxSpans);
    expect(answered[0].span_id).toBe('s00000');
    expect(answered.at(-1).span_id).toBe(`s0${DETAIL_BOUNDS.maxSpans - 1}`);
    expect(item).toMatchObject({
      trace_id: 'big',
      name: 'agent',
      span_count: total,
      duration_ms: total - 1 + 10,
      total_cost: Math.round(total * 0.001 * 1e9) / 1e9,
    });
    expect(item).toEqual((await get(key.key, '/traces')).json().data[0]);
  });

  it('answers a trace within the bounds whole, without a truncated flag', async () => {
    const { key } = await projectWithKey(h());
    await ingestSpans(h(), key.key, [
      { trace_id: 'small', span_id: 'root', name: 'r', start_time: iso(Date.now() - MIN), input: 'x'.repeat(100_000) },
    ]);
    const res = await get(key.key, '/traces/small');
    expect(res.statusCode).toBe(200);
    expect(res.json()).not.toHaveProperty('truncated');
    expect(res.json().spans[0].input).toHaveLength(100_000);
  });

  it("stops at the byte budget of the spans' long fields (at least one span), in start order", async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 30 * MIN;
    const span = (id: string, offset: number, input: string) => ({
      trace_id: 'heavy',
      span_id: id,
      parent_span_id: id === 'a' ? null : 'a',
      name: id,
      start_time: iso(t0 + offset),
      input,
    });
    await ingestSpans(h(), key.key, [
      span('c', 2, 'c'.repeat(1000)),
      span('a', 0, 'a'.repeat(1000)),
      span('b', 1, 'b'.repeat(1000)),
      span('d', 3, 'd'.repeat(1000)),
    ]);

    const cut = await getTrace(h().ctx, project.id, 'heavy', { maxSpans: 100, textBytes: 2500 });
    expect(cut.spans.map((s) => s.span_id)).toEqual(['a', 'b']);
    expect(cut).toMatchObject({ truncated: true, span_count: 4, input: 'a'.repeat(1000) });
    const one = await getTrace(h().ctx, project.id, 'heavy', { maxSpans: 100, textBytes: 10 });
    expect(one.spans.map((s) => s.span_id)).toEqual(['a']);
    const whole = await getTrace(h().ctx, project.id, 'heavy', { maxSpans: 4, textBytes: 1_000_000 });
    expect(whole.spans).toHaveLength(4);
    expect(whole.truncated).toBeUndefined();
  });
});

describe('GET /traces', () => {
  it('refuses a page larger than its byte bound with a 400 that asks for a smaller limit; a smaller page answers', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 30 * MIN;
    await ingestSpans(
      h(),
      key.key,
      [0, 1, 2].map((i) => ({
        trace_id: `p${i}`,
        span_id: 'root',
        name: 'r',
        start_time: iso(t0 + i),
        input: String(i).repeat(40_000),
      })),
    );
    const params = { projectId: project.id, limit: 50, page: 0, includeEvaluations: false, filters: [] };
    const refused = await listTraces(h().ctx, params, 100_000).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueryLimitError);
    expect((refused as QueryLimitError).status).toBe(400);
    expect((refused as QueryLimitError).detail).toMatch(/ask for a smaller limit$/);
    const page = await listTraces(h().ctx, { ...params, limit: 2 }, 100_000);
    expect(page.data.map((t) => t.trace_id)).toEqual(['p2', 'p1']);
    expect(page.meta.total).toBe(3);
    // The production bound answers the same page whole.
    const res = await get(key.key, '/traces');
    expect(res.json().data.map((t: { input: string }) => t.input.length)).toEqual([40_000, 40_000, 40_000]);
  });

  it('refuses a filters parameter longer than 64 KiB with 400 {detail}', async () => {
    const { key } = await projectWithKey(h());
    const filters = JSON.stringify([
      { field: 'model_name', op: 'in', value: Array.from({ length: 20_000 }, (_, i) => `m${i}`) },
    ]);
    const res = await get(key.key, '/traces', { filters });
    expect(res.statusCode).toBe(400);
    expect(res.json().detail).toMatch(/^invalid filters parameter: longer than/);
  });
});

describe('GET /sessions/{session_id}', () => {
  it("answers the session's first traces within its trace cap and byte budget, with truncated, and the whole session's summary", async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 60 * MIN;
    // A chat whose every turn repeats the conversation so far: inputs grow with each trace.
    await ingestSpans(
      h(),
      key.key,
      Array.from({ length: 6 }, (_, i) => ({
        trace_id: `turn${i}`,
        span_id: 'root',
        name: 'chat',
        session_id: 'conv',
        start_time: iso(t0 + i * MIN),
        input: 'q'.repeat(1000 * (i + 1)),
        cost: 1,
      })),
    );
    const capped = await getSession(h().ctx, project.id, 'conv', { maxTraces: 4, textBytes: 1_000_000 });
    expect(capped.traces.map((t) => t.trace_id)).toEqual(['turn0', 'turn1', 'turn2', 'turn3']);
    expect(capped).toMatchObject({ trace_count: 6, total_cost: 6, truncated: true });
    const budget = await getSession(h().ctx, project.id, 'conv', { maxTraces: 1000, textBytes: 6500 });
    expect(budget.traces.map((t) => t.trace_id)).toEqual(['turn0', 'turn1', 'turn2']);
    expect(budget.truncated).toBe(true);
    const res = await get(key.key, '/sessions/conv');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ trace_count: 6, truncated: false });
    expect(res.json().traces).toHaveLength(6);
    expect((await get(key.key, '/sessions/nobody')).json()).toEqual({ detail: 'session not found' });
  });
});
