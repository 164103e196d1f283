import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SignJWT, decodeJwt } from 'jose';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { AccessTokens } from '../../src/auth/access-token.js';
import { USER_LOGIN_REQUIRED_DETAIL } from '../../src/auth/principal.js';
import { hashToken } from '../../src/auth/secrets.js';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  signUp,
  useHarness,
  type Harness,
} from '../support/harness.js';

const h = useHarness();

const LOGIN_REQUIRED = 'this operation requires a user login; API keys are project-scoped';

/** 401 with the `{detail: string}` envelope and a Bearer challenge. */
function expect401(res: LightMyRequestResponse, secret?: string): void {
  expect(res.statusCode).toBe(401);
  expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  if (secret) expect(res.body).not.toContain(secret);
}

const whoami = (token?: string, headers?: Record<string, string>) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token, headers });
const workspaces = (token?: string, headers?: Record<string, string>) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token, headers });

async function sessionIdOf(harness: Harness, sessionToken: string): Promise<string> {
  const { rows } = await harness.ctx.pg.pool.query<{ id: string }>('SELECT id FROM sessions WHERE token_hash = $1', [
    hashToken(sessionToken),
  ]);
  expect(rows).toHaveLength(1);
  return rows[0]!.id;
}

async function signingSecret(harness: Harness): Promise<Uint8Array> {
  if (harness.config.jwtSecret) return new TextEncoder().encode(harness.config.jwtSecret);
  const { rows } = await harness.ctx.pg.pool.query<{ value: string }>(
    `SELECT value FROM server_secrets WHERE name = 'jwt_signing_key'`,
  );
  return new TextEncoder().encode(rows[0]!.value);
}

async function mintAccessToken(harness: Harness, sessionToken: string): Promise<string> {
  const res = await call(harness.web, { method: 'POST', url: '/api/cli/token', token: sessionToken });
  expect(res.statusCode).toBe(200);
  return res.json().accessToken;
}

describe('the Authorization header', () => {
  it('is required: no header answers 401 on key routes and on user routes', async () => {
    expect401(await whoami());
    expect401(await workspaces());
    expect401(await call(h().api, { method: 'POST', url: `${PUBLIC}/projects`, payload: { name: 'x' } }));
  });

  it('must be "Bearer <one credential>"', async () => {
    const { key } = await projectWithKey(h());
    const garbled = [
      `Basic ${key.key}`,
      'Basic x',
      'Bearer',
      'Bearer ',
      `Bearer${key.key}`,
      'Bearer a b',
      `Bearer ${key.key} extra`,
      `Token ${key.key}`,
      key.key,
      '',
    ];
    for (const header of garbled) {
      const res = await whoami(undefined, { authorization: header });
      expect401(res);
    }
    // The well-formed header with the same key works, so the refusals above are about the form.
    expect((await whoami(undefined, { authorization: `Bearer ${key.key}` })).statusCode).toBe(200);
    // The scheme name is case-insensitive (RFC 9110 §11.1).
    expect((await whoami(undefined, { authorization: `bearer ${key.key}` })).statusCode).toBe(200);
  });
});

describe('API keys', () => {
  it('refuses an unknown key of the right form', async () => {
    const unknown = `sl_${crypto.randomUUID()}`;
    expect401(await whoami(unknown), unknown);
  });

  it('refuses keys that are not sl_ + UUID v4', async () => {
    const { key } = await projectWithKey(h());
    const malformed = [
      'sl_',
      'sl_not-a-uuid',
      `sl_${crypto.randomUUID().replace(/-/g, '')}`,
      `${key.key}0`,
      key.key.slice(0, -1),
      key.key.toUpperCase().replace('SL_', 'sl_'),
      `sl_${key.key.slice(3, 17)}1${key.key.slice(18)}`, // version nibble 1, not 4
      `SL_${key.key.slice(3)}`,
      `xx_${key.key.slice(3)}`,
    ];
    for (const token of malformed) expect401(await whoami(token));
    expect((await whoami(key.key)).statusCode).toBe(200);
  });

  it('stops authenticating once its project is soft-deleted', async () => {
    const { owner, project, key } = await projectWithKey(h());
    expect((await whoami(key.key)).statusCode).toBe(200);
    const del = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}?reason=no%20longer%20needed`,
      token: owner.token,
    });
    expect(del.statusCode).toBe(200);
    expect(del.json().deleted).toBe(true);
    // The key row itself is untouched: only the project is gone.
    const { rows } = await h().ctx.pg.pool.query('SELECT revoked_at FROM api_keys WHERE id = $1', [key.id]);
    expect(rows[0].revoked_at).toBeNull();
    expect401(await whoami(key.key));
  });

  it('a key of another live project keeps working when one project is deleted', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const other = await createProject(h(), owner.token, owner.workspace.id);
    const otherKey = await createApiKey(h(), owner.token, other.id);
    await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/projects/${project.id}?reason=cleanup`,
      token: owner.token,
    });
    expect401(await whoami(key.key));
    const res = await whoami(otherKey.key);
    expect(res.statusCode).toBe(200);
    expect(res.json().project_id).toBe(other.id);
  });

  it('is refused with 403 and the exact detail on every account route', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const ws = owner.workspace.id;
    const routes: { method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; url: string; payload?: InjectOptions['payload'] }[] = [
      { method: 'GET', url: `${PUBLIC}/projects` },
      { method: 'GET', url: `${PUBLIC}/workspaces` },
      { method: 'POST', url: `${PUBLIC}/projects`, payload: { name: 'via-key', workspace_id: ws } },
      { method: 'POST', url: `${PUBLIC}/projects`, payload: {} },
      { method: 'POST', url: `${PUBLIC}/workspaces`, payload: { name: 'via-key' } },
      { method: 'DELETE', url: `${PUBLIC}/projects/x?reason=because` },
      { method: 'DELETE', url: `${PUBLIC}/projects/${project.id}?reason=because` },
      { method: 'DELETE', url: `${PUBLIC}/workspaces/${ws}?name=x&reason=because` },
      { method: 'GET', url: `${PUBLIC}/workspaces/${ws}/members` },
      {
        method: 'POST',
        url: `${PUBLIC}/workspaces/${ws}/members`,
        payload: { email: owner.user.email, role: 'VIEWER' },
      },
      { method: 'PATCH', url: `${PUBLIC}/workspaces/${ws}/members/${owner.user.id}`, payload: { role: 'VIEWER' } },
      { method: 'DELETE', url: `${PUBLIC}/workspaces/${ws}/members/${owner.user.id}` },
      { method: 'POST', url: `${PUBLIC}/projects/${project.id}/api-keys`, payload: { name: 'via-key' } },
      { method: 'GET', url: `${PUBLIC}/projects/${project.id}/api-keys` },
      { method: 'DELETE', url: `${PUBLIC}/projects/${project.id}/api-keys/${key.id}` },
    ];
    for (const route of routes) {
      const res = await call(h().api, { ...route, token: key.key });
      expect({ route: `${route.method} ${route.url}`, status: res.statusCode }).toEqual({
        route: `${route.method} ${route.url}`,
        status: 403,
      });
      expect(res.json()).toEqual({ detail: LOGIN_REQUIRED });
    }
    expect(USER_LOGIN_REQUIRED_DETAIL).toBe(LOGIN_REQUIRED);

    // Nothing was written: the project is live, the key still works, no workspace or key was added.
    expect((await whoami(key.key)).statusCode).toBe(200);
    const pool = h().ctx.pg.pool;
    expect(
      (await pool.query('SELECT count(*)::int AS n FROM workspaces WHERE created_by = $1', [owner.user.id])).rows[0].n,
    ).toBe(1);
    expect(
      (await pool.query('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1', [project.id])).rows[0].n,
    ).toBe(1);
    expect((await pool.query('SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1', [ws])).rows[0].n).toBe(
      1,
    );
    expect(
      (await pool.query('SELECT role FROM memberships WHERE workspace_id = $1 AND user_id = $2', [ws, owner.user.id]))
        .rows[0].role,
    ).toBe('ADMIN');
  });
});

describe('session tokens', () => {
  it('refuses an unknown session token', async () => {
    const unknown = `sls_${crypto.randomBytes(32).toString('base64url')}`;
    expect401(await workspaces(unknown), unknown);
    expect401(await workspaces('not-a-real-token'));
  });

  it('refuses a session past its expiry', async () => {
    const user = await signUp(h());
    expect((await workspaces(user.token)).statusCode).toBe(200);
    await h().ctx.pg.pool.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
      hashToken(user.token),
    ]);
    expect401(await workspaces(user.token));
  });

  it('is refused with 401 on whoami, which takes only an API key', async () => {
    const user = await signUp(h());
    expect((await workspaces(user.token)).statusCode).toBe(200);
    expect401(await whoami(user.token));
  });
});

describe('CLI access tokens (JWT)', () => {
  it('is refused with 401 on whoami, which takes only an API key', async () => {
    const user = await signUp(h());
    const access = await mintAccessToken(h(), user.token);
    expect((await workspaces(access)).statusCode).toBe(200);
    expect401(await whoami(access));
  });

  it('refuses a token signed with another secret, even with real claims', async () => {
    const user = await signUp(h());
    const sessionId = await sessionIdOf(h(), user.token);
    const forged = await new AccessTokens(crypto.randomBytes(48).toString('base64url')).mint({
      userId: user.user.id,
      sessionId,
    });
    expect401(await workspaces(forged));
    // The same claims signed by the server's own key are accepted.
    expect((await workspaces(await h().ctx.tokens.mint({ userId: user.user.id, sessionId }))).statusCode).toBe(200);
  });

  it('refuses a tampered token (payload changed, signature kept)', async () => {
    const victim = await signUp(h(), 'victim');
    const attacker = await signUp(h(), 'attacker');
    const access = await mintAccessToken(h(), attacker.token);
    const [header, payload, signature] = access.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
    claims.sub = victim.user.id;
    claims.sid = await sessionIdOf(h(), victim.token);
    const tampered = [header, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
    expect401(await workspaces(tampered));
    // A flipped signature byte, too.
    const sig = Buffer.from(signature!, 'base64url');
    sig[0] = sig[0]! ^ 0xff;
    expect401(await workspaces([header, payload, sig.toString('base64url')].join('.')));
    expect((await workspaces(access)).statusCode).toBe(200);
  });

  it('refuses an unsigned (alg: none) token', async () => {
    const user = await signUp(h());
    const sessionId = await sessionIdOf(h(), user.token);
    const now = Math.floor(Date.now() / 1000);
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = enc({
      sub: user.user.id,
      sid: sessionId,
      iss: 'sightline',
      aud: 'sightline-api',
      iat: now,
      exp: now + 600,
    });
    expect401(await workspaces(`${enc({ alg: 'none', typ: 'JWT' })}.${body}.`));
    expect401(await workspaces(`${enc({ alg: 'none', typ: 'JWT' })}.${body}.x`));
  });

  it('refuses an expired token', async () => {
    const user = await signUp(h());
    const sessionId = await sessionIdOf(h(), user.token);
    const expired = await h().ctx.tokens.mint({ userId: user.user.id, sessionId }, new Date(Date.now() - 11 * 60_000));
    expect(decodeJwt(expired).exp! * 1000).toBeLessThan(Date.now());
    expect401(await workspaces(expired));
    expect401(
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/projects`,
        token: expired,
        payload: { name: 'late', workspace_id: user.workspace.id },
      }),
    );
    // Minted 9 minutes ago it is still inside its 10 minutes.
    const fresh = await h().ctx.tokens.mint({ userId: user.user.id, sessionId }, new Date(Date.now() - 9 * 60_000));
    expect((await workspaces(fresh)).statusCode).toBe(200);
  });

  it('refuses tokens signed with the right key but with the wrong issuer, audience or claims', async () => {
    const user = await signUp(h());
    const sessionId = await sessionIdOf(h(), user.token);
    const key = await signingSecret(h());
    const sign = (
      claims: Record<string, unknown>,
      opts: { iss?: string; aud?: string; sub?: string; exp?: number } = {},
    ) => {
      const now = Math.floor(Date.now() / 1000);
      let jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuedAt(now)
        .setExpirationTime(opts.exp ?? now + 600);
      if (opts.iss !== '') jwt = jwt.setIssuer(opts.iss ?? 'sightline');
      if (opts.aud !== '') jwt = jwt.setAudience(opts.aud ?? 'sightline-api');
      if (opts.sub !== '') jwt = jwt.setSubject(opts.sub ?? user.user.id);
      return jwt.sign(key);
    };
    // Control: a hand-built token with the right claims is accepted, so the key is the server's.
    expect((await workspaces(await sign({ sid: sessionId }))).statusCode).toBe(200);

    expect401(await workspaces(await sign({ sid: sessionId }, { iss: 'someone-else' })));
    expect401(await workspaces(await sign({ sid: sessionId }, { aud: 'another-api' })));
    expect401(await workspaces(await sign({ sid: sessionId }, { iss: '' })));
    expect401(await workspaces(await sign({ sid: sessionId }, { aud: '' })));
    expect401(await workspaces(await sign({ sid: sessionId }, { sub: '' })));
    expect401(await workspaces(await sign({})));
    expect401(await workspaces(await sign({ sid: 'not-a-uuid' })));
    expect401(await workspaces(await sign({ sid: crypto.randomUUID() })));
    // A real session id of another user does not go with this user's id.
    const other = await signUp(h(), 'other');
    expect401(await workspaces(await sign({ sid: await sessionIdOf(h(), other.token) })));
  });
});
