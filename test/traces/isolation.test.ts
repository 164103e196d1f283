import { describe, expect, it } from 'vitest';
import { projectWithKey, publicGet, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/** Project isolation of trace reads (docs/authentication.md; docs/traces.md). */

const h = useHarness();

const get = publicGet(h);

/** Two projects of two different owners, each with a trace and a session of its own. */
async function twoProjects() {
  const a = await projectWithKey(h(), 'alice');
  const b = await projectWithKey(h(), 'bob');
  const t0 = Date.now() - 10 * 60_000;
  await ingestSpans(h(), a.key.key, [
    {
      trace_id: 'a-trace',
      span_id: 'r',
      name: 'alice trace',
      start_time: iso(t0),
      end_time: iso(t0 + 10),
      session_id: 'a-session',
      user_id: 'alice-user',
      cost: 1,
    },
  ]);
  await ingestSpans(h(), b.key.key, [
    {
      trace_id: 'b-trace',
      span_id: 'r',
      name: 'bob trace',
      start_time: iso(t0 + 5),
      end_time: iso(t0 + 20),
      session_id: 'b-session',
      user_id: 'bob-user',
      cost: 2,
    },
  ]);
  return { a, b };
}

const traceIds = (body: { data: { trace_id: string }[] }) => body.data.map((t) => t.trace_id).sort();

describe('trace isolation between projects', () => {
  it('an API key sees only its own project in lists, details, sessions and session details', async () => {
    const { a, b } = await twoProjects();

    for (const [mine, theirs, own, other] of [
      [a, b, 'a', 'b'],
      [b, a, 'b', 'a'],
    ] as const) {
      const list = await get(mine.key.key, '/traces');
      expect(list.statusCode).toBe(200);
      expect(traceIds(list.json())).toEqual([`${own}-trace`]);
      expect(list.json().meta.total).toBe(1);
      expect(list.json().data[0].project_id).toBe(mine.project.id);

      // Searching for the other project's values finds nothing.
      const probes: Record<string, string>[] = [
        { search_query: `${other}-trace` },
        { user_id: `${other === 'a' ? 'alice' : 'bob'}-user` },
        { filters: JSON.stringify([{ field: 'trace_id', op: 'eq', value: `${other}-trace` }]) },
      ];
      for (const query of probes) {
        const res = await get(mine.key.key, '/traces', query);
        expect(res.json()).toMatchObject({ data: [], meta: { total: 0 } });
      }

      const foreign = await get(mine.key.key, `/traces/${other}-trace`);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual({ detail: 'trace not found' });
      expect((await get(mine.key.key, `/traces/${own}-trace`)).statusCode).toBe(200);

      const sessions = await get(mine.key.key, '/sessions');
      expect(sessions.statusCode).toBe(200);
      expect(sessions.json().data.map((s: { session_id: string }) => s.session_id)).toEqual([`${own}-session`]);
      expect(sessions.json().meta.total).toBe(1);

      const foreignSession = await get(mine.key.key, `/sessions/${other}-session`);
      expect(foreignSession.statusCode).toBe(404);
      expect(foreignSession.json()).toEqual({ detail: 'session not found' });
      const ownSession = await get(mine.key.key, `/sessions/${own}-session`);
      expect(ownSession.statusCode).toBe(200);
      expect(ownSession.json().traces.map((t: { trace_id: string }) => t.trace_id)).toEqual([`${own}-trace`]);

      // An API key naming another project: 400 (docs/authentication.md).
      const mismatch = await get(mine.key.key, '/traces', { project_id: theirs.project.id });
      expect(mismatch.statusCode).toBe(400);
      expect(typeof mismatch.json().detail).toBe('string');
    }
  });

  it('the same trace_id and span_id in two projects stay two separate traces', async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    const t0 = Date.now() - 5 * 60_000;
    const span = (name: string, cost: number, tokens: number) => ({
      trace_id: 'shared-trace',
      span_id: 'shared-span',
      name,
      start_time: iso(t0),
      end_time: iso(t0 + 100),
      session_id: 'shared-session',
      cost,
      input_tokens: tokens,
    });
    // Concurrently, so both go through the same commit of the span writer.
    await Promise.all([
      ingestSpans(h(), a.key.key, [span('from a', 0.5, 5)]),
      ingestSpans(h(), b.key.key, [span('from b', 0.25, 7)]),
    ]);
    await ingestSpans(h(), a.key.key, [
      { ...span('a child', 0.5, 5), span_id: 'a-only', parent_span_id: 'shared-span', start_time: iso(t0 + 1) },
    ]);

    const inA = (await get(a.key.key, '/traces/shared-trace')).json();
    const inB = (await get(b.key.key, '/traces/shared-trace')).json();
    expect(inA).toMatchObject({
      project_id: a.project.id,
      name: 'from a',
      span_count: 2,
      total_cost: 1,
      total_input_tokens: 10,
    });
    expect(inB).toMatchObject({
      project_id: b.project.id,
      name: 'from b',
      span_count: 1,
      total_cost: 0.25,
      total_input_tokens: 7,
    });
    expect(inB.spans.map((s: { span_id: string }) => s.span_id)).toEqual(['shared-span']);

    const listA = (await get(a.key.key, '/traces')).json();
    const listB = (await get(b.key.key, '/traces')).json();
    expect(listA.data).toEqual([expect.objectContaining({ trace_id: 'shared-trace', span_count: 2, total_cost: 1 })]);
    expect(listB.data).toEqual([
      expect.objectContaining({ trace_id: 'shared-trace', span_count: 1, total_cost: 0.25 }),
    ]);

    expect((await get(a.key.key, '/sessions/shared-session')).json()).toMatchObject({
      trace_count: 1,
      total_cost: 1,
      total_input_tokens: 10,
    });
    expect((await get(b.key.key, '/sessions/shared-session')).json()).toMatchObject({
      trace_count: 1,
      total_cost: 0.25,
      total_input_tokens: 7,
    });
  });
});

describe('trace reads with a user credential', () => {
  const READS = ['/traces', '/traces/a-trace', '/sessions', '/sessions/a-session'];

  it('answers 403 for a project the user cannot access', async () => {
    const { a, b } = await twoProjects();
    for (const url of [...READS, '/traces/b-trace', '/sessions/b-session']) {
      const res = await get(a.owner.token, url, { project_id: b.project.id });
      expect(res.statusCode, url).toBe(403);
      expect(typeof res.json().detail).toBe('string');
    }
    // A project id that does not exist reads the same.
    const unknown = await get(a.owner.token, '/traces', { project_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.statusCode).toBe(403);
  });

  it('answers 400 with the spec’s detail when project_id is missing', async () => {
    const { a } = await twoProjects();
    for (const url of READS) {
      const res = await get(a.owner.token, url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toEqual({ detail: 'project_id query parameter is required for user credentials' });
    }
  });

  it('reads its own project with project_id, and only that project', async () => {
    const { a } = await twoProjects();
    const q = { project_id: a.project.id };
    const list = await get(a.owner.token, '/traces', q);
    expect(list.statusCode).toBe(200);
    expect(traceIds(list.json())).toEqual(['a-trace']);
    expect((await get(a.owner.token, '/traces/a-trace', q)).json()).toMatchObject({
      trace_id: 'a-trace',
      project_id: a.project.id,
    });
    expect((await get(a.owner.token, '/traces/b-trace', q)).statusCode).toBe(404);
    expect(
      (await get(a.owner.token, '/sessions', q)).json().data.map((s: { session_id: string }) => s.session_id),
    ).toEqual(['a-session']);
    expect((await get(a.owner.token, '/sessions/a-session', q)).statusCode).toBe(200);
    expect((await get(a.owner.token, '/sessions/b-session', q)).statusCode).toBe(404);
  });
});
