import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { hashToken } from '../../src/auth/secrets.js';
import { call, PUBLIC, signUp, uniqueEmail, useHarness } from '../support/harness.js';

const h = useHarness();

const PASSWORD = 'correct horse battery';

const signupCall = (payload: Record<string, unknown>) =>
  call(h().web, { method: 'POST', url: '/api/auth/signup', payload });
const loginCall = (payload: Record<string, unknown>) =>
  call(h().web, { method: 'POST', url: '/api/auth/login', payload });
const mintCall = (token: string) => call(h().web, { method: 'POST', url: '/api/cli/token', token });
const listWorkspaces = (token: string) => call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token });
const createProjectCall = (token: string, workspaceId: string, name = `p-${crypto.randomBytes(4).toString('hex')}`) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/projects`, token, payload: { name, workspace_id: workspaceId } });

function form(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

describe('POST /api/auth/signup', () => {
  it('answers 201 with the session, the user and their new workspace, where they are ADMIN', async () => {
    const email = uniqueEmail('signup');
    const res = await signupCall({ email, password: PASSWORD, name: 'Ada Lovelace' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session_token', 'user', 'workspace']);
    expect(typeof body.session_token).toBe('string');
    expect(body.session_token.length).toBeGreaterThanOrEqual(32);
    expect(body.user).toEqual({ id: expect.any(String), email, name: 'Ada Lovelace' });
    expect(body.workspace).toEqual({ id: expect.any(String), name: expect.any(String) });
    expect(body.workspace.name.length).toBeGreaterThan(0);

    const ws = await listWorkspaces(body.session_token);
    expect(ws.statusCode).toBe(200);
    expect(ws.json()).toEqual({ data: [{ id: body.workspace.id, name: body.workspace.name, role: 'ADMIN' }] });
  });

  it('stores the password as a scrypt hash and the session token only hashed', async () => {
    const email = uniqueEmail('hash');
    const res = await signupCall({ email, password: PASSWORD, name: 'Hash Check' });
    expect(res.statusCode).toBe(201);
    const { user, session_token } = res.json();
    const pool = h().ctx.pg.pool;

    const { rows: users } = await pool.query('SELECT password_hash FROM users WHERE id = $1', [user.id]);
    const stored: string = users[0].password_hash;
    expect(stored).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]+$/);
    expect(Number(stored.split('$')[1])).toBeGreaterThanOrEqual(1 << 14); // memory-hard cost
    expect(stored).not.toContain(PASSWORD);

    const { rows: sessions } = await pool.query('SELECT token_hash FROM sessions WHERE user_id = $1', [user.id]);
    expect(sessions).toHaveLength(1);
    expect(sessions[0].token_hash).toBe(hashToken(session_token));
    expect(sessions[0].token_hash).not.toContain(session_token);
    // No column of any session row holds the token itself.
    const { rows: raw } = await pool.query('SELECT row_to_json(s)::text AS j FROM sessions s WHERE user_id = $1', [
      user.id,
    ]);
    expect(raw[0].j).not.toContain(session_token);
  });

  it('a second signup with the same e-mail in another case answers 409 and creates nothing', async () => {
    const local = `dup-${crypto.randomBytes(6).toString('hex')}`;
    const first = await signupCall({ email: `${local}@example.test`, password: PASSWORD, name: 'First' });
    expect(first.statusCode).toBe(201);
    const second = await signupCall({
      email: `${local.toUpperCase()}@EXAMPLE.test`,
      password: 'another password',
      name: `Second ${local}`,
    });
    expect(second.statusCode).toBe(409);
    expect(typeof second.json().detail).toBe('string');
    const exact = await signupCall({ email: `${local}@example.test`, password: PASSWORD, name: `Third ${local}` });
    expect(exact.statusCode).toBe(409);

    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM users WHERE lower(email) = $1', [
      `${local}@example.test`,
    ]);
    expect(rows[0].n).toBe(1);
    const { rows: ws } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM workspaces WHERE name LIKE $1', [
      `%${local}%`,
    ]);
    expect(ws[0].n).toBe(0);
    // The first account's password still logs in; the second one's doesn't.
    expect((await loginCall({ email: `${local}@example.test`, password: PASSWORD })).statusCode).toBe(200);
    expect((await loginCall({ email: `${local}@example.test`, password: 'another password' })).statusCode).toBe(401);
  });

  it('refuses a password shorter than 8 characters with 422 at body.password, without echoing it', async () => {
    const email = uniqueEmail('short');
    const secret = 'Sh0rt!x'; // 7 characters
    const res = await signupCall({ email, password: secret, name: 'Short' });
    expect(res.statusCode).toBe(422);
    const detail = res.json().detail;
    expect(Array.isArray(detail)).toBe(true);
    const entry = detail.find((d: { loc: unknown[] }) => d.loc.join('.') === 'body.password');
    expect(entry).toBeDefined();
    expect(entry.loc).toEqual(['body', 'password']);
    expect(typeof entry.msg).toBe('string');
    expect(typeof entry.type).toBe('string');
    expect(entry).not.toHaveProperty('input');
    expect(res.body).not.toContain(secret);
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [email]);
    expect(rows[0].n).toBe(0);
    // Exactly 8 characters is enough.
    expect((await signupCall({ email, password: 'Eight8!x', name: 'Short' })).statusCode).toBe(201);
  });
});

describe('POST /api/auth/login', () => {
  it('answers 200 with a new session token and the user', async () => {
    const user = await signUp(h(), 'login');
    const res = await loginCall({ email: user.user.email, password: user.password });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['session_token', 'user']);
    expect(body.user).toEqual(user.user);
    expect(body.session_token).not.toBe(user.token);
    expect((await listWorkspaces(body.session_token)).statusCode).toBe(200);
    // E-mail is matched case-insensitively, as at signup.
    expect((await loginCall({ email: ` ${user.user.email.toUpperCase()} `, password: user.password })).statusCode).toBe(
      200,
    );
  });

  it('answers a wrong password and an unknown e-mail alike: 401 with the same detail', async () => {
    const user = await signUp(h(), 'wrong');
    const wrongPassword = await loginCall({ email: user.user.email, password: 'not the password' });
    const unknownEmail = await loginCall({ email: uniqueEmail('nobody'), password: user.password });
    expect(wrongPassword.statusCode).toBe(401);
    expect(unknownEmail.statusCode).toBe(401);
    expect(typeof wrongPassword.json().detail).toBe('string');
    expect(wrongPassword.json()).toEqual(unknownEmail.json());
    expect(wrongPassword.body).not.toContain('not the password');
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [
      user.user.id,
    ]);
    expect(rows[0].n).toBe(1); // only the signup session
  });
});

describe('POST /api/cli/token', () => {
  it('returns a 10-minute JWT carrying the session id that works as bearer on user routes', async () => {
    const user = await signUp(h(), 'cli');
    const res = await mintCall(user.token);
    expect(res.statusCode).toBe(200);
    expect(Object.keys(res.json())).toEqual(['accessToken']);
    const { accessToken } = res.json();
    expect(accessToken).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    const claims = decodeJwt(accessToken);
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(60);
    expect(claims.sub).toBe(user.user.id);
    const { rows } = await h().ctx.pg.pool.query('SELECT id FROM sessions WHERE token_hash = $1', [
      hashToken(user.token),
    ]);
    expect(claims.sid).toBe(rows[0].id);

    const ws = await listWorkspaces(accessToken);
    expect(ws.statusCode).toBe(200);
    expect(ws.json().data.map((w: { id: string }) => w.id)).toEqual([user.workspace.id]);
    const created = await createProjectCall(accessToken, user.workspace.id);
    expect(created.statusCode).toBe(201);
  });

  it('does not let an access token mint another (401)', async () => {
    const user = await signUp(h(), 'chain');
    const access = (await mintCall(user.token)).json().accessToken;
    const res = await mintCall(access);
    expect(res.statusCode).toBe(401);
    expect(typeof res.json().detail).toBe('string');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  });

  it('needs a credential', async () => {
    const res = await call(h().web, { method: 'POST', url: '/api/cli/token' });
    expect(res.statusCode).toBe(401);
  });

  it('does not take an API key', async () => {
    const user = await signUp(h(), 'keymint');
    const project = (await createProjectCall(user.token, user.workspace.id)).json();
    const key = (
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/projects/${project.id}/api-keys`,
        token: user.token,
        payload: { name: 'k' },
      })
    ).json().key;
    const res = await mintCall(key);
    expect([401, 403]).toContain(res.statusCode);
    expect(res.json()).not.toHaveProperty('accessToken');
  });
});

describe('POST /api/auth/logout', () => {
  it('answers 204 and ends the session and every access token minted from it at once', async () => {
    const user = await signUp(h(), 'logout');
    const access = (await mintCall(user.token)).json().accessToken;
    expect((await createProjectCall(user.token, user.workspace.id)).statusCode).toBe(201);
    expect((await createProjectCall(access, user.workspace.id)).statusCode).toBe(201);

    const res = await call(h().web, { method: 'POST', url: '/api/auth/logout', token: user.token });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    // The access token has not expired yet...
    expect(decodeJwt(access).exp! * 1000).toBeGreaterThan(Date.now() + 60_000);
    // ...but writes and reads with either credential are refused.
    for (const token of [user.token, access]) {
      const write = await createProjectCall(token, user.workspace.id);
      expect(write.statusCode).toBe(401);
      expect(typeof write.json().detail).toBe('string');
      expect(write.headers['www-authenticate']).toMatch(/^Bearer/);
      const read = await listWorkspaces(token);
      expect(read.statusCode).toBe(401);
      expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token })).statusCode).toBe(401);
    }
    expect((await mintCall(user.token)).statusCode).toBe(401);
    expect((await call(h().web, { method: 'POST', url: '/api/auth/logout', token: user.token })).statusCode).toBe(401);

    // Nothing was written by the refused creates.
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1', [
      user.workspace.id,
    ]);
    expect(rows[0].n).toBe(2);
  });

  it('ends only that session: another login of the same user keeps working', async () => {
    const user = await signUp(h(), 'twosessions');
    const second = (await loginCall({ email: user.user.email, password: user.password })).json().session_token;
    const secondAccess = (await mintCall(second)).json().accessToken;
    expect((await call(h().web, { method: 'POST', url: '/api/auth/logout', token: user.token })).statusCode).toBe(204);
    expect((await listWorkspaces(user.token)).statusCode).toBe(401);
    expect((await listWorkspaces(second)).statusCode).toBe(200);
    expect((await listWorkspaces(secondAccess)).statusCode).toBe(200);
  });

  it('needs a credential', async () => {
    const res = await call(h().web, { method: 'POST', url: '/api/auth/logout' });
    expect(res.statusCode).toBe(401);
  });
});

describe('CLI browser login', () => {
  const loopback = 'http://127.0.0.1:8765/callback';

  it('GET /cli/login serves the login page for a loopback redirect_uri', async () => {
    for (const uri of [loopback, 'http://localhost:9000/cb', 'http://[::1]:9000/cb']) {
      const res = await call(h().web, {
        method: 'GET',
        url: `/cli/login?${new URLSearchParams({ redirect_uri: uri, state: 'abc123' })}`,
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('<form');
      expect(res.body).toContain('name="password"');
      expect(res.body).toContain('abc123');
    }
  });

  it('GET /cli/login escapes what it echoes', async () => {
    const state = '"><script>alert(1)</script>';
    const res = await call(h().web, {
      method: 'GET',
      url: `/cli/login?${new URLSearchParams({ redirect_uri: loopback, state })}`,
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('<script>alert(1)</script>');
    expect(res.body).toContain('&lt;script&gt;');
  });

  it('GET /cli/login refuses a redirect_uri that is not on the loopback interface (400)', async () => {
    const bad = [
      'https://evil.example/cb',
      'http://localhost.evil.example/cb',
      'http://127.0.0.1.evil.example/cb',
      'http://user:pw@127.0.0.1:8765/cb',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'not a url',
    ];
    for (const uri of bad) {
      const res = await call(h().web, {
        method: 'GET',
        url: `/cli/login?${new URLSearchParams({ redirect_uri: uri })}`,
      });
      expect({ uri, status: res.statusCode }).toEqual({ uri, status: 400 });
      expect(typeof res.json().detail).toBe('string');
    }
  });

  it('POST /cli/login with the right credentials redirects 302 to the redirect_uri with session_token and state', async () => {
    const user = await signUp(h(), 'browser');
    const res = await call(h().web, {
      method: 'POST',
      url: '/cli/login',
      ...form({ redirect_uri: `${loopback}?keep=1`, state: 'st-42', email: user.user.email, password: user.password }),
    });
    expect(res.statusCode).toBe(302);
    const location = new URL(res.headers.location as string);
    expect(`${location.origin}${location.pathname}`).toBe(loopback);
    expect(location.searchParams.get('keep')).toBe('1');
    expect(location.searchParams.get('state')).toBe('st-42');
    const token = location.searchParams.get('session_token');
    expect(token).toBeTruthy();
    expect(token).not.toBe(user.token);
    const ws = await listWorkspaces(token!);
    expect(ws.statusCode).toBe(200);
    expect(ws.json().data[0].id).toBe(user.workspace.id);
    // It is a session token: it can mint an access token.
    expect((await mintCall(token!)).statusCode).toBe(200);
  });

  it('with a live browser session, offers "Continue as" and hands the CLI a session of its own (issue 37)', async () => {
    const user = await signUp(h(), 'browserlive');
    const cookie = `sightline_session=${user.token}`;
    const page = await call(h().web, {
      method: 'GET',
      url: `/cli/login?${new URLSearchParams({ redirect_uri: loopback, state: 'st-live' })}`,
      headers: { cookie },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`Continue as ${user.user.email}`);
    expect(page.body).toContain('name="continue_session"');
    // Without the cookie it is the password form alone.
    const anonymous = await call(h().web, {
      method: 'GET',
      url: `/cli/login?${new URLSearchParams({ redirect_uri: loopback })}`,
    });
    expect(anonymous.body).not.toContain('Continue as');

    const fields = { redirect_uri: loopback, state: 'st-live', continue_session: '1' };
    const posted = await call(h().web, {
      method: 'POST',
      url: '/cli/login',
      ...form(fields),
      headers: { ...form(fields).headers, cookie, origin: 'http://web.test' },
    });
    expect(posted.statusCode).toBe(302);
    const location = new URL(posted.headers.location as string);
    expect(location.searchParams.get('state')).toBe('st-live');
    const token = location.searchParams.get('session_token')!;
    expect(token).not.toBe(user.token);
    expect((await mintCall(token)).statusCode).toBe(200);

    // A post from another origin (or with no Origin) gets no token, cookie or not.
    for (const origin of ['https://evil.example', undefined]) {
      const refused = await call(h().web, {
        method: 'POST',
        url: '/cli/login',
        ...form(fields),
        headers: { ...form(fields).headers, cookie, ...(origin ? { origin } : {}) },
      });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers.location).toBeUndefined();
    }
  });

  it('POST /cli/login with wrong credentials answers 401 with the login page again and no token', async () => {
    const user = await signUp(h(), 'browserbad');
    const before = (
      await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [user.user.id])
    ).rows[0].n;
    const res = await call(h().web, {
      method: 'POST',
      url: '/cli/login',
      ...form({ redirect_uri: loopback, state: 'st-1', email: user.user.email, password: 'wrong password!' }),
    });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers.location).toBeUndefined();
    expect(res.body).toContain('<form');
    expect(res.body).not.toContain('session_token');
    expect(res.body).not.toContain('wrong password!');
    const after = (
      await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [user.user.id])
    ).rows[0].n;
    expect(after).toBe(before);
  });

  it('POST /cli/login refuses a non-loopback redirect_uri even with the right credentials', async () => {
    const user = await signUp(h(), 'browserevil');
    const res = await call(h().web, {
      method: 'POST',
      url: '/cli/login',
      ...form({ redirect_uri: 'https://evil.example/cb', state: 's', email: user.user.email, password: user.password }),
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers.location).toBeUndefined();
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [
      user.user.id,
    ]);
    expect(rows[0].n).toBe(1);
  });
});
