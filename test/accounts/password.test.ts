import { describe, expect, it } from 'vitest';
import { call, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { resetPassword } from '../../src/accounts/password.js';

/**
 * Issue 20, item 6: password change (other sessions end), log out everywhere (every session and
 * access token), and the operator's reset (no route lets a workspace ADMIN reset someone's password).
 */
const h = useHarness();

const web = (token: string | undefined, url: string, payload?: unknown) =>
  call(h().web, { method: 'POST', url, token, payload: payload as object });
const workspaces = (token: string) => call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token });
const login = (email: string, password: string) =>
  call(h().web, { method: 'POST', url: '/api/auth/login', payload: { email, password } });

async function secondSessionAndToken(email: string, password: string) {
  const other = await login(email, password);
  expect(other.statusCode).toBe(200);
  const minted = await web(other.json().session_token, '/api/cli/token');
  return { session: other.json().session_token as string, access: minted.json().accessToken as string };
}

describe('password change', () => {
  it('needs the current password; ends every other session and its access tokens, keeps the caller’s', async () => {
    const user = await signUp(h(), 'pw');
    const other = await secondSessionAndToken(user.user.email, user.password);

    const wrong = await web(user.token, '/api/auth/password', {
      current_password: 'not it at all',
      new_password: 'brand new secret',
    });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json()).toEqual({ detail: 'the current password is wrong' });
    const short = await web(user.token, '/api/auth/password', {
      current_password: user.password,
      new_password: 'short',
    });
    expect(short.statusCode).toBe(422);
    // An access token can't change the password.
    expect(
      (
        await web(other.access, '/api/auth/password', {
          current_password: user.password,
          new_password: 'brand new secret',
        })
      ).statusCode,
    ).toBe(401);
    expect((await workspaces(other.session)).statusCode).toBe(200);

    const changed = await web(user.token, '/api/auth/password', {
      current_password: user.password,
      new_password: 'brand new secret',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toEqual({ revoked_sessions: 1 });
    expect((await workspaces(user.token)).statusCode).toBe(200);
    expect((await workspaces(other.session)).statusCode).toBe(401);
    expect((await workspaces(other.access)).statusCode).toBe(401);
    expect((await login(user.user.email, user.password)).statusCode).toBe(401);
    expect((await login(user.user.email, 'brand new secret')).statusCode).toBe(200);
  });
});

describe('log out everywhere', () => {
  it('ends every session of the user and every access token, and no one else’s', async () => {
    const user = await signUp(h(), 'everywhere');
    const bystander = await signUp(h(), 'bystander');
    const other = await secondSessionAndToken(user.user.email, user.password);
    const res = await web(other.access, '/api/auth/logout-all');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ revoked_sessions: 2 });
    for (const token of [user.token, other.session, other.access])
      expect((await workspaces(token)).statusCode).toBe(401);
    expect((await workspaces(bystander.token)).statusCode).toBe(200);
    expect((await web(undefined, '/api/auth/logout-all')).statusCode).toBe(401);
  });
});

describe('operator reset', () => {
  it('sets a new password and ends every session; an unknown e-mail is refused', async () => {
    const user = await signUp(h(), 'reset');
    const result = await resetPassword(h().ctx.pg, user.user.email.toUpperCase(), 'operator chosen');
    expect(result).toEqual({ user_id: user.user.id, revoked_sessions: 1 });
    expect((await workspaces(user.token)).statusCode).toBe(401);
    expect((await login(user.user.email, 'operator chosen')).statusCode).toBe(200);
    await expect(resetPassword(h().ctx.pg, 'nobody-at-all@example.test', 'whatever long')).rejects.toThrow(/no user/);
  });
});
