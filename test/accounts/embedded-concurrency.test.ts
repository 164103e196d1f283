import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, PUBLIC, uniqueEmail, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

/**
 * Embedded Postgres (PGlite) is one session: concurrent requests must not see each other's open
 * transactions (no spurious 401/403/500 under concurrent sign-ups). Forced embedded here even when the
 * environment names servers.
 */

const h = useHarness({ DATABASE_URL: undefined, REDIS_URL: undefined });

const N = 8;
const PASSWORD = 'correct horse battery';

function ok(res: LightMyRequestResponse, status: number) {
  expect(res.statusCode, `${res.statusCode} ${res.body}`).toBe(status);
  return res.json();
}

type Lane = {
  email: string;
  token: string;
  userId: string;
  workspaceId: string;
  projectId: string;
  projectName: string;
  keyId: string;
  key: string;
};

/** One user's whole path: sign up, create a project, create a key, ask who the key is. */
async function lane(i: number, label: string): Promise<Lane> {
  const email = uniqueEmail(`${label}-${i}`);
  const signup = ok(
    await call(h().web, {
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email, password: PASSWORD, name: `${label} ${i}` },
    }),
    201,
  );
  expect(signup.user.email).toBe(email);
  const token: string = signup.session_token;
  const projectName = `${label}-project-${i}`;
  const project = ok(
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token,
      payload: { name: projectName, workspace_id: signup.workspace.id },
    }),
    201,
  );
  expect(project).toMatchObject({ created: true, name: projectName, workspace_id: signup.workspace.id });
  const key = ok(
    await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token,
      payload: { name: `key ${i}` },
    }),
    201,
  );
  const who = ok(await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key }), 200);
  expect(who).toEqual({
    project_id: project.id,
    project_name: projectName,
    workspace_id: signup.workspace.id,
    key_id: key.id,
  });
  return {
    email,
    token,
    userId: signup.user.id,
    workspaceId: signup.workspace.id,
    projectId: project.id,
    projectName,
    keyId: key.id,
    key: key.key,
  };
}

function expectDistinct(lanes: Lane[]) {
  for (const field of ['email', 'token', 'userId', 'workspaceId', 'projectId', 'keyId', 'key'] as const) {
    expect(new Set(lanes.map((l) => l[field])).size, field).toBe(lanes.length);
  }
}

describe('embedded Postgres under concurrent requests', () => {
  it('is really the embedded store', () => {
    expect(h().ctx.pg.embedded).toBe(true);
  });

  let lanes: Lane[] = [];

  it(`${N} concurrent users each sign up, create a project and a key, and ask whoami`, async () => {
    lanes = await Promise.all(Array.from({ length: N }, (_, i) => lane(i, 'pipe')));
    expectDistinct(lanes);
  });

  it(`${N} concurrent calls of each step, step by step`, async () => {
    const emails = Array.from({ length: N }, (_, i) => uniqueEmail(`step-${i}`));
    const signups = (
      await Promise.all(
        emails.map((email, i) =>
          call(h().web, {
            method: 'POST',
            url: '/api/auth/signup',
            payload: { email, password: PASSWORD, name: `step ${i}` },
          }),
        ),
      )
    ).map((r) => ok(r, 201));
    const projects = (
      await Promise.all(
        signups.map((s, i) =>
          call(h().api, {
            method: 'POST',
            url: `${PUBLIC}/projects`,
            token: s.session_token,
            payload: { name: `step-project-${i}`, workspace_id: s.workspace.id },
          }),
        ),
      )
    ).map((r) => ok(r, 201));
    const keys = (
      await Promise.all(
        projects.map((p, i) =>
          call(h().api, {
            method: 'POST',
            url: `${PUBLIC}/projects/${p.id}/api-keys`,
            token: signups[i].session_token,
            payload: { name: `key ${i}` },
          }),
        ),
      )
    ).map((r) => ok(r, 201));
    // whoami, interleaved with each user listing their own projects and logging in again
    const [whos, lists, logins] = await Promise.all([
      Promise.all(keys.map((k) => call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: k.key }))),
      Promise.all(
        signups.map((s) => call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: s.session_token })),
      ),
      Promise.all(
        emails.map((email) =>
          call(h().web, { method: 'POST', url: '/api/auth/login', payload: { email, password: PASSWORD } }),
        ),
      ),
    ]);
    whos.forEach((r, i) =>
      expect(ok(r, 200)).toEqual({
        project_id: projects[i].id,
        project_name: `step-project-${i}`,
        workspace_id: signups[i].workspace.id,
        key_id: keys[i].id,
      }),
    );
    lists.forEach((r, i) => expect(JSON.stringify(ok(r, 200))).toContain(projects[i].id));
    logins.forEach((r) => ok(r, 200));
    expect(new Set(projects.map((p) => p.id)).size).toBe(N);
    expect(new Set(signups.map((s) => s.workspace.id)).size).toBe(N);
  });

  it('concurrent ingest with those keys lands each span in its own project', async () => {
    expect(lanes).toHaveLength(N);
    const start = Date.now() - 5 * 60_000;
    // The same trace and span ids in every project: only the key tells them apart.
    const spansOf = (i: number) => [
      {
        trace_id: 'shared-trace',
        span_id: 'root',
        name: `agent ${i}`,
        start_time: iso(start + i),
        end_time: iso(start + i + 1000),
        cost: i + 1,
        metadata: { lane: String(i) },
      },
      ...Array.from({ length: i + 1 }, (_, j) => ({
        trace_id: 'shared-trace',
        span_id: `child-${j}`,
        parent_span_id: 'root',
        name: `step ${j}`,
        start_time: iso(start + i + 10 + j),
        end_time: iso(start + i + 20 + j),
        input_tokens: 1,
      })),
      { trace_id: `own-trace-${i}`, span_id: 'only', name: `own ${i}`, start_time: iso(start + 2000 + i) },
    ];
    // Each lane sends twice (a retry), all at once, while the others read.
    const results = await Promise.all(
      lanes.flatMap((l, i) => [
        call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: l.key, payload: { spans: spansOf(i) } }),
        call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: l.key, payload: { spans: spansOf(i) } }),
        call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: l.key }),
        call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: l.key }),
      ]),
    );
    results.forEach((r, k) => {
      const body = ok(r, 200);
      if (k % 4 < 2) expect(body).toEqual({ accepted: Math.floor(k / 4) + 3, rejected: [] });
      if (k % 4 === 2) expect(body.project_id).toBe(lanes[Math.floor(k / 4)]!.projectId);
    });

    await Promise.all(
      lanes.map(async (l, i) => {
        const list = ok(await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: l.key }), 200);
        expect(list.meta.total).toBe(2);
        expect(list.data.map((t: { trace_id: string }) => t.trace_id).sort()).toEqual([
          'own-trace-' + i,
          'shared-trace',
        ]);
        const shared = list.data.find((t: { trace_id: string }) => t.trace_id === 'shared-trace');
        expect(shared).toMatchObject({
          project_id: l.projectId,
          name: `agent ${i}`,
          span_count: i + 2,
          total_cost: i + 1,
          total_input_tokens: i + 1,
          metadata_map: { lane: String(i) },
        });
        // A user credential reads the same project's trace; another user's credential can't.
        const detail = ok(
          await call(h().api, {
            method: 'GET',
            url: `${PUBLIC}/traces/shared-trace`,
            token: l.token,
            query: { project_id: l.projectId },
          }),
          200,
        );
        expect(detail.spans).toHaveLength(i + 2);
        const other = lanes[(i + 1) % N]!;
        const denied = await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/traces/shared-trace`,
          token: other.token,
          query: { project_id: l.projectId },
        });
        expect([403, 404]).toContain(denied.statusCode);
      }),
    );
  });
});
