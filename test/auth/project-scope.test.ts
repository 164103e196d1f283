import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createServer, typed } from '../../src/http.js';
import { authenticate, principalOf } from '../../src/auth/principal.js';
import { PROJECT_ID_REQUIRED_DETAIL, resolveReadProject } from '../../src/auth/access.js';
import { call, createApiKey, createProject, projectWithKey, PUBLIC, signUp, useHarness } from '../support/harness.js';

const h = useHarness();

/**
 * No project-scoped read route exists yet; this stands in for one, built the way they are: the
 * shared `authenticate(ctx, 'any')` hook and `resolveReadProject`.
 */
let app: FastifyInstance;
beforeAll(async () => {
  const ctx = h().ctx;
  app = createServer({ logLevel: 'silent' });
  const r = typed(app);
  const schema = { querystring: z.object({ project_id: z.string().optional() }) };
  r.get('/scoped', { onRequest: authenticate(ctx, 'any'), schema }, async (request) => {
    const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
    return { project_id: scope.projectId, workspace_id: scope.workspaceId, trace_ttl_days: scope.traceTtlDays };
  });
  r.get('/scoped-member', { onRequest: authenticate(ctx, 'any'), schema }, async (request) => {
    const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id, 'MEMBER');
    return { project_id: scope.projectId };
  });
  await app.ready();
});
afterAll(async () => {
  await app?.close();
});

const read = (token: string, projectId?: string, path = '/scoped') =>
  call(app, {
    method: 'GET',
    url: projectId === undefined ? path : `${path}?${new URLSearchParams({ project_id: projectId })}`,
    token,
  });

async function accessTokenOf(sessionToken: string): Promise<string> {
  const res = await call(h().web, { method: 'POST', url: '/api/cli/token', token: sessionToken });
  expect(res.statusCode).toBe(200);
  return res.json().accessToken;
}

describe('project-scoped reads with an API key', () => {
  it("without project_id act on the key's project", async () => {
    const { owner, project, key } = await projectWithKey(h());
    const res = await read(key.key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ project_id: project.id, workspace_id: owner.workspace.id, trace_ttl_days: 30 });
  });

  it("with the key's own project_id are fine", async () => {
    const { project, key } = await projectWithKey(h());
    const res = await read(key.key, project.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().project_id).toBe(project.id);
  });

  it("with another project's id answer 400, even one the key's owner can access", async () => {
    const { owner, key } = await projectWithKey(h());
    const sibling = await createProject(h(), owner.token, owner.workspace.id);
    const stranger = await projectWithKey(h(), 'stranger');
    for (const other of [sibling.id, stranger.project.id, crypto.randomUUID(), 'not-a-uuid']) {
      const res = await read(key.key, other);
      expect({ other, status: res.statusCode }).toEqual({ other, status: 400 });
      expect(typeof res.json().detail).toBe('string');
      expect(res.json().detail).not.toBe(PROJECT_ID_REQUIRED_DETAIL);
    }
  });

  it('with a key of a project deleted in the meantime answer 401', async () => {
    const { owner, project, key } = await projectWithKey(h());
    expect((await read(key.key)).statusCode).toBe(200);
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}?reason=cleanup`,
      token: owner.token,
    });
    expect(del.statusCode).toBe(200);
    expect((await read(key.key)).statusCode).toBe(401);
  });
});

describe('project-scoped reads with a user credential', () => {
  it('without project_id answer 400 with the exact detail', async () => {
    const user = await signUp(h());
    await createProject(h(), user.token, user.workspace.id);
    for (const token of [user.token, await accessTokenOf(user.token)]) {
      for (const res of [await read(token), await read(token, '')]) {
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ detail: 'project_id query parameter is required for user credentials' });
      }
    }
    expect(PROJECT_ID_REQUIRED_DETAIL).toBe('project_id query parameter is required for user credentials');
  });

  it('with a project of their workspace are fine, by session token and by access token', async () => {
    const user = await signUp(h());
    const project = await createProject(h(), user.token, user.workspace.id);
    for (const token of [user.token, await accessTokenOf(user.token)]) {
      const res = await read(token, project.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ project_id: project.id, workspace_id: user.workspace.id, trace_ttl_days: 30 });
    }
  });

  it("with a project of a workspace they're not in answer 403", async () => {
    const outsider = await signUp(h(), 'outsider');
    const { project } = await projectWithKey(h(), 'owner');
    const res = await read(outsider.token, project.id);
    expect(res.statusCode).toBe(403);
    expect(typeof res.json().detail).toBe('string');
  });

  it('with an unknown project id answer 403, the same as a project they cannot see', async () => {
    const user = await signUp(h());
    const { project } = await projectWithKey(h(), 'owner');
    const hidden = await read(user.token, project.id);
    for (const id of [crypto.randomUUID(), 'not-a-uuid']) {
      const res = await read(user.token, id);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual(hidden.json());
    }
  });

  it('with a deleted project of their own workspace answer 403', async () => {
    const user = await signUp(h());
    const project = await createProject(h(), user.token, user.workspace.id);
    expect((await read(user.token, project.id)).statusCode).toBe(200);
    await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}?reason=cleanup`,
      token: user.token,
    });
    expect((await read(user.token, project.id)).statusCode).toBe(403);
  });

  it('work for a VIEWER member of the workspace, who lacks MEMBER', async () => {
    const owner = await signUp(h(), 'owner');
    const project = await createProject(h(), owner.token, owner.workspace.id);
    const viewer = await signUp(h(), 'viewer');
    expect((await read(viewer.token, project.id)).statusCode).toBe(403);

    const added = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${owner.workspace.id}/members`,
      token: owner.token,
      payload: { email: viewer.user.email, role: 'VIEWER' },
    });
    expect(added.statusCode).toBe(201);

    const res = await read(viewer.token, project.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().project_id).toBe(project.id);
    // A route that needs MEMBER refuses the VIEWER and admits the owner.
    expect((await read(viewer.token, project.id, '/scoped-member')).statusCode).toBe(403);
    expect((await read(owner.token, project.id, '/scoped-member')).statusCode).toBe(200);
    // The VIEWER still has no say over another project of a workspace they're not in.
    const elsewhere = await projectWithKey(h(), 'elsewhere');
    expect((await read(viewer.token, elsewhere.project.id)).statusCode).toBe(403);
  });

  it('an API key and a user credential on the same project see the same scope', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const second = await createApiKey(h(), owner.token, project.id, { name: 'second' });
    const byKey = await read(second.key);
    const byUser = await read(owner.token, project.id);
    expect(byKey.statusCode).toBe(200);
    expect(byKey.json()).toEqual(byUser.json());
    expect((await read(key.key)).json()).toEqual(byUser.json());
  });
});
