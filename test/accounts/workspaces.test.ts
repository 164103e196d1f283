import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DELETIONS_QUEUE, type PurgeProjectsJob } from '../../src/deletions/service.js';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness, type SignedUp } from '../support/harness.js';

const h = useHarness();

type Role = 'VIEWER' | 'MEMBER' | 'ADMIN';

const wsName = (label = 'ws') => `${label}-${crypto.randomBytes(5).toString('hex')}`;

async function newWorkspace(token: string, name = wsName()) {
  const res = await call(h().api, { method: 'POST', url: `${PUBLIC}/workspaces`, token, payload: { name } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string };
}

function listWorkspaces(token: string) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token });
}

function listMembers(token: string, workspaceId: string) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces/${workspaceId}/members`, token });
}

function addMember(token: string, workspaceId: string, email: string, role: Role) {
  return call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/workspaces/${workspaceId}/members`,
    token,
    payload: { email, role },
  });
}

function patchMember(token: string, workspaceId: string, userId: string, role: Role) {
  return call(h().api, {
    method: 'PATCH',
    url: `${PUBLIC}/workspaces/${workspaceId}/members/${userId}`,
    token,
    payload: { role },
  });
}

function removeMember(token: string, workspaceId: string, userId: string) {
  return call(h().api, { method: 'DELETE', url: `${PUBLIC}/workspaces/${workspaceId}/members/${userId}`, token });
}

function deleteWorkspace(token: string, workspaceId: string, query: Record<string, string>) {
  return call(h().api, { method: 'DELETE', url: `${PUBLIC}/workspaces/${workspaceId}`, token, query });
}

function whoami(key: string) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key });
}

async function withMember(admin: SignedUp, workspaceId: string, role: Role, label = role.toLowerCase()) {
  const user = await signUp(h(), label);
  const res = await addMember(admin.token, workspaceId, user.user.email, role);
  expect(res.statusCode).toBe(201);
  return user;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await h().ctx.pg.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

async function roleOf(workspaceId: string, userId: string): Promise<string | undefined> {
  const { rows } = await h().ctx.pg.pool.query<{ role: string }>(
    'SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2',
    [workspaceId, userId],
  );
  return rows[0]?.role;
}

function expect422At(res: { statusCode: number; json(): any }, loc: (string | number)[]) {
  expect(res.statusCode).toBe(422);
  const detail = res.json().detail as { loc: unknown[]; type: string }[];
  const entry = detail.find((d) => JSON.stringify(d.loc) === JSON.stringify(loc));
  expect(entry, `no 422 entry at ${JSON.stringify(loc)} in ${JSON.stringify(detail)}`).toBeDefined();
  return entry!;
}

describe('list and create workspaces', () => {
  it('lists the workspaces of the caller with their role', async () => {
    const alice = await signUp(h(), 'alice');
    const bob = await signUp(h(), 'bob');
    await addMember(bob.token, bob.workspace.id, alice.user.email, 'VIEWER');
    const res = await listWorkspaces(alice.token);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      data: [
        { id: alice.workspace.id, name: alice.workspace.name, role: 'ADMIN' },
        { id: bob.workspace.id, name: bob.workspace.name, role: 'VIEWER' },
      ],
    });
    const bobs = await listWorkspaces(bob.token);
    expect(bobs.json().data).toEqual([{ id: bob.workspace.id, name: bob.workspace.name, role: 'ADMIN' }]);
  });

  it('creates a workspace (201 {id, name}) whose creator is its ADMIN', async () => {
    const alice = await signUp(h(), 'alice');
    const name = wsName('created');
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: alice.token,
      payload: { name },
    });
    expect(res.statusCode).toBe(201);
    const ws = res.json();
    expect(ws).toEqual({ id: expect.any(String), name });
    const list = await listWorkspaces(alice.token);
    expect(list.json().data).toContainEqual({ id: ws.id, name, role: 'ADMIN' });
    const members = await listMembers(alice.token, ws.id);
    expect(members.json()).toEqual({
      data: [{ user_id: alice.user.id, email: alice.user.email, name: alice.user.name, role: 'ADMIN' }],
    });
  });

  it('rejects a workspace without a name with 422 at body.name', async () => {
    const alice = await signUp(h(), 'alice');
    const missing = expect422At(
      await call(h().api, { method: 'POST', url: `${PUBLIC}/workspaces`, token: alice.token, payload: {} }),
      ['body', 'name'],
    );
    expect(missing.type).toBe('missing');
    expect422At(
      await call(h().api, { method: 'POST', url: `${PUBLIC}/workspaces`, token: alice.token, payload: { name: '  ' } }),
      ['body', 'name'],
    );
  });

  it('refuses an API key with 403 on workspace routes', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const key = await createApiKey(h(), owner.token, project.id);
    expect((await listWorkspaces(key.key)).statusCode).toBe(403);
    const create = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: key.key,
      payload: { name: wsName() },
    });
    expect(create.statusCode).toBe(403);
    expect(create.json().detail).toBe('this operation requires a user login; API keys are project-scoped');
    expect(
      (await deleteWorkspace(key.key, owner.workspace.id, { name: owner.workspace.name, reason: 'api key tries' }))
        .statusCode,
    ).toBe(403);
  });
});

describe('workspace members', () => {
  it('lists members for any member (VIEWER included) and refuses outsiders with 403', async () => {
    const owner = await signUp(h(), 'owner');
    const viewer = await withMember(owner, owner.workspace.id, 'VIEWER');
    const res = await listMembers(viewer.token, owner.workspace.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([
      { user_id: owner.user.id, email: owner.user.email, name: owner.user.name, role: 'ADMIN' },
      { user_id: viewer.user.id, email: viewer.user.email, name: viewer.user.name, role: 'VIEWER' },
    ]);
    const stranger = await signUp(h(), 'stranger');
    expect((await listMembers(stranger.token, owner.workspace.id)).statusCode).toBe(403);
    expect((await listMembers(owner.token, crypto.randomUUID())).statusCode).toBe(404);
  });

  it('adds an existing user by e-mail (ADMIN), case-insensitively', async () => {
    const owner = await signUp(h(), 'owner');
    const newcomer = await signUp(h(), 'newcomer');
    const res = await addMember(owner.token, owner.workspace.id, `  ${newcomer.user.email.toUpperCase()} `, 'MEMBER');
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      user_id: newcomer.user.id,
      email: newcomer.user.email,
      name: newcomer.user.name,
      role: 'MEMBER',
    });
    expect(await roleOf(owner.workspace.id, newcomer.user.id)).toBe('MEMBER');
    // The newcomer now sees the workspace.
    expect((await listWorkspaces(newcomer.token)).json().data).toContainEqual({
      id: owner.workspace.id,
      name: owner.workspace.name,
      role: 'MEMBER',
    });
  });

  it('answers 404 for an unknown e-mail and 409 for an existing member', async () => {
    const owner = await signUp(h(), 'owner');
    const unknown = await addMember(
      owner.token,
      owner.workspace.id,
      `nobody-${crypto.randomBytes(6).toString('hex')}@example.test`,
      'MEMBER',
    );
    expect(unknown.statusCode).toBe(404);
    expect(typeof unknown.json().detail).toBe('string');

    const member = await withMember(owner, owner.workspace.id, 'VIEWER');
    const again = await addMember(owner.token, owner.workspace.id, member.user.email, 'ADMIN');
    expect(again.statusCode).toBe(409);
    expect(typeof again.json().detail).toBe('string');
    // The refused add did not change the existing role.
    expect(await roleOf(owner.workspace.id, member.user.id)).toBe('VIEWER');

    const self = await addMember(owner.token, owner.workspace.id, owner.user.email, 'VIEWER');
    expect(self.statusCode).toBe(409);
    expect(await roleOf(owner.workspace.id, owner.user.id)).toBe('ADMIN');
  });

  it('refuses a MEMBER adding someone with 403, and a non-member with 403', async () => {
    const owner = await signUp(h(), 'owner');
    const member = await withMember(owner, owner.workspace.id, 'MEMBER');
    const target = await signUp(h(), 'target');
    const res = await addMember(member.token, owner.workspace.id, target.user.email, 'VIEWER');
    expect(res.statusCode).toBe(403);
    expect(await roleOf(owner.workspace.id, target.user.id)).toBeUndefined();
    const stranger = await signUp(h(), 'stranger');
    expect((await addMember(stranger.token, owner.workspace.id, target.user.email, 'VIEWER')).statusCode).toBe(403);
    expect(await roleOf(owner.workspace.id, target.user.id)).toBeUndefined();
  });

  it('rejects an unknown role with 422 at body.role', async () => {
    const owner = await signUp(h(), 'owner');
    const target = await signUp(h(), 'target');
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${owner.workspace.id}/members`,
      token: owner.token,
      payload: { email: target.user.email, role: 'OWNER' },
    });
    expect422At(res, ['body', 'role']);
  });

  it('changes a role (ADMIN only); the last ADMIN cannot be demoted (409); a non-member target is 404', async () => {
    const owner = await signUp(h(), 'owner');
    const member = await withMember(owner, owner.workspace.id, 'MEMBER');

    const lastAdmin = await patchMember(owner.token, owner.workspace.id, owner.user.id, 'MEMBER');
    expect(lastAdmin.statusCode).toBe(409);
    expect(typeof lastAdmin.json().detail).toBe('string');
    expect(await roleOf(owner.workspace.id, owner.user.id)).toBe('ADMIN');

    const stranger = await signUp(h(), 'stranger');
    expect((await patchMember(owner.token, owner.workspace.id, stranger.user.id, 'VIEWER')).statusCode).toBe(404);
    expect((await patchMember(owner.token, owner.workspace.id, crypto.randomUUID(), 'VIEWER')).statusCode).toBe(404);
    expect((await patchMember(owner.token, owner.workspace.id, 'not-a-user', 'VIEWER')).statusCode).toBe(404);

    // A MEMBER cannot change roles, not even their own.
    expect((await patchMember(member.token, owner.workspace.id, member.user.id, 'ADMIN')).statusCode).toBe(403);
    expect(await roleOf(owner.workspace.id, member.user.id)).toBe('MEMBER');

    const promote = await patchMember(owner.token, owner.workspace.id, member.user.id, 'ADMIN');
    expect(promote.statusCode).toBe(200);
    expect(promote.json()).toMatchObject({ user_id: member.user.id, role: 'ADMIN' });
    expect(await roleOf(owner.workspace.id, member.user.id)).toBe('ADMIN');

    // With a second ADMIN the first may step down.
    const demote = await patchMember(owner.token, owner.workspace.id, owner.user.id, 'VIEWER');
    expect(demote.statusCode).toBe(200);
    expect(await roleOf(owner.workspace.id, owner.user.id)).toBe('VIEWER');
    // ...and is now refused ADMIN operations.
    expect((await patchMember(owner.token, owner.workspace.id, member.user.id, 'MEMBER')).statusCode).toBe(403);
    // The remaining (last) ADMIN cannot demote themselves.
    expect((await patchMember(member.token, owner.workspace.id, member.user.id, 'MEMBER')).statusCode).toBe(409);
  });

  it('keeps one ADMIN when two ADMINs demote themselves at the same time', async () => {
    const owner = await signUp(h(), 'owner');
    const other = await withMember(owner, owner.workspace.id, 'ADMIN');
    const answers = await Promise.all([
      patchMember(owner.token, owner.workspace.id, owner.user.id, 'VIEWER'),
      patchMember(other.token, owner.workspace.id, other.user.id, 'VIEWER'),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 409]);
    expect(
      await count(`SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1 AND role = 'ADMIN'`, [
        owner.workspace.id,
      ]),
    ).toBe(1);
  });

  it('removes a member (ADMIN only); the last ADMIN cannot be removed (409)', async () => {
    const owner = await signUp(h(), 'owner');
    const member = await withMember(owner, owner.workspace.id, 'MEMBER');
    const viewer = await withMember(owner, owner.workspace.id, 'VIEWER');

    const last = await removeMember(owner.token, owner.workspace.id, owner.user.id);
    expect(last.statusCode).toBe(409);
    expect(await roleOf(owner.workspace.id, owner.user.id)).toBe('ADMIN');

    expect((await removeMember(member.token, owner.workspace.id, viewer.user.id)).statusCode).toBe(403);
    expect(await roleOf(owner.workspace.id, viewer.user.id)).toBe('VIEWER');

    const stranger = await signUp(h(), 'stranger');
    expect((await removeMember(owner.token, owner.workspace.id, stranger.user.id)).statusCode).toBe(404);

    const res = await removeMember(owner.token, owner.workspace.id, viewer.user.id);
    expect(res.statusCode).toBe(200);
    expect(await roleOf(owner.workspace.id, viewer.user.id)).toBeUndefined();
    expect((await listMembers(viewer.token, owner.workspace.id)).statusCode).toBe(403);
    expect((await removeMember(owner.token, owner.workspace.id, viewer.user.id)).statusCode).toBe(404);
  });
});

describe('delete a workspace', () => {
  /** An owner with a spare workspace (so the target is not their only one) holding 2 projects with keys and a second member. */
  async function populated() {
    const owner = await signUp(h(), 'owner');
    const target = await newWorkspace(owner.token, wsName('doomed'));
    const p1 = await createProject(h(), owner.token, target.id);
    const p2 = await createProject(h(), owner.token, target.id);
    const k1 = await createApiKey(h(), owner.token, p1.id);
    const k2 = await createApiKey(h(), owner.token, p2.id);
    const k3 = await createApiKey(h(), owner.token, p2.id, { name: 'second key' });
    const member = await withMember(owner, target.id, 'MEMBER');
    // An outstanding invite (no public route creates one; written straight to the store).
    await h().ctx.pg.pool.query(
      `INSERT INTO invites (id, workspace_id, email, role, invited_by) VALUES ($1, $2, $3, 'VIEWER', $4)`,
      [crypto.randomUUID(), target.id, `invitee-${crypto.randomBytes(4).toString('hex')}@example.test`, owner.user.id],
    );
    // Something outside the target that must survive.
    const bystander = await createProject(h(), owner.token, owner.workspace.id);
    const bystanderKey = await createApiKey(h(), owner.token, bystander.id);
    return { owner, target, projects: [p1, p2], keys: [k1, k2, k3], member, bystander, bystanderKey };
  }

  async function expectIntact(w: Awaited<ReturnType<typeof populated>>) {
    expect(await count('SELECT count(*)::int AS n FROM workspaces WHERE id = $1', [w.target.id])).toBe(1);
    expect(
      await count('SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1 AND deleted_at IS NULL', [
        w.target.id,
      ]),
    ).toBe(2);
    expect(await count('SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1', [w.target.id])).toBe(2);
    expect(await count('SELECT count(*)::int AS n FROM invites WHERE workspace_id = $1', [w.target.id])).toBe(1);
    for (const key of w.keys) expect((await whoami(key.key)).statusCode).toBe(200);
    expect(
      await count(`SELECT count(*)::int AS n FROM audit_log WHERE target_type = 'workspace' AND target_id = $1`, [
        w.target.id,
      ]),
    ).toBe(0);
  }

  it('rejects a missing name or a too short reason with 422', async () => {
    const w = await populated();
    const noName = expect422At(await deleteWorkspace(w.owner.token, w.target.id, { reason: 'cleaning up' }), [
      'query',
      'name',
    ]);
    expect(noName.type).toBe('missing');
    expect422At(await deleteWorkspace(w.owner.token, w.target.id, { name: w.target.name, reason: 'ab' }), [
      'query',
      'reason',
    ]);
    expect422At(await deleteWorkspace(w.owner.token, w.target.id, { name: w.target.name, reason: 'z'.repeat(501) }), [
      'query',
      'reason',
    ]);
    expect422At(await deleteWorkspace(w.owner.token, w.target.id, { name: w.target.name }), ['query', 'reason']);
    await expectIntact(w);
  });

  it('answers 400 for a wrong name and changes nothing', async () => {
    const w = await populated();
    const res = await deleteWorkspace(w.owner.token, w.target.id, { name: `${w.target.name}x`, reason: 'cleaning up' });
    expect(res.statusCode).toBe(400);
    expect(typeof res.json().detail).toBe('string');
    const caseDiff = await deleteWorkspace(w.owner.token, w.target.id, {
      name: w.target.name.toUpperCase(),
      reason: 'cleaning up',
    });
    expect(caseDiff.statusCode).toBe(400);
    const empty = await deleteWorkspace(w.owner.token, w.target.id, { name: '', reason: 'cleaning up' });
    expect(empty.statusCode).toBe(400);
    await expectIntact(w);
  });

  it('refuses a non-ADMIN member with 403 and changes nothing', async () => {
    const w = await populated();
    const res = await deleteWorkspace(w.member.token, w.target.id, {
      name: w.target.name,
      reason: 'not mine to delete',
    });
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
    await expectIntact(w);
  });

  it("refuses a workspace outside the caller's memberships with 403 and changes nothing", async () => {
    const w = await populated();
    const stranger = await signUp(h(), 'stranger');
    await newWorkspace(stranger.token); // so "only workspace" is not what stops them
    const res = await deleteWorkspace(stranger.token, w.target.id, {
      name: w.target.name,
      reason: 'not mine to delete',
    });
    expect(res.statusCode).toBe(403);
    await expectIntact(w);
  });

  it('answers 404 for an unknown workspace', async () => {
    const owner = await signUp(h(), 'owner');
    await newWorkspace(owner.token);
    const res = await deleteWorkspace(owner.token, crypto.randomUUID(), { name: 'whatever', reason: 'cleaning up' });
    expect(res.statusCode).toBe(404);
    expect(typeof res.json().detail).toBe('string');
    expect(
      (await deleteWorkspace(owner.token, 'not-a-uuid', { name: 'whatever', reason: 'cleaning up' })).statusCode,
    ).toBe(404);
  });

  it("refuses the caller's only workspace with 409 and changes nothing", async () => {
    const owner = await signUp(h(), 'solo');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const key = await createApiKey(h(), owner.token, project.id);
    const member = await withMember(owner, owner.workspace.id, 'VIEWER');
    const res = await deleteWorkspace(owner.token, owner.workspace.id, {
      name: owner.workspace.name,
      reason: 'start over',
    });
    expect(res.statusCode).toBe(409);
    expect(typeof res.json().detail).toBe('string');
    expect(await count('SELECT count(*)::int AS n FROM workspaces WHERE id = $1', [owner.workspace.id])).toBe(1);
    expect(
      await count('SELECT count(*)::int AS n FROM projects WHERE id = $1 AND deleted_at IS NULL', [project.id]),
    ).toBe(1);
    expect(await roleOf(owner.workspace.id, owner.user.id)).toBe('ADMIN');
    expect(await roleOf(owner.workspace.id, member.user.id)).toBe('VIEWER');
    expect((await whoami(key.key)).statusCode).toBe(200);
    expect((await listWorkspaces(owner.token)).json().data).toEqual([
      { id: owner.workspace.id, name: owner.workspace.name, role: 'ADMIN' },
    ]);
  });

  it('hard-deletes with its cascade, answers the counts and writes an audit row', async () => {
    const w = await populated();
    const reason = 'project retired for good';
    // In use first: this process keeps them verified (src/auth/key-cache.ts), and the delete drops them.
    for (const key of w.keys) expect((await whoami(key.key)).statusCode).toBe(200);
    const res = await deleteWorkspace(w.owner.token, w.target.id, { name: w.target.name, reason });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      deleted: true,
      reason,
      workspace: { id: w.target.id, name: w.target.name },
      cascaded: { projects: 2, api_keys: 3, memberships: 2, invites: 1 },
    });

    expect(await count('SELECT count(*)::int AS n FROM workspaces WHERE id = $1', [w.target.id])).toBe(0);
    expect(
      await count('SELECT count(*)::int AS n FROM projects WHERE id = ANY($1::uuid[])', [w.projects.map((p) => p.id)]),
    ).toBe(0);
    expect(
      await count('SELECT count(*)::int AS n FROM api_keys WHERE id = ANY($1::uuid[])', [w.keys.map((k) => k.id)]),
    ).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1', [w.target.id])).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM invites WHERE workspace_id = $1', [w.target.id])).toBe(0);
    for (const key of w.keys) expect((await whoami(key.key)).statusCode).toBe(401);

    // Gone from every list of both former members.
    expect((await listWorkspaces(w.owner.token)).json().data.map((x: { id: string }) => x.id)).not.toContain(
      w.target.id,
    );
    expect((await listWorkspaces(w.member.token)).json().data.map((x: { id: string }) => x.id)).not.toContain(
      w.target.id,
    );
    const projects = (await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: w.owner.token }))
      .json()
      .data.map((p: { id: string }) => p.id);
    expect(projects).toEqual([w.bystander.id]);

    // The owner's other workspace is untouched.
    expect((await whoami(w.bystanderKey.key)).statusCode).toBe(200);
    expect(await roleOf(w.owner.workspace.id, w.owner.user.id)).toBe('ADMIN');

    const { rows: audit } = await h().ctx.pg.pool.query(
      `SELECT actor_user_id, action, target_name, reason, details FROM audit_log WHERE target_type = 'workspace' AND target_id = $1`,
      [w.target.id],
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor_user_id: w.owner.user.id,
      action: 'delete',
      target_name: w.target.name,
      reason,
    });
    expect(audit[0].details).toMatchObject({ cascaded: { projects: 2, api_keys: 3, memberships: 2, invites: 1 } });

    // The ClickHouse rows of its projects are handed to the deletions worker.
    const ids = w.projects.map((p) => p.id).sort();
    const job = await h()
      .ctx.queue.queue<PurgeProjectsJob>(DELETIONS_QUEUE)
      .getJob(`purge-${ids.join(',').slice(0, 200)}`);
    expect(job?.data.project_ids.slice().sort()).toEqual(ids);

    // A second delete finds nothing.
    const again = await deleteWorkspace(w.owner.token, w.target.id, { name: w.target.name, reason });
    expect(again.statusCode).toBe(404);
  });

  it('lets any ADMIN of the workspace delete it, not only its creator', async () => {
    const creator = await signUp(h(), 'creator');
    const ws = await newWorkspace(creator.token);
    const coAdmin = await withMember(creator, ws.id, 'ADMIN');
    const res = await deleteWorkspace(coAdmin.token, ws.id, { name: ws.name, reason: 'co-admin cleans up' });
    expect(res.statusCode).toBe(200);
    expect(res.json().cascaded).toEqual({ projects: 0, api_keys: 0, memberships: 2, invites: 0 });
    // The creator still has their signup workspace.
    expect((await listWorkspaces(creator.token)).json().data).toEqual([
      { id: creator.workspace.id, name: creator.workspace.name, role: 'ADMIN' },
    ]);
  });
});
