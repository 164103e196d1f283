import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, UNKNOWN_ID } from '../support/expect.js';
import { ingestSpans, iso } from '../support/ingest.js';

/** Comments on traces and spans (quality.md §3): authors, counts, who may delete, project isolation. */
const h = useHarness();
let t: Awaited<ReturnType<typeof projectWithKey>>;
let member: Awaited<ReturnType<typeof memberWithRole>>;
let other: Awaited<ReturnType<typeof memberWithRole>>;
let viewer: Awaited<ReturnType<typeof memberWithRole>>;

beforeAll(async () => {
  t = await projectWithKey(h());
  const t0 = Date.now() - 60_000;
  await ingestSpans(h(), t.key.key, [
    { trace_id: 'c-1', span_id: 'root', name: 'chat', start_time: iso(t0), end_time: iso(t0 + 10) },
    {
      trace_id: 'c-1',
      span_id: 'child',
      parent_span_id: 'root',
      name: 'llm',
      start_time: iso(t0),
      end_time: iso(t0 + 5),
    },
  ]);
  member = await memberWithRole(h(), t.owner, t.owner.workspace.id, 'MEMBER');
  other = await memberWithRole(h(), t.owner, t.owner.workspace.id, 'MEMBER');
  viewer = await memberWithRole(h(), t.owner, t.owner.workspace.id, 'VIEWER');
});

const req = (method: 'GET' | 'POST' | 'DELETE', path: string, token: string, payload?: unknown, query = {}) =>
  call(h().api, {
    method,
    url: `${PUBLIC}${path}`,
    token,
    query: { project_id: t.project.id, ...query },
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

describe('comments', () => {
  it('are written by users, listed oldest first with their authors, and counted on the trace', async () => {
    const first = await req('POST', '/comments', member.token, { trace_id: 'c-1', text: '<script>alert(1)</script>' });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({
      trace_id: 'c-1',
      span_id: null,
      text: '<script>alert(1)</script>',
      author_user_id: member.user.id,
      author_name: member.user.name,
      project_id: t.project.id,
    });
    const onSpan = await req('POST', '/comments', t.owner.token, {
      trace_id: 'c-1',
      span_id: 'child',
      text: 'x'.repeat(4096),
    });
    expect(onSpan.statusCode, onSpan.body).toBe(201);

    const list = (await req('GET', '/comments', viewer.token, undefined, { trace_id: 'c-1' })).json();
    expect(list.meta.total).toBe(2);
    expect(list.data.map((c: { id: string }) => c.id)).toEqual([first.json().id, onSpan.json().id]);
    const spanOnly = (
      await req('GET', '/comments', t.key.key, undefined, { trace_id: 'c-1', span_id: 'child' })
    ).json();
    expect(spanOnly.data.map((c: { id: string }) => c.id)).toEqual([onSpan.json().id]);
    expect((await req('GET', `/comments/${first.json().id}`, viewer.token)).json().text).toBe(
      '<script>alert(1)</script>',
    );
    expect((await req('GET', '/traces/c-1', viewer.token)).json().comment_count).toBe(2);
  });

  it('refuses empty and over-long text, API keys and VIEWERs', async () => {
    for (const text of ['', '   ', 'x'.repeat(4097), 'nul\u0000']) {
      const res = await req('POST', '/comments', member.token, { trace_id: 'c-1', text });
      expect(res.statusCode, JSON.stringify(text)).toBe(422);
    }
    expect((await req('POST', '/comments', member.token, { text: 'no trace' })).statusCode).toBe(422);
    expect((await req('GET', '/comments', member.token)).statusCode).toBe(422);
    expectDetail(
      await req('POST', '/comments', t.key.key, { trace_id: 'c-1', text: 'by key' }),
      403,
      'this operation requires a user login; API keys are project-scoped',
    );
    expectDetail(
      await req('POST', '/comments', viewer.token, { trace_id: 'c-1', text: 'by viewer' }),
      403,
      'this operation requires the MEMBER role or higher in the workspace',
    );
  });

  it('are deleted by their author or an ADMIN, by no one else', async () => {
    const made = (await req('POST', '/comments', member.token, { trace_id: 'c-1', text: 'mine' })).json();
    expectDetail(
      await req('DELETE', `/comments/${made.id}`, other.token),
      403,
      "only the comment's author or an ADMIN may delete it",
    );
    expectDetail(await req('DELETE', `/comments/${made.id}`, viewer.token), 403);
    expect((await req('DELETE', `/comments/${made.id}`, member.token)).statusCode).toBe(204);
    expectDetail(await req('GET', `/comments/${made.id}`, member.token), 404, 'comment not found');

    const again = (
      await req('POST', '/comments', member.token, { trace_id: 'c-1', text: 'the admin removes it' })
    ).json();
    expect((await req('DELETE', `/comments/${again.id}`, t.owner.token)).statusCode).toBe(204);
    expectDetail(await req('DELETE', `/comments/${UNKNOWN_ID}`, t.owner.token), 404, 'comment not found');
  });

  it("another project neither reads nor deletes this project's comments", async () => {
    const made = (await req('POST', '/comments', member.token, { trace_id: 'c-1', text: 'private' })).json();
    const stranger = await projectWithKey(h(), 'stranger');
    const as = (method: 'GET' | 'DELETE', path: string, query: Record<string, string> = {}) =>
      call(h().api, {
        method,
        url: `${PUBLIC}${path}`,
        token: stranger.owner.token,
        query: { project_id: stranger.project.id, ...query },
      });
    expectDetail(await as('GET', `/comments/${made.id}`), 404, 'comment not found');
    expectDetail(await as('DELETE', `/comments/${made.id}`), 404, 'comment not found');
    expect((await as('GET', '/comments', { trace_id: 'c-1' })).json().meta.total).toBe(0);
    const byKey = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/comments`,
      token: stranger.key.key,
      query: { trace_id: 'c-1' },
    });
    expect(byKey.json().data).toEqual([]);
    expectDetail(
      await call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/comments`,
        token: stranger.owner.token,
        query: { project_id: t.project.id, trace_id: 'c-1' },
      }),
      403,
      'you do not have access to this project',
    );
  });
});
