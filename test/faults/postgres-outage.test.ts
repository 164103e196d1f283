import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { startPrivatePostgres, waitFor, type PrivatePostgres } from '../support/private-servers.js';

/**
 * Postgres stopped while ingest and reads run (a server of this test's own, stopped and started with
 * pg_ctl): credential checks answer 503 with Retry-After, never 401 or 500; every span acknowledged
 * with a 200 is stored; service resumes by itself once Postgres is back.
 */

let pg: PrivatePostgres;

// The server starts first; the harness opens on it and closes before it is destroyed (hooks unwind in reverse).
beforeAll(async () => {
  pg = await startPrivatePostgres();
});
afterAll(async () => {
  await pg?.destroy();
});
const h = useHarness(() => ({ DATABASE_URL: pg.url }));

describe('Postgres outage', () => {
  it(
    'answers 503 (never 401 or 500) while Postgres is down, loses no acknowledged span, and recovers by itself',
    { timeout: 120_000 },
    async () => {
      const { key, owner, project } = await projectWithKey(h(), 'outage');
      const acked: string[] = [];
      const statuses = new Map<number, number>();
      let n = 0;
      const ingestOne = async () => {
        const id = `s${n++}`;
        const res = await call(h().api, {
          method: 'POST',
          url: `${PUBLIC}/traces`,
          token: key.key,
          payload: { spans: [{ trace_id: `t-${id}`, span_id: id, name: 'op', start_time: new Date().toISOString() }] },
        });
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        if (res.statusCode === 200) acked.push(id);
        if (res.statusCode === 503) expect(res.headers['retry-after']).toBeDefined();
        return res.statusCode;
      };
      const readOne = async () => {
        for (const token of [key.key, owner.token]) {
          const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces?project_id=${project.id}`, token });
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode !== 200) expect(res.json(), res.body).toHaveProperty('detail');
        }
      };
      for (let i = 0; i < 5; i++) expect(await ingestOne()).toBe(200);

      // Traffic keeps flowing while Postgres stops and starts again.
      let running = true;
      const traffic = (async () => {
        while (running) await Promise.all([ingestOne(), readOne()]);
      })();
      await pg.stop();
      const down = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
      expect(down.statusCode, down.body).toBe(503);
      expect(down.headers['retry-after']).toBeDefined();
      // Traffic meets the outage for a while (several answers while down) before Postgres returns.
      const downSince = statuses.get(503) ?? 0;
      await waitFor(() => (statuses.get(503) ?? 0) >= downSince + 10, 'traffic to meet the outage');
      await pg.start();
      await waitFor(
        async () =>
          (await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key })).statusCode === 200,
        'recovery',
        60_000,
      );
      running = false;
      await traffic;
      expect(await ingestOne()).toBe(200);

      expect(statuses.has(401), JSON.stringify([...statuses])).toBe(false);
      expect(statuses.has(500), JSON.stringify([...statuses])).toBe(false);
      expect(statuses.get(503) ?? 0).toBeGreaterThan(0);
      // Every acknowledged span is stored.
      const stored = await h().ctx.ch.client.query({
        query: `SELECT count() AS n FROM ${h().ctx.ch.database}.spans WHERE project_id = {p:String} AND span_id IN {ids:Array(String)}`,
        query_params: { p: project.id, ids: acked },
        format: 'JSONEachRow',
      });
      expect(Number((await stored.json<{ n: string }>())[0]!.n)).toBe(acked.length);
    },
  );
});
