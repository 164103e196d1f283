import { describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';

const h = useHarness();

describe('GET and PATCH /projects/{project_id} (the settings page)', () => {
  it('reads the project with its retention and the caller role, and lets an ADMIN change the retention', async () => {
    const owner = await signUp(h(), 'settings');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const read = await call(h().api, { method: 'GET', url: `${PUBLIC}/projects/${project.id}`, token: owner.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      id: project.id,
      name: project.name,
      workspace_id: owner.workspace.id,
      trace_ttl_days: 30,
      role: 'ADMIN',
    });

    const key = await createApiKey(h(), owner.token, project.id, { name: 'in use' });
    const whoami = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
    const patched = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/projects/${project.id}`,
      token: owner.token,
      payload: { trace_ttl_days: 90, name: 'renamed' },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ name: 'renamed', trace_ttl_days: 90 });
    // A key in use before (kept verified by this process, src/auth/key-cache.ts) sees the change at once.
    expect(whoami.json().project_name).toBe(project.name);
    const after = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
    expect(after.json().project_name).toBe('renamed');
    const bad = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/projects/${project.id}`,
      token: owner.token,
      payload: { trace_ttl_days: 0 },
    });
    expect(bad.statusCode).toBe(422);
  });

  it('refuses a MEMBER changing the retention (ADMIN only), allows the rename, and answers 409 for a taken name', async () => {
    const owner = await signUp(h(), 'owner');
    const member = await signUp(h(), 'member');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const other = await createProject(h(), owner.token, owner.workspace.id);
    const added = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${owner.workspace.id}/members`,
      token: owner.token,
      payload: { email: member.user.email, role: 'MEMBER' },
    });
    expect(added.statusCode).toBe(201);
    const ttl = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/projects/${project.id}`,
      token: member.token,
      payload: { trace_ttl_days: 7 },
    });
    expect(ttl.statusCode).toBe(403);
    const rename = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/projects/${project.id}`,
      token: member.token,
      payload: { name: 'by member' },
    });
    expect(rename.statusCode).toBe(200);
    const taken = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/projects/${project.id}`,
      token: member.token,
      payload: { name: other.name },
    });
    expect(taken.statusCode).toBe(409);
    const outsider = await signUp(h(), 'outsider');
    expect(
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/projects/${project.id}`, token: outsider.token }))
        .statusCode,
    ).toBe(403);
  });
});
