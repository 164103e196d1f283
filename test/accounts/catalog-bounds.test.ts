import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { MAX_PROJECTS_PER_WORKSPACE } from '../../src/projects/service.js';
import { MAX_API_KEYS_PER_PROJECT } from '../../src/api-keys/service.js';
import { MAX_MEMBERS_PER_WORKSPACE, MAX_WORKSPACES_PER_USER } from '../../src/workspaces/service.js';

/**
 * The account catalogs that unpaged lists answer whole are bounded where they grow (issue 9, the
 * sweep for unbounded work): creating past a cap is a 409 `{detail}`. The rows up to each cap are
 * written straight into Postgres (the real store), so the tests need not make hundreds of calls.
 */

const h = useHarness();
const db = () => h().ctx.pg.pool;

describe('catalog caps', () => {
  it(`a workspace holds at most ${MAX_PROJECTS_PER_WORKSPACE} live projects; an existing name still answers`, async () => {
    const user = await signUp(h(), 'cap');
    await db().query(
      `INSERT INTO projects (id, workspace_id, name, created_by) SELECT gen_random_uuid(), $1, 'bulk-' || n, $2 FROM generate_series(1, $3) AS n`,
      [user.workspace.id, user.user.id, MAX_PROJECTS_PER_WORKSPACE],
    );
    const refused = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token: user.token,
      payload: { name: 'one more', workspace_id: user.workspace.id },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(Object.keys(refused.json())).toEqual(['detail']);
    const again = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token: user.token,
      payload: { name: 'bulk-7', workspace_id: user.workspace.id },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().created).toBe(false);
    // A soft-deleted project frees its place.
    await db().query(`UPDATE projects SET deleted_at = now() WHERE workspace_id = $1 AND name = 'bulk-1'`, [
      user.workspace.id,
    ]);
    expect(
      (
        await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/projects`,
          token: user.token,
          payload: { name: 'one more', workspace_id: user.workspace.id },
        })
      ).statusCode,
    ).toBe(201);
  });

  it(`a project holds at most ${MAX_API_KEYS_PER_PROJECT} unrevoked API keys`, async () => {
    const user = await signUp(h(), 'cap');
    const project = await createProject(h(), user.token, user.workspace.id);
    await db().query(
      `INSERT INTO api_keys (id, project_id, name, key_hash, key_prefix) SELECT gen_random_uuid(), $1, 'k', md5(random()::text) || n, 'sl_x' FROM generate_series(2, $2) AS n`,
      [project.id, MAX_API_KEYS_PER_PROJECT],
    );
    const last = await createApiKey(h(), user.token, project.id);
    const refused = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token: user.token,
      payload: { name: 'one more' },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}/api-keys/${last.id}`,
      token: user.token,
    });
    expect(
      (
        await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/projects/${project.id}/api-keys`,
          token: user.token,
          payload: { name: 'again' },
        })
      ).statusCode,
    ).toBe(201);
  });

  it(`a user belongs to at most ${MAX_WORKSPACES_PER_USER} workspaces`, async () => {
    const user = await signUp(h(), 'cap');
    await db().query(
      `WITH w AS (INSERT INTO workspaces (id, name, created_by) SELECT gen_random_uuid(), 'w' || n, $1 FROM generate_series(2, $2) AS n RETURNING id)
       INSERT INTO memberships (workspace_id, user_id, role) SELECT id, $1, 'ADMIN' FROM w`,
      [user.user.id, MAX_WORKSPACES_PER_USER],
    );
    const refused = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: user.token,
      payload: { name: 'one more' },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    const other = await signUp(h(), 'cap');
    const invited = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${other.workspace.id}/members`,
      token: other.token,
      payload: { email: user.user.email, role: 'VIEWER' },
    });
    expect(invited.statusCode, invited.body).toBe(409);
  });

  it(`a workspace holds at most ${MAX_MEMBERS_PER_WORKSPACE} members`, async () => {
    const admin = await signUp(h(), 'cap');
    const tag = crypto.randomBytes(4).toString('hex');
    await db().query(
      `WITH u AS (INSERT INTO users (id, email, name, password_hash) SELECT gen_random_uuid(), 'bulk-' || n || '-' || $3 || '@example.test', 'b', 'x' FROM generate_series(2, $2) AS n RETURNING id)
       INSERT INTO memberships (workspace_id, user_id, role) SELECT $1, id, 'VIEWER' FROM u`,
      [admin.workspace.id, MAX_MEMBERS_PER_WORKSPACE, tag],
    );
    const newcomer = await signUp(h(), 'cap');
    const refused = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces/${admin.workspace.id}/members`,
      token: admin.token,
      payload: { email: newcomer.user.email, role: 'VIEWER' },
    });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().detail).toMatch(/at most/);
  });
});
