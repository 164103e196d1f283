import { describe, expect, it } from 'vitest';
import type pg from 'pg';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { OTHER_TENANT_BOUND_MS, timed } from '../support/other-tenant.js';
import { STATEMENT_TIMEOUT_MS } from '../../src/stores/postgres.js';

/**
 * Issue 20, item 2: the store the whole service needs is never held by one caller. Authentication and
 * logins use a pool of their own (src/stores/postgres.ts): with every connection of the request pool
 * taken (one on embedded PGlite, ten on a server), API keys, sessions and logins are still answered.
 */
const h = useHarness();

describe('authentication has a pool of its own', () => {
  it('answers API keys, sessions, logins and health while every request connection is held', async () => {
    const other = await projectWithKey(h(), 'reserved');
    const pool = h().ctx.pg.pool;
    const held: pg.PoolClient[] = [];
    const size = h().ctx.pg.embedded ? 1 : 10;
    for (let i = 0; i < size; i++) held.push(await pool.connect());
    try {
      expect(pool.idleCount).toBe(0);
      const answers = await Promise.all([
        timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: other.key.key })),
        timed(() => call(h().web, { method: 'GET', url: '/api/auth/session', token: other.owner.token })),
        timed(() =>
          call(h().web, {
            method: 'POST',
            url: '/api/auth/login',
            payload: { email: other.owner.user.email, password: other.owner.password },
          }),
        ),
        timed(() => call(h().api, { method: 'GET', url: '/healthz' })),
      ]);
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
      }
    } finally {
      for (const client of held) client.release();
    }
  });

  it('on a Postgres server, a request statement has a deadline', async () => {
    const { rows } = await h().ctx.pg.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
    // PGlite can't interrupt a statement: there the bound is that no statement is large (docs/limits.md).
    if (h().ctx.pg.embedded) expect(rows[0]!.statement_timeout).toBe('0');
    else expect(rows[0]!.statement_timeout).toBe(`${STATEMENT_TIMEOUT_MS / 60_000}min`);
  });
});
