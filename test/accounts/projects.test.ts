import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  signUp,
  useHarness,
  type Harness,
  type SignedUp,
} from '../support/harness.js';

const h = useHarness();

const projectName = () => `project-${crypto.randomBytes(5).toString('hex')}`;

function postProject(token: string, payload: unknown) {
  return call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/projects`,
    token,
    payload: payload as Record<string, unknown>,
  });
}

function listProjects(token: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token, query });
}

function deleteProject(
  token: string,
  projectId: string,
  query: Record<string, string> = { reason: 'no longer needed' },
) {
  return call(h().api, { method: 'DELETE', url: `${PUBLIC}/projects/${projectId}`, token, query });
}

function whoami(key: string) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key });
}

/** `admin` adds a fresh user to `workspaceId` with `role`; returns that user. */
async function memberWithRole(
  harness: Harness,
  admin: SignedUp,
  workspaceId: string,
  role: 'VIEWER' | 'MEMBER' | 'ADMIN',
  label = role.toLowerCase(),
) {
  const user = await signUp(harness, label);
  const res = await call(harness.api, {
    method: 'POST',
    url: `${PUBLIC}/workspaces/${workspaceId}/members`,
    token: admin.token,
    payload: { email: user.user.email, role },
  });
  expect(res.statusCode).toBe(201);
  return user;
}

function expectValidationAt(res: { statusCode: number; json(): any }, loc: (string | number)[]) {
  expect(res.statusCode).toBe(422);
  const detail = res.json().detail as { loc: unknown[]; msg: string; type: string }[];
  expect(Array.isArray(detail)).toBe(true);
  const entry = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(entry, `no 422 entry at ${JSON.stringify(loc)} in ${JSON.stringify(detail)}`).toBeDefined();
  expect(typeof entry!.msg).toBe('string');
  expect(typeof entry!.type).toBe('string');
  return entry!;
}

describe('create a project', () => {
  it('creates a project (201) with the documented fields and the default retention', async () => {
    const owner = await signUp(h(), 'creator');
    const name = projectName();
    const res = await postProject(owner.token, { name, workspace_id: owner.workspace.id });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ created: true, id: expect.any(String), name, workspace_id: owner.workspace.id });
    const { rows } = await h().ctx.pg.pool.query(
      'SELECT workspace_id, name, trace_ttl_days, deleted_at FROM projects WHERE id = $1',
      [body.id],
    );
    expect(rows).toEqual([{ workspace_id: owner.workspace.id, name, trace_ttl_days: 30, deleted_at: null }]);
  });

  it('stores trace_ttl_days at its bounds 1 and 3650', async () => {
    const owner = await signUp(h(), 'ttl');
    for (const ttl of [1, 3650]) {
      const res = await postProject(owner.token, {
        name: projectName(),
        workspace_id: owner.workspace.id,
        trace_ttl_days: ttl,
      });
      expect(res.statusCode).toBe(201);
      const { rows } = await h().ctx.pg.pool.query('SELECT trace_ttl_days FROM projects WHERE id = $1', [
        res.json().id,
      ]);
      expect(rows[0].trace_ttl_days).toBe(ttl);
    }
  });

  it('is idempotent on the name within the workspace: the second call answers the same project with created:false', async () => {
    const owner = await signUp(h(), 'idem');
    const name = projectName();
    const first = await postProject(owner.token, { name, workspace_id: owner.workspace.id });
    expect(first.statusCode).toBe(201);
    const second = await postProject(owner.token, { name, workspace_id: owner.workspace.id, trace_ttl_days: 90 });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toEqual({ created: false, id: first.json().id, name, workspace_id: owner.workspace.id });
    const { rows } = await h().ctx.pg.pool.query(
      'SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1 AND name = $2',
      [owner.workspace.id, name],
    );
    expect(rows[0].n).toBe(1);
  });

  it('stays idempotent under concurrent creates of the same name: one project, one created:true', async () => {
    const owner = await signUp(h(), 'race');
    const name = projectName();
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => postProject(owner.token, { name, workspace_id: owner.workspace.id })),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.json().id)).size).toBe(1);
    expect(answers.filter((a) => a.json().created === true)).toHaveLength(1);
    const { rows } = await h().ctx.pg.pool.query(
      'SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1 AND name = $2',
      [owner.workspace.id, name],
    );
    expect(rows[0].n).toBe(1);
  });

  it('creates a new project for the same name in another workspace', async () => {
    const owner = await signUp(h(), 'twows');
    const other = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: owner.token,
      payload: { name: `second-${crypto.randomBytes(3).toString('hex')}` },
    });
    expect(other.statusCode).toBe(201);
    const name = projectName();
    const a = await postProject(owner.token, { name, workspace_id: owner.workspace.id });
    const b = await postProject(owner.token, { name, workspace_id: other.json().id });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.json()).toMatchObject({ created: true, name, workspace_id: other.json().id });
    expect(b.json().id).not.toBe(a.json().id);
  });

  it.each([0, 3651, 1.5, -1])('rejects trace_ttl_days %s with 422 at body.trace_ttl_days', async (ttl) => {
    const owner = await signUp(h(), 'badttl');
    const name = projectName();
    const res = await postProject(owner.token, { name, workspace_id: owner.workspace.id, trace_ttl_days: ttl });
    expectValidationAt(res, ['body', 'trace_ttl_days']);
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM projects WHERE name = $1', [name]);
    expect(rows[0].n).toBe(0);
  });

  it('rejects a missing name with 422 type missing at body.name', async () => {
    const owner = await signUp(h(), 'noname');
    const res = await postProject(owner.token, { workspace_id: owner.workspace.id });
    const entry = expectValidationAt(res, ['body', 'name']);
    expect(entry.type).toBe('missing');
  });

  it('rejects a blank name with 422 at body.name', async () => {
    const owner = await signUp(h(), 'blank');
    const res = await postProject(owner.token, { name: '   ', workspace_id: owner.workspace.id });
    expectValidationAt(res, ['body', 'name']);
  });

  it('refuses a VIEWER with 403 and creates nothing', async () => {
    const owner = await signUp(h(), 'owner');
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const name = projectName();
    const res = await postProject(viewer.token, { name, workspace_id: owner.workspace.id });
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM projects WHERE name = $1', [name]);
    expect(rows[0].n).toBe(0);
  });

  it('lets a MEMBER create a project', async () => {
    const owner = await signUp(h(), 'owner');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const res = await postProject(member.token, { name: projectName(), workspace_id: owner.workspace.id });
    expect(res.statusCode).toBe(201);
    expect(res.json().workspace_id).toBe(owner.workspace.id);
  });

  it('refuses a workspace the caller is not a member of with 403', async () => {
    const owner = await signUp(h(), 'owner');
    const stranger = await signUp(h(), 'stranger');
    const name = projectName();
    const res = await postProject(stranger.token, { name, workspace_id: owner.workspace.id });
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM projects WHERE name = $1', [name]);
    expect(rows[0].n).toBe(0);
  });

  it('answers 404 for an unknown workspace', async () => {
    const owner = await signUp(h(), 'owner');
    const res = await postProject(owner.token, { name: projectName(), workspace_id: crypto.randomUUID() });
    expect(res.statusCode).toBe(404);
    expect(typeof res.json().detail).toBe('string');
  });

  it('refuses an API key with 403', async () => {
    const { owner, key } = await projectWithKey(h());
    const res = await postProject(key.key, { name: projectName(), workspace_id: owner.workspace.id });
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toBe('this operation requires a user login; API keys are project-scoped');
  });
});

describe('list projects', () => {
  it('lists the projects of every workspace the user belongs to, with workspace_name, and filters by workspace_id', async () => {
    const alice = await signUp(h(), 'alice');
    const bob = await signUp(h(), 'bob');
    const second = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: alice.token,
      payload: { name: `alice-two-${crypto.randomBytes(3).toString('hex')}` },
    });
    expect(second.statusCode).toBe(201);
    await memberWithRole(h(), bob, bob.workspace.id, 'VIEWER'); // noise: someone else in bob's workspace
    // alice becomes a VIEWER in bob's workspace
    const add = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${bob.workspace.id}/members`,
      token: bob.token,
      payload: { email: alice.user.email, role: 'VIEWER' },
    });
    expect(add.statusCode).toBe(201);

    const a1 = await createProject(h(), alice.token, alice.workspace.id);
    const a2 = await createProject(h(), alice.token, second.json().id);
    const b1 = await createProject(h(), bob.token, bob.workspace.id);
    const stranger = await signUp(h(), 'stranger');
    const s1 = await createProject(h(), stranger.token, stranger.workspace.id);

    const res = await listProjects(alice.token);
    expect(res.statusCode).toBe(200);
    const data = res.json().data as { id: string; name: string; workspace_id: string; workspace_name: string }[];
    expect(data).toHaveLength(3);
    expect(data).toEqual(
      expect.arrayContaining([
        { id: a1.id, name: a1.name, workspace_id: alice.workspace.id, workspace_name: alice.workspace.name },
        { id: a2.id, name: a2.name, workspace_id: second.json().id, workspace_name: second.json().name },
        { id: b1.id, name: b1.name, workspace_id: bob.workspace.id, workspace_name: bob.workspace.name },
      ]),
    );
    expect(data.map((p) => p.id)).not.toContain(s1.id);

    const filtered = await listProjects(alice.token, { workspace_id: bob.workspace.id });
    expect(filtered.statusCode).toBe(200);
    expect(filtered.json()).toEqual({
      data: [{ id: b1.id, name: b1.name, workspace_id: bob.workspace.id, workspace_name: bob.workspace.name }],
    });

    // A workspace outside the user's memberships yields nothing of it.
    const outside = await listProjects(alice.token, { workspace_id: stranger.workspace.id });
    expect(outside.statusCode).toBe(200);
    expect(outside.json().data).toEqual([]);

    // The stranger sees only their own.
    const theirs = await listProjects(stranger.token);
    expect(theirs.json().data.map((p: { id: string }) => p.id)).toEqual([s1.id]);
  });

  it('answers an empty list for a user without projects', async () => {
    const user = await signUp(h(), 'empty');
    const res = await listProjects(user.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [] });
  });

  it('refuses an API key with 403 and an unauthenticated call with 401', async () => {
    const { key } = await projectWithKey(h());
    const res = await listProjects(key.key);
    expect(res.statusCode).toBe(403);
    expect(res.json().detail).toBe('this operation requires a user login; API keys are project-scoped');
    const anon = await call(h().api, { method: 'GET', url: `${PUBLIC}/projects` });
    expect(anon.statusCode).toBe(401);
    expect(typeof anon.json().detail).toBe('string');
  });
});

describe('delete a project', () => {
  it('rejects a reason shorter than 3 or longer than 500 characters, or none, with 422 at query.reason', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    expectValidationAt(await deleteProject(owner.token, project.id, { reason: 'ab' }), ['query', 'reason']);
    expectValidationAt(await deleteProject(owner.token, project.id, { reason: '   ab   ' }), ['query', 'reason']);
    expectValidationAt(await deleteProject(owner.token, project.id, { reason: 'x'.repeat(501) }), ['query', 'reason']);
    const missing = expectValidationAt(await deleteProject(owner.token, project.id, {}), ['query', 'reason']);
    expect(missing.type).toBe('missing');
    // Nothing was deleted by the refused calls.
    const list = await listProjects(owner.token);
    expect(list.json().data.map((p: { id: string }) => p.id)).toContain(project.id);
  });

  it('accepts reasons of exactly 3 and 500 characters', async () => {
    const owner = await signUp(h(), 'owner');
    const p1 = await createProject(h(), owner.token, owner.workspace.id);
    const p2 = await createProject(h(), owner.token, owner.workspace.id);
    const short = await deleteProject(owner.token, p1.id, { reason: 'abc' });
    expect(short.statusCode).toBe(200);
    expect(short.json().reason).toBe('abc');
    const long = await deleteProject(owner.token, p2.id, { reason: 'y'.repeat(500) });
    expect(long.statusCode).toBe(200);
    expect(long.json().reason).toBe('y'.repeat(500));
  });

  it('refuses a MEMBER (not ADMIN) with 403 and leaves the project in place', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const key = await createApiKey(h(), owner.token, project.id);
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const res = await deleteProject(member.token, project.id);
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
    expect((await whoami(key.key)).statusCode).toBe(200);
    const { rows } = await h().ctx.pg.pool.query('SELECT deleted_at FROM projects WHERE id = $1', [project.id]);
    expect(rows[0].deleted_at).toBeNull();
  });

  it('refuses a user outside the workspace with 403', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const stranger = await signUp(h(), 'stranger');
    const res = await deleteProject(stranger.token, project.id);
    expect(res.statusCode).toBe(403);
    const { rows } = await h().ctx.pg.pool.query('SELECT deleted_at FROM projects WHERE id = $1', [project.id]);
    expect(rows[0].deleted_at).toBeNull();
  });

  it('answers 404 for an unknown project id', async () => {
    const owner = await signUp(h(), 'owner');
    const res = await deleteProject(owner.token, crypto.randomUUID());
    expect(res.statusCode).toBe(404);
    expect(typeof res.json().detail).toBe('string');
    const notUuid = await deleteProject(owner.token, 'not-a-project');
    expect(notUuid.statusCode).toBe(404);
  });

  it('refuses an API key with 403, even for its own project', async () => {
    const { project, key } = await projectWithKey(h());
    const res = await deleteProject(key.key, project.id);
    expect(res.statusCode).toBe(403);
    expect((await whoami(key.key)).statusCode).toBe(200);
  });

  it('soft-deletes for an ADMIN: answer, gone from the list, key stops, second delete 404, audit row, name reusable', async () => {
    const { owner, project, key } = await projectWithKey(h(), 'admin');
    const keep = await createProject(h(), owner.token, owner.workspace.id);
    const reason = 'migrated to a new project';
    // In use first: this process keeps it verified (src/auth/key-cache.ts), and the delete drops it.
    expect((await whoami(key.key)).statusCode).toBe(200);

    const res = await deleteProject(owner.token, project.id, { reason });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ deleted: true, project: { id: project.id, name: project.name }, reason });

    const list = await listProjects(owner.token);
    const ids = list.json().data.map((p: { id: string }) => p.id);
    expect(ids).not.toContain(project.id);
    expect(ids).toContain(keep.id);

    expect((await whoami(key.key)).statusCode).toBe(401);

    const again = await deleteProject(owner.token, project.id, { reason });
    expect(again.statusCode).toBe(404);

    // Its key list (a read on the project) is gone too.
    const keys = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token: owner.token,
    });
    expect(keys.statusCode).toBe(404);

    // Soft delete: the row is kept, marked deleted.
    const { rows: projectRows } = await h().ctx.pg.pool.query('SELECT deleted_at FROM projects WHERE id = $1', [
      project.id,
    ]);
    expect(projectRows).toHaveLength(1);
    expect(projectRows[0].deleted_at).not.toBeNull();

    const { rows: audit } = await h().ctx.pg.pool.query(
      `SELECT actor_user_id, action, target_type, target_name, reason FROM audit_log WHERE target_type = 'project' AND target_id = $1`,
      [project.id],
    );
    expect(audit).toEqual([
      { actor_user_id: owner.user.id, action: 'delete', target_type: 'project', target_name: project.name, reason },
    ]);

    const recreated = await postProject(owner.token, { name: project.name, workspace_id: owner.workspace.id });
    expect(recreated.statusCode).toBe(201);
    expect(recreated.json()).toMatchObject({ created: true, name: project.name, workspace_id: owner.workspace.id });
    expect(recreated.json().id).not.toBe(project.id);
    // The old key does not come back with the new project of the same name.
    expect((await whoami(key.key)).statusCode).toBe(401);
  });

  it('lets an ADMIN who was added later (not the creator) delete', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const admin = await memberWithRole(h(), owner, owner.workspace.id, 'ADMIN');
    const res = await deleteProject(admin.token, project.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().deleted).toBe(true);
    const { rows } = await h().ctx.pg.pool.query(
      `SELECT actor_user_id FROM audit_log WHERE target_type = 'project' AND target_id = $1`,
      [project.id],
    );
    expect(rows).toEqual([{ actor_user_id: admin.user.id }]);
  });
});
