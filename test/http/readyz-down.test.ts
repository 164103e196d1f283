import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../src/app.js';
import type { AppContext } from '../../src/context.js';
import { openPostgres, type PostgresStore } from '../../src/stores/postgres.js';
import { call, PUBLIC, signUp, useHarness, watchPublicAnswers } from '../support/harness.js';

const h = useHarness();

/**
 * The same runtime as the harness except that Postgres is a real pool pointed at 127.0.0.1:1, where
 * nothing listens: a store that is really unreachable, not a mock.
 */
describe('/readyz with Postgres unreachable', () => {
  let downPg: PostgresStore;
  let app: FastifyInstance;

  beforeAll(async () => {
    downPg = await openPostgres(h().config, { url: 'postgres://postgres@127.0.0.1:1/sightline' });
    const ctx: AppContext = { ...h().ctx, pg: downPg };
    app = buildApiApp(ctx);
    watchPublicAnswers(app);
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await downPg?.close().catch(() => {});
  });

  it('answers 503 naming postgres, while the other stores stay ok', async () => {
    const started = Date.now();
    const res = await call(app, { method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(typeof body.detail).toBe('string');
    expect(body.detail).toContain('postgres');
    expect(body.detail).not.toContain('clickhouse');
    expect(body.detail).not.toContain('queue');
    expect(body.checks.postgres).not.toBe('ok');
    expect(body.checks.clickhouse).toBe('ok');
    expect(body.checks.queue).toBe('ok');
    expect(res.body).not.toContain('ECONNREFUSED');
    expect(res.body).not.toContain('.ts:');
    // The probe gives up within its own timeout; it doesn't hang the probe request.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('keeps answering /healthz with 200', async () => {
    const res = await call(app, { method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
  });

  it('answers an authenticated route with 503 {detail} (credential cannot be verified), not 500', async () => {
    // A real session, minted while Postgres was up; the broken app cannot look it up.
    const user = await signUp(h(), 'down');
    const res = await call(app, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token });
    expect(res.statusCode).toBe(503);
    expect(Object.keys(res.json())).toEqual(['detail']);
    expect(typeof res.json().detail).toBe('string');
    // The healthy app still serves the same session.
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: user.token })).statusCode).toBe(
      200,
    );
  });

  it('is 200 again on the healthy runtime', async () => {
    const res = await call(h().api, { method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(200);
    expect(res.json().checks.postgres).toBe('ok');
  });
});
