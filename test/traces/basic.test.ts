import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

const h = useHarness();

describe('traces: ingest and read back', () => {
  it('stores spans and lists the trace with its derived values', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 60_000;
    const spans = [
      {
        trace_id: 'tr-1',
        span_id: 'root',
        name: 'agent run',
        kind: 'agent',
        start_time: iso(t0),
        end_time: iso(t0 + 5000),
        user_id: 'u1',
        session_id: 's1',
        input: { q: 'hi' },
        output: 'done',
        metadata: { a: '1' },
      },
      {
        trace_id: 'tr-1',
        span_id: 'llm',
        parent_span_id: 'root',
        name: 'chat',
        kind: 'llm',
        start_time: iso(t0 + 100),
        end_time: iso(t0 + 900),
        model_name: 'gpt-4o',
        cost: 0.1,
        input_tokens: 10,
        output_tokens: 5,
        status: 'error',
        error_type: 'RateLimitError',
      },
      {
        trace_id: 'tr-1',
        span_id: 'tool',
        parent_span_id: 'root',
        name: 'search',
        kind: 'tool',
        start_time: iso(t0 + 1000),
        end_time: iso(t0 + 1200),
        cost: 0.2,
      },
      { trace_id: 'tr-2', span_id: 'x', name: 'bad', start_time: 'nope' },
    ];
    const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key.key, payload: { spans } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ accepted: 3, rejected: [{ index: 3, span_id: 'x' }] });
    const again = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      payload: { spans: spans.slice(0, 3) },
    });
    expect(again.statusCode).toBe(200);

    const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
    expect(list.statusCode).toBe(200);
    const body = list.json();
    expect(body.meta).toEqual({ page: 0, limit: 50, total: 1 });
    expect(body.data[0]).toEqual({
      trace_id: 'tr-1',
      project_id: project.id,
      name: 'agent run',
      trace_start_time: iso(t0),
      user_id: 'u1',
      session_id: 's1',
      span_count: 3,
      duration_ms: 5000,
      error_count: 1,
      input: '{"q":"hi"}',
      output: 'done',
      trace_url: `http://web.test/projects/${project.id}/traces/tr-1`,
      metadata_map: { a: '1' },
      total_cost: 0.3,
      total_input_tokens: 10,
      total_output_tokens: 5,
      tags: [],
      model_names: ['gpt-4o'],
      scores: [],
    });
    const filtered = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key.key,
      query: { filters: JSON.stringify([{ field: 'cost', op: 'gt', value: 0.25 }]) },
    });
    expect(filtered.json().meta.total).toBe(1);
    const none = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key.key,
      query: { filters: JSON.stringify([{ field: 'model_name', op: 'in', value: ['claude'] }]) },
    });
    expect(none.json()).toMatchObject({ data: [], meta: { total: 0 } });

    const detail = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/tr-1`, token: key.key });
    expect(detail.statusCode).toBe(200);
    const { spans: detailSpans, comment_count: comments, ...item } = detail.json();
    expect(comments).toBe(0);
    expect(item).toEqual(body.data[0]);
    expect(detailSpans.map((s: { span_id: string }) => s.span_id)).toEqual(['root', 'llm', 'tool']);

    const sessions = await call(h().api, { method: 'GET', url: `${PUBLIC}/sessions`, token: key.key });
    expect(sessions.json()).toMatchObject({
      data: [{ session_id: 's1', trace_count: 1, total_cost: 0.3, user_id: 'u1' }],
      meta: { total: 1 },
    });
    const session = await call(h().api, { method: 'GET', url: `${PUBLIC}/sessions/s1`, token: key.key });
    expect(session.statusCode).toBe(200);
    expect(session.json().traces).toHaveLength(1);
  });
});

describe('traces: compressed bodies', () => {
  it('inflates gzip bodies, refuses broken gzip with 400 and unknown encodings with 415', async () => {
    const { gzipSync } = await import('node:zlib');
    const { key } = await projectWithKey(h());
    const span = { trace_id: 'gz-1', span_id: 'a', name: 'zipped', start_time: new Date().toISOString() };
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const ok = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers,
      payload: gzipSync(JSON.stringify({ spans: [span] })),
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ accepted: 1, rejected: [] });
    const broken = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers,
      payload: Buffer.from('not gzip at all'),
    });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toEqual({ detail: 'request body is not valid gzip' });
    const br = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers: { ...headers, 'content-encoding': 'br' },
      payload: Buffer.from('x'),
    });
    expect(br.statusCode).toBe(415);
  });
});

describe('traces: filters see whole traces, not the rows of one insert', () => {
  it('matches on values summed across inserts that have not been merged yet', async () => {
    const { key } = await projectWithKey(h());
    const ch = h().ctx.ch.client;
    // Hold background merges so the trace stays as two rollup rows while we read it.
    await ch.command({ query: 'SYSTEM STOP MERGES traces' });
    try {
      const t0 = Date.now() - 30_000;
      const send = (spans: object[]) =>
        call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key.key, payload: { spans } });
      expect(
        (
          await send([
            { trace_id: 'split', span_id: 'a', name: 'root', start_time: iso(t0), end_time: iso(t0 + 100), cost: 0.3 },
          ])
        ).statusCode,
      ).toBe(200);
      expect(
        (
          await send([
            {
              trace_id: 'split',
              span_id: 'b',
              parent_span_id: 'a',
              name: 'late',
              start_time: iso(t0 + 10),
              end_time: iso(t0 + 5000),
              cost: 0.3,
              status: 'error',
            },
          ])
        ).statusCode,
      ).toBe(200);
      const parts = await (
        await ch.query({ query: "SELECT count() AS n FROM traces WHERE trace_id = 'split'", format: 'JSONEachRow' })
      ).json<{ n: string }>();
      expect(Number(parts[0]!.n)).toBe(2);
      const total = async (filters: object[]) =>
        (
          await call(h().api, {
            method: 'GET',
            url: `${PUBLIC}/traces`,
            token: key.key,
            query: { filters: JSON.stringify(filters) },
          })
        ).json().meta.total;
      expect(await total([{ field: 'cost', op: 'gt', value: 0.5 }])).toBe(1);
      expect(await total([{ field: 'cost', op: 'lt', value: 0.4 }])).toBe(0);
      expect(await total([{ field: 'errors', op: 'eq', value: 1 }])).toBe(1);
      expect(await total([{ field: 'duration_ms', op: 'gte', value: 5000 }])).toBe(1);
      expect(await total([{ field: 'duration_ms', op: 'lt', value: 5000 }])).toBe(0);
      // A late evaluation span makes the whole trace an evaluation trace.
      expect(
        (
          await send([
            {
              trace_id: 'split',
              span_id: 'c',
              parent_span_id: 'a',
              name: 'judge',
              start_time: iso(t0 + 20),
              evaluation_run_id: 'run-1',
            },
          ])
        ).statusCode,
      ).toBe(200);
      const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
      expect(list.json().meta.total).toBe(0);
      const withEval = await call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/traces`,
        token: key.key,
        query: { include_evaluations: 'true' },
      });
      expect(withEval.json().data[0]).toMatchObject({
        trace_id: 'split',
        span_count: 3,
        total_cost: 0.6,
        error_count: 1,
        duration_ms: 5000,
      });
    } finally {
      await ch.command({ query: 'SYSTEM START MERGES traces' });
    }
  });
});
