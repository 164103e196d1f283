import { describe, expect, it } from 'vitest';
import { call, createApiKey, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { waitUntil } from '../support/wait.js';
import { KEY_USAGE_INTERVAL_MS, noteKeyUsed } from '../../src/auth/key-usage.js';
import { forgetVerifiedKeys } from '../../src/auth/key-cache.js';

const h = useHarness();

describe('project API keys', () => {
  it('authenticates whoami with a new key, shown once in the create answer', async () => {
    const { project, key, owner } = await projectWithKey(h());
    expect(key.key).toMatch(/^sl_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(key.key.startsWith(key.key_prefix)).toBe(true);
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      project_id: project.id,
      project_name: project.name,
      workspace_id: owner.workspace.id,
      key_id: key.id,
    });

    const list = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token: owner.token,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json().data).toHaveLength(1);
    expect(list.json().data[0]).not.toHaveProperty('key');
    expect(list.body).not.toContain(key.key);
  });

  it('writes last_used_at when the key is used, at most once per key per interval (issue 37)', async () => {
    const { project, key, owner } = await projectWithKey(h());
    const listed = async () =>
      (
        await call(h().api, { method: 'GET', url: `${PUBLIC}/projects/${project.id}/api-keys`, token: owner.token })
      ).json().data[0].last_used_at as string | null;
    expect(await listed()).toBeNull();
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode).toBe(200);
    await waitUntil(async () => (await listed()) !== null, 'last_used_at written');
    expect(Date.parse((await listed())!)).toBeGreaterThan(Date.now() - 3_600_000);

    // Coalesced: more requests within the interval write nothing (a request costs no UPDATE).
    const pool = h().ctx.pg.pool;
    await pool.query(`UPDATE api_keys SET last_used_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [key.id]);
    for (let i = 0; i < 10; i++)
      expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode).toBe(200);
    expect(await listed()).toBe('2000-01-01T00:00:00.000Z');
    // Once the interval has passed, the next use writes it again.
    noteKeyUsed(h().ctx.pg, key.id, Date.now() + KEY_USAGE_INTERVAL_MS + 1);
    await waitUntil(async () => (await listed()) !== '2000-01-01T00:00:00.000Z', 'last_used_at written again');
  });

  it('stores only a hash of the key', async () => {
    const { key } = await projectWithKey(h());
    const { rows } = await h().ctx.pg.pool.query('SELECT key_hash FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].key_hash).not.toContain(key.key.slice(3));
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stops a revoked key at once', async () => {
    const { project, key, owner } = await projectWithKey(h());
    // In use first: this process keeps it verified (src/auth/key-cache.ts), and the revoke drops it.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode).toBe(200);
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}/api-keys/${key.id}`,
      token: owner.token,
    });
    expect(del.statusCode).toBe(200);
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
    expect(res.statusCode).toBe(401);
    const again = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}/api-keys/${key.id}`,
      token: owner.token,
    });
    expect(again.statusCode).toBe(404);
  });

  it('refuses an expired key', async () => {
    const { project, owner } = await projectWithKey(h());
    const key = await createApiKey(h(), owner.token, project.id, {
      name: 'short',
      expires_at: new Date(Date.now() + 60_000).toISOString(),
    });
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode).toBe(200);
    await h().ctx.pg.pool.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [key.id]);
    // A write outside the API, which this process's kept keys see within VERIFIED_KEY_TTL_MS: drop it now.
    forgetVerifiedKeys(h().ctx.pg, { keyId: key.id });
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode).toBe(401);
  });

  it('rejects an expiry in the past with 422', async () => {
    const { project, owner } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token: owner.token,
      payload: { name: 'old', expires_at: '2020-01-01T00:00:00Z' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0].loc).toEqual(['body', 'expires_at']);
  });
});
