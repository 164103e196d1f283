import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../src/app.js';
import { buildWebApp } from '../../src/web/app.js';
import { call, projectWithKey, PUBLIC, uniqueEmail, useHarness, watchPublicAnswers } from '../support/harness.js';

/**
 * Per-identity budgets (src/rate-limits.ts): the API key, the user (whatever credential of theirs),
 * the client address; ingest apart; logins per address and e-mail. With REDIS_URL set (CI), a second
 * api instance on the same Redis draws on the same budget, as a second API process would.
 */

const h = useHarness({
  RATE_LIMIT_PER_MINUTE: '6',
  RATE_LIMIT_INGEST_PER_MINUTE: '3',
  RATE_LIMIT_LOGIN_PER_MINUTE: '3',
});
let second: FastifyInstance;
beforeAll(async () => {
  second = buildApiApp(h().ctx);
  watchPublicAnswers(second);
  await second.ready();
});
afterAll(async () => second.close());

function expect429(res: Awaited<ReturnType<typeof call>>) {
  expect(res.statusCode, res.body).toBe(429);
  expect(Object.keys(res.json())).toEqual(['detail']);
  expect(res.json().detail).toMatch(/^rate limit exceeded: at most \d+ requests per minute/);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(res.headers['ratelimit-limit']).toBeDefined();
  expect(res.headers['ratelimit-remaining']).toBe('0');
}

describe('rate limits', () => {
  it('an API key gets its budget, counted across api processes when Redis holds the counters; ingest has its own', async () => {
    const { key } = await projectWithKey(h());
    const apps = [h().api, second];
    for (let i = 0; i < 6; i++) {
      const res = await call(apps[i % 2]!, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(process.env.REDIS_URL ? 5 - i : 5 - Math.floor(i / 2)));
      if (!process.env.REDIS_URL && i === 2) break;
    }
    if (process.env.REDIS_URL)
      expect429(await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key }));
    // Ingest draws on its own budget.
    const span = { trace_id: 't', span_id: 's', name: 'n', start_time: new Date().toISOString() };
    for (let i = 0; i < 3; i++)
      expect(
        (await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key.key, payload: { spans: [span] } }))
          .statusCode,
      ).toBe(200);
    expect429(
      await call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token: key.key, payload: { spans: [span] } }),
    );
  });

  it("a user's budget is the user's, not one per credential; another user is not affected", async () => {
    const a = await projectWithKey(h(), 'rl-a'); // two API requests with a's session: create project, create key
    const b = await projectWithKey(h(), 'rl-b');
    const minted = await call(h().web, { method: 'POST', url: '/api/cli/token', token: a.owner.token });
    expect(minted.statusCode, minted.body).toBe(200);
    let answered = 0;
    while (
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: a.owner.token })).statusCode === 200
    )
      answered++;
    // With Redis the web process's request counted too: one budget for the user everywhere.
    expect(answered).toBe(6 - 2 - (process.env.REDIS_URL ? 1 : 0));
    expect429(await call(h().api, { method: 'GET', url: `${PUBLIC}/projects`, token: minted.json().accessToken }));
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: b.owner.token })).statusCode).toBe(
      200,
    );
  });

  it('logins are limited per address and e-mail: a guessed password stops being tried, other accounts still log in', async () => {
    const web = buildWebApp(h().ctx);
    await web.ready();
    try {
      const victim = uniqueEmail('victim');
      await call(web, {
        method: 'POST',
        url: '/api/auth/signup',
        payload: { email: victim, password: 'correct horse battery', name: 'V' },
      });
      for (let i = 0; i < 3; i++)
        expect(
          (
            await call(web, {
              method: 'POST',
              url: '/api/auth/login',
              payload: { email: victim, password: `guess-${i}-xx` },
            })
          ).statusCode,
        ).toBe(401);
      expect429(
        await call(web, {
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: victim, password: 'correct horse battery' },
        }),
      );
      const other = uniqueEmail('other');
      await call(web, {
        method: 'POST',
        url: '/api/auth/signup',
        payload: { email: other, password: 'correct horse battery', name: 'O' },
      });
      expect(
        (
          await call(web, {
            method: 'POST',
            url: '/api/auth/login',
            payload: { email: other, password: 'correct horse battery' },
          })
        ).statusCode,
      ).toBe(200);
    } finally {
      await web.close();
    }
  });
});
