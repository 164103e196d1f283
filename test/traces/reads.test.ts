import { describe, expect, it } from 'vitest';
import { projectWithKey, publicGet, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/** `GET /traces/{trace_id}`, `GET /sessions`, `GET /sessions/{session_id}` (docs/traces.md). */

const h = useHarness();

const MIN = 60_000;

const get = publicGet(h);

describe('GET /traces/{trace_id}', () => {
  it('answers the list item’s fields plus every span ordered by start time', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 30 * MIN;
    // Sent out of order, across two requests.
    await ingestSpans(h(), key.key, [
      {
        trace_id: 'd1',
        span_id: 'tool',
        parent_span_id: 'llm',
        name: 'search',
        kind: 'tool',
        start_time: iso(t0 + 300),
        end_time: iso(t0 + 400),
        cost: 0.02,
        metadata: { shared: 'tool', tool: 'yes' },
      },
      {
        trace_id: 'd1',
        span_id: 'llm',
        parent_span_id: 'root',
        name: 'chat',
        kind: 'llm',
        start_time: iso(t0 + 100),
        end_time: iso(t0 + 900),
        model_name: 'gpt-4o',
        environment: 'prod',
        cost: 0.01,
        input_tokens: 12,
        output_tokens: 8,
        status: 'error',
        error_type: 'RateLimitError',
        error_message: 'slow down',
        output: ['a', 1],
      },
    ]);
    await ingestSpans(h(), key.key, [
      { trace_id: 'd1', span_id: 'open', parent_span_id: 'root', name: 'still running', start_time: iso(t0 + 200) },
      {
        trace_id: 'd1',
        span_id: 'root',
        name: 'agent',
        kind: 'agent',
        start_time: iso(t0),
        end_time: iso(t0 + 1000),
        user_id: 'u1',
        session_id: 's1',
        input: { q: 'hi' },
        output: 'bye',
        metadata: { shared: 'root' },
        status: 'ok',
      },
    ]);

    const res = await get(key.key, '/traces/d1');
    expect(res.statusCode).toBe(200);
    const { spans, comment_count: comments, ...item } = res.json();
    expect(comments).toBe(0);
    const list = (await get(key.key, '/traces')).json();
    expect(list.data).toHaveLength(1);
    expect(item).toEqual(list.data[0]);
    expect(item).toEqual({
      trace_id: 'd1',
      project_id: project.id,
      name: 'agent',
      trace_start_time: iso(t0),
      user_id: 'u1',
      session_id: 's1',
      span_count: 4,
      duration_ms: 1000,
      error_count: 1,
      input: '{"q":"hi"}',
      output: 'bye',
      trace_url: `http://web.test/projects/${project.id}/traces/d1`,
      metadata_map: { shared: 'root', tool: 'yes' },
      total_cost: 0.03,
      total_input_tokens: 12,
      total_output_tokens: 8,
      tags: [],
      model_names: ['gpt-4o'],
      scores: [],
    });

    expect(spans.map((s: { span_id: string }) => s.span_id)).toEqual(['root', 'llm', 'open', 'tool']);
    const [root, llm, open, tool] = spans;
    expect(root).toMatchObject({
      trace_id: 'd1',
      parent_span_id: null,
      name: 'agent',
      kind: 'agent',
      start_time: iso(t0),
      end_time: iso(t0 + 1000),
      status: 'ok',
      input: '{"q":"hi"}',
      output: 'bye',
      user_id: 'u1',
      session_id: 's1',
      metadata: { shared: 'root' },
    });
    expect(llm).toMatchObject({
      parent_span_id: 'root',
      kind: 'llm',
      status: 'error',
      error_type: 'RateLimitError',
      error_message: 'slow down',
      model_name: 'gpt-4o',
      environment: 'prod',
      output: '["a",1]',
      cost: 0.01,
      input_tokens: 12,
      output_tokens: 8,
      total_tokens: 20,
    });
    expect(open).toMatchObject({
      name: 'still running',
      kind: 'custom',
      status: 'unset',
      end_time: null,
      cost: 0,
      input_tokens: 0,
      total_tokens: 0,
    });
    expect(tool).toMatchObject({ kind: 'tool', metadata: { shared: 'tool', tool: 'yes' }, input: null });
  });

  it('answers 404 {detail} for an unknown trace', async () => {
    const { key } = await projectWithKey(h());
    const res = await get(key.key, '/traces/never-sent');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'trace not found' });
  });
});

/**
 * Three sessions (and one trace without a session), most recent last trace: s3, then s1, then s2.
 * s1 has three traces; its first has no user, the second 'u-a', the third 'u-b'.
 */
async function sessionFixture() {
  const { key, project } = await projectWithKey(h());
  const now = Date.now();
  const t = {
    s1a: now - 180 * MIN,
    s1b: now - 150 * MIN,
    s1c: now - 60 * MIN,
    s2: now - 120 * MIN,
    s3: now - 30 * MIN,
    none: now - 10 * MIN,
  };
  const span = (trace: string, start: number, extra: Record<string, unknown>) => ({
    trace_id: trace,
    span_id: 'root',
    name: trace,
    start_time: iso(start),
    end_time: iso(start + 1000),
    ...extra,
  });
  await ingestSpans(h(), key.key, [
    span('s1-a', t.s1a, { session_id: 's1', cost: 0.1, input_tokens: 1, output_tokens: 10 }),
    {
      trace_id: 's1-a',
      span_id: 'child',
      parent_span_id: 'root',
      name: 'c',
      start_time: iso(t.s1a + 1),
      cost: 0.2,
      input_tokens: 2,
      output_tokens: 20,
    },
    span('s1-b', t.s1b, { session_id: 's1', user_id: 'u-a', cost: 0.3, input_tokens: 3, output_tokens: 30 }),
    span('s1-c', t.s1c, { session_id: 's1', user_id: 'u-b', cost: 0.4, input_tokens: 4, output_tokens: 40 }),
    span('s2-a', t.s2, { session_id: 's2', user_id: 'u-2', cost: 1, input_tokens: 5, output_tokens: 50 }),
    span('s3-a', t.s3, { session_id: 's3' }),
    span('no-session', t.none, { user_id: 'u-x', cost: 9 }),
  ]);
  return { key, project, t };
}

describe('GET /sessions', () => {
  it('lists sessions with their sums, most recent first', async () => {
    const { key, t } = await sessionFixture();
    const res = await get(key.key, '/sessions');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.meta).toEqual({ page: 0, limit: 50, total: 3 });
    expect(body.data.map((s: { session_id: string }) => s.session_id)).toEqual(['s3', 's1', 's2']);
    const [s3, s1, s2] = body.data;
    expect(s1).toEqual({
      session_id: 's1',
      trace_count: 3,
      first_trace_time: iso(t.s1a),
      last_trace_time: iso(t.s1c),
      total_cost: expect.closeTo(1, 9),
      total_input_tokens: 10,
      total_output_tokens: 100,
      error_count: 0,
      duration_ms: t.s1c + 1000 - t.s1a,
      user_id: 'u-a',
    });
    expect(s2).toEqual({
      session_id: 's2',
      trace_count: 1,
      first_trace_time: iso(t.s2),
      last_trace_time: iso(t.s2),
      total_cost: 1,
      total_input_tokens: 5,
      total_output_tokens: 50,
      error_count: 0,
      duration_ms: 1000,
      user_id: 'u-2',
    });
    expect(s3).toEqual({
      session_id: 's3',
      trace_count: 1,
      first_trace_time: iso(t.s3),
      last_trace_time: iso(t.s3),
      total_cost: 0,
      total_input_tokens: 0,
      total_output_tokens: 0,
      error_count: 0,
      duration_ms: 1000,
      user_id: null,
    });
  });

  it('pages with limit and page', async () => {
    const { key } = await sessionFixture();
    const page = async (query: Record<string, string>) => {
      const res = await get(key.key, '/sessions', query);
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      return { ids: body.data.map((s: { session_id: string }) => s.session_id), meta: body.meta };
    };
    expect(await page({ limit: '2' })).toEqual({ ids: ['s3', 's1'], meta: { page: 0, limit: 2, total: 3 } });
    expect(await page({ limit: '2', page: '1' })).toEqual({ ids: ['s2'], meta: { page: 1, limit: 2, total: 3 } });
    expect(await page({ limit: '1', page: '1' })).toEqual({ ids: ['s1'], meta: { page: 1, limit: 1, total: 3 } });
    expect(await page({ limit: '2', page: '5' })).toEqual({ ids: [], meta: { page: 5, limit: 2, total: 3 } });
  });

  it('answers an empty list for a project without sessions', async () => {
    const { key } = await projectWithKey(h());
    const res = await get(key.key, '/sessions');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [], meta: { page: 0, limit: 50, total: 0 } });
  });
});

describe('GET /sessions/{session_id}', () => {
  it('answers the session with its traces as list items, oldest first', async () => {
    const { key } = await sessionFixture();
    const summary = (await get(key.key, '/sessions'))
      .json()
      .data.find((s: { session_id: string }) => s.session_id === 's1');
    const res = await get(key.key, '/sessions/s1');
    expect(res.statusCode).toBe(200);
    const { traces, truncated, scores, ...session } = res.json();
    expect(session).toEqual(summary);
    expect(truncated).toBe(false);
    expect(scores).toEqual([]);
    expect(traces.map((t: { trace_id: string }) => t.trace_id)).toEqual(['s1-a', 's1-b', 's1-c']);

    // Each is the very item the trace list answers.
    const list = (await get(key.key, '/traces', { search_query: 's1' })).json().data;
    // (The list's items add their scores' summaries.)
    for (const trace of traces)
      expect({ ...trace, scores: [] }).toEqual(list.find((t: { trace_id: string }) => t.trace_id === trace.trace_id));
    expect(traces[0]).toMatchObject({
      session_id: 's1',
      user_id: null,
      span_count: 2,
      total_cost: expect.closeTo(0.3, 9),
      total_input_tokens: 3,
      total_output_tokens: 30,
    });
  });

  it('answers 404 {detail} for an unknown session', async () => {
    const { key } = await sessionFixture();
    const res = await get(key.key, '/sessions/not-a-session');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'session not found' });
  });
});
