import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApiApp } from '../../src/app.js';
import { buildWebApp } from '../../src/web/app.js';
import { AccessTokens } from '../../src/auth/access-token.js';
import type { AppContext } from '../../src/context.js';
import { call, PUBLIC, signUp, useHarness, watchPublicAnswers } from '../support/harness.js';

const h = useHarness();

/**
 * The same context, except that its Postgres pool points at 127.0.0.1:1, where nothing listens:
 * every credential lookup fails to connect, as when the credential store is down.
 */
let deadPool: pg.Pool;
let api: FastifyInstance;
let web: FastifyInstance;
beforeAll(async () => {
  deadPool = new pg.Pool({
    host: '127.0.0.1',
    port: 1,
    user: 'postgres',
    database: 'postgres',
    connectionTimeoutMillis: 2_000,
    max: 2,
  });
  deadPool.on('error', () => {});
  const live = h().ctx;
  const ctx: AppContext = {
    ...live,
    pg: { ...live.pg, pool: deadPool, ping: async () => void (await deadPool.query('SELECT 1')) },
  };
  api = buildApiApp(ctx);
  web = buildWebApp(ctx);
  watchPublicAnswers(api, web);
  await Promise.all([api.ready(), web.ready()]);
});
afterAll(async () => {
  await Promise.allSettled([api?.close(), web?.close()]);
  await deadPool?.end().catch(() => {});
});

function expect503(res: LightMyRequestResponse, secret: string): void {
  expect(res.statusCode).toBe(503);
  const body = res.json();
  expect(Object.keys(body)).toEqual(['detail']);
  expect(typeof body.detail).toBe('string');
  expect(body.detail.length).toBeGreaterThan(0);
  expect(res.body).not.toContain(secret);
  expect(res.body).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|stack/i);
}

describe('credential store unreachable', () => {
  it('answers 503 for an API key, which it cannot look up', async () => {
    const key = `sl_${crypto.randomUUID()}`;
    expect503(await call(api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key }), key);
    // The live store knows the key isn't valid: 401 there, so the 503 above is the outage's.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key })).statusCode).toBe(401);
  });

  it('answers 503 for a session token, on whoami and on user routes', async () => {
    const user = await signUp(h());
    expect503(await call(api, { method: 'GET', url: `${PUBLIC}/whoami`, token: user.token }), user.token);
    expect503(await call(api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token }), user.token);
    expect503(
      await call(api, {
        method: 'POST',
        url: `${PUBLIC}/projects`,
        token: user.token,
        payload: { name: 'during-outage', workspace_id: user.workspace.id },
      }),
      user.token,
    );
    // The same token is good against the live store.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token })).statusCode).toBe(
      200,
    );
  });

  it('answers 503 for a validly signed access token, whose session it cannot check', async () => {
    const user = await signUp(h());
    const res = await call(h().web, { method: 'POST', url: '/api/cli/token', token: user.token });
    const access = res.json().accessToken as string;
    expect503(await call(api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: access }), access);
  });

  it('answers 503 on the web routes that take a session token', async () => {
    const user = await signUp(h());
    expect503(await call(web, { method: 'POST', url: '/api/cli/token', token: user.token }), user.token);
    expect503(await call(web, { method: 'POST', url: '/api/auth/logout', token: user.token }), user.token);
    // The refused logout did not end the session.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token })).statusCode).toBe(
      200,
    );
  });

  it('answers 503 to a login it cannot check, JSON or browser form, and hands out no token', async () => {
    const user = await signUp(h());
    const res = await call(web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: user.user.email, password: user.password },
    });
    expect503(res, user.password);
    expect(res.body).not.toContain('session_token');
    const form = await call(web, {
      method: 'POST',
      url: '/cli/login',
      payload: new URLSearchParams({
        redirect_uri: 'http://127.0.0.1:8765/cb',
        state: 's',
        email: user.user.email,
        password: user.password,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.statusCode).toBe(503);
    expect(form.headers.location).toBeUndefined();
    // Against the live store the same login succeeds.
    expect(
      (
        await call(h().web, {
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: user.user.email, password: user.password },
        })
      ).statusCode,
    ).toBe(200);
  });

  it('answers 503 to a sign-up it cannot store', async () => {
    const res = await call(web, {
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email: `down-${crypto.randomUUID()}@example.test`, password: 'long enough pw', name: 'Down' },
    });
    expect503(res, 'long enough pw');
  });

  it('still answers 401 for what it can reject without the store', async () => {
    const forged = await new AccessTokens(crypto.randomBytes(48).toString('base64url')).mint({
      userId: crypto.randomUUID(),
      sessionId: crypto.randomUUID(),
    });
    const cases: { token?: string; headers?: Record<string, string> }[] = [
      {},
      { headers: { authorization: 'Basic x' } },
      { headers: { authorization: 'Bearer a b' } },
      { token: 'sl_not-a-uuid' },
      { token: forged },
    ];
    for (const c of cases) {
      const res = await call(api, { method: 'GET', url: `${PUBLIC}/whoami`, ...c });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
  });
});
