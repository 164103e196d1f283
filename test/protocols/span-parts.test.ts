import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness, type Harness } from '../support/harness.js';
import {
  mergeSpanParts,
  settleSpanParts,
  spanPartsSweeperUsers,
  startSpanPartsSweeper,
  storeSpanParts,
  type SpanPart,
} from '../../src/protocols/span-parts.js';
import { waitUntil } from '../support/wait.js';
import { buildApiApp } from '../../src/app.js';

/**
 * Spans sent in pieces (src/protocols/span-parts.ts): pieces kept in span_parts on real chdb, merged
 * whatever their order, written once through the span writer, read back through the public API.
 */

const h = useHarness();
const LATER = () => Date.now() + 3_600_000;
const id = () => crypto.randomUUID();

async function owner(hh: Harness) {
  const { project, key } = await projectWithKey(hh);
  return { token: key.key, project: { projectId: project.id, traceTtlDays: 30 } };
}

async function readTrace(token: string, traceId: string) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token });
}

function part(
  kind: SpanPart['kind'],
  traceId: string,
  spanId: string,
  fields: SpanPart['fields'],
  at: number,
): SpanPart {
  return { kind, trace_id: traceId, span_id: spanId, fields, received_at: Date.now(), event_time: at };
}

describe('span parts', () => {
  it('joins an update sent before its create, in another request; {} and null never overwrite', async () => {
    const { token, project } = await owner(h());
    const traceId = id();
    const spanId = id();
    const t0 = Date.now() - 60_000;
    const update = part(
      'update',
      traceId,
      spanId,
      {
        end_time: new Date(t0 + 2_000).toISOString(),
        output: { answer: 42 },
        output_tokens: 7,
        metadata: { b: '2' },
        tags: ['y'],
      },
      t0 + 2_000,
    );
    expect(await storeSpanParts(h().ctx, project, [update])).toEqual({ stored: 1, rejected: [] });
    // Held: no create yet, so nothing is written however late it is.
    expect((await settleSpanParts(h().ctx, { now: LATER(), projectId: project.projectId })).written).toBe(0);
    expect((await readTrace(token, traceId)).statusCode).toBe(404);

    const create = part(
      'create',
      traceId,
      spanId,
      {
        name: 'generation',
        kind: 'llm',
        start_time: new Date(t0).toISOString(),
        input: 'question',
        input_tokens: 5,
        metadata: { a: '1', b: '1' },
        tags: ['x'],
        model_name: 'gpt-4o',
      },
      t0,
    );
    // A later update saying nothing (the LangChain handler's usage: {}) changes nothing.
    const empty = part('update', traceId, spanId, { metadata: {}, model_name: null, output: null }, t0 + 3_000);
    await storeSpanParts(h().ctx, project, [create, empty]);
    // Not settled while pieces may still come (the quiet window)...
    expect((await settleSpanParts(h().ctx, { projectId: project.projectId })).written).toBe(0);
    // ...then written once.
    expect((await settleSpanParts(h().ctx, { now: LATER(), projectId: project.projectId })).written).toBe(1);
    const res = await readTrace(token, traceId);
    expect(res.statusCode, res.body).toBe(200);
    const trace = res.json();
    expect(trace.spans).toHaveLength(1);
    expect(trace.spans[0]).toMatchObject({
      name: 'generation',
      kind: 'llm',
      model_name: 'gpt-4o',
      input_tokens: 5,
      output_tokens: 7,
      input: 'question',
      output: '{"answer":42}',
      tags: ['x', 'y'],
    });
    expect(trace.spans[0].metadata).toMatchObject({ a: '1', b: '2' });
    expect(trace.spans[0].end_time).toBe(new Date(t0 + 2_000).toISOString());
  });

  it('counts a re-sent piece once, and writes a settled span once', async () => {
    const { token, project } = await owner(h());
    const traceId = id();
    const t0 = Date.now() - 60_000;
    const pieces = [
      part('create', traceId, traceId, { name: 'root', start_time: new Date(t0).toISOString(), cost: 0.5 }, t0),
      part('update', traceId, traceId, { end_time: new Date(t0 + 10).toISOString(), input_tokens: 3 }, t0 + 10),
    ];
    await storeSpanParts(h().ctx, project, pieces);
    await storeSpanParts(h().ctx, project, pieces);
    expect((await settleSpanParts(h().ctx, { now: LATER(), projectId: project.projectId })).written).toBe(1);
    // Sent again after it was written: kept, but nothing changes.
    await storeSpanParts(h().ctx, project, pieces);
    expect((await settleSpanParts(h().ctx, { now: LATER(), projectId: project.projectId })).written).toBe(0);
    const trace = (await readTrace(token, traceId)).json();
    expect(trace.spans).toHaveLength(1);
    expect(trace).toMatchObject({ total_input_tokens: 3 });
    expect(trace.total_cost).toBeCloseTo(0.5, 12);
  });

  it('rejects a bad piece alone', async () => {
    const { project } = await owner(h());
    const traceId = id();
    const result = await storeSpanParts(h().ctx, project, [
      part('create', traceId, id(), { name: 'ok', start_time: new Date().toISOString() }, Date.now()),
      part('update', traceId, id(), { input_tokens: -1 }, Date.now()),
      part('create', traceId, '', { name: 'no id', start_time: new Date().toISOString() }, Date.now()),
    ]);
    expect(result.stored).toBe(1);
    expect(result.rejected.map((r) => r.index)).toEqual([1, 2]);
    expect(result.rejected[0]!.errors.join(' ')).toContain('input_tokens');
  });

  it("never joins another project's pieces (same span id)", async () => {
    const a = await owner(h());
    const b = await owner(h());
    const traceId = id();
    const t0 = Date.now() - 60_000;
    await storeSpanParts(h().ctx, a.project, [
      part('create', traceId, traceId, { name: 'a-root', start_time: new Date(t0).toISOString() }, t0),
    ]);
    await storeSpanParts(h().ctx, b.project, [part('update', traceId, traceId, { output: 'from b' }, t0 + 1)]);
    await settleSpanParts(h().ctx, { now: LATER() });
    const seen = (await readTrace(a.token, traceId)).json();
    expect(seen.spans[0].output).toBeNull();
    expect((await readTrace(b.token, traceId)).statusCode).toBe(404);
  });
});

describe('the sweeper', () => {
  it('writes settled spans on its own, every few milliseconds here', async () => {
    const { token, project } = await owner(h());
    const traceId = id();
    const t0 = Date.now() - 1_000;
    await storeSpanParts(h().ctx, project, [
      part('create', traceId, traceId, { name: 'swept', start_time: new Date(t0).toISOString() }, t0),
    ]);
    const stop = startSpanPartsSweeper(h().ctx, { quietMs: 0, everyMs: 20 });
    try {
      await waitUntil(async () => (await readTrace(token, traceId)).statusCode === 200, 'the swept trace', 15_000);
    } finally {
      await stop();
    }
    expect((await readTrace(token, traceId)).json().name).toBe('swept');
  });
});

describe('one sweeper per process', () => {
  it('is shared by every app on one context, both protocols included, and stops with the last', async () => {
    // The harness's API app (Langfuse and LangSmith routes both registered) holds it once.
    expect(spanPartsSweeperUsers(h().ctx)).toBe(1);
    const second = buildApiApp(h().ctx);
    await second.ready();
    expect(spanPartsSweeperUsers(h().ctx)).toBe(2);
    await second.close();
    expect(spanPartsSweeperUsers(h().ctx)).toBe(1);
  });
});

describe('mergeSpanParts', () => {
  it('keeps the earliest start and lets the producer-time order decide a field', () => {
    const merged = mergeSpanParts([
      { kind: 'update', fields: { name: 'late name' }, received_at: 1, event_time: 300 },
      {
        kind: 'create',
        fields: { name: 'first', start_time: '2026-01-01T00:00:02Z' },
        received_at: 2,
        event_time: 100,
      },
      {
        kind: 'update',
        fields: { start_time: '2026-01-01T00:00:01Z', name: 'second' },
        received_at: 3,
        event_time: 200,
      },
    ]);
    expect(merged).toMatchObject({ name: 'late name', start_time: '2026-01-01T00:00:01Z' });
  });
});
