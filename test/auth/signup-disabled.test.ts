import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/secrets.js';
import { newId } from '../../src/ids.js';
import { call, PUBLIC, uniqueEmail, useHarness } from '../support/harness.js';

const h = useHarness({ SIGNUP_ENABLED: 'false' });

describe('SIGNUP_ENABLED=false', () => {
  it('refuses signup with 403 and creates no account', async () => {
    const email = uniqueEmail('closed');
    const res = await call(h().web, {
      method: 'POST',
      url: '/api/auth/signup',
      payload: { email, password: 'correct horse battery', name: 'Closed' },
    });
    expect(res.statusCode).toBe(403);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['detail']);
    expect(typeof body.detail).toBe('string');
    expect(res.body).not.toContain('session_token');
    const { rows } = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [email]);
    expect(rows[0].n).toBe(0);
  });

  it('still lets existing users log in', async () => {
    const email = uniqueEmail('existing');
    const id = newId();
    await h().ctx.pg.pool.query('INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)', [
      id,
      email,
      'Existing',
      await hashPassword('correct horse battery'),
    ]);
    const res = await call(h().web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email, password: 'correct horse battery' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().user).toEqual({ id, email, name: 'Existing' });
    const ws = await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: res.json().session_token });
    expect(ws.statusCode).toBe(200);
    expect(ws.json()).toEqual({ data: [] });
  });
});
