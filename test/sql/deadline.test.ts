import { describe, expect, it } from 'vitest';
import { sqlScheduler } from '../../src/sql/service.js';
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
import { memberWithRole } from '../support/accounts.js';
import { waitUntil } from '../support/wait.js';
import { tick } from '../signals/support.js';

/**
 * Issue 20, finding 2: public SQL has a real deadline and a share per user and workspace.
 *
 * The issue's request: `editDistance` over 40,000-character strings, 20 rows from arrayJoin, three
 * at once from two projects of one user; it ran 220 s past the 10 s limit (the engine checks the
 * limit between blocks, and all 20 rows were one block) and took every engine session. Scaled here
 * to 4,000 characters and a 2 s limit (SQL_TIME_LIMIT_SECONDS).
 *
 * The deadline is shown on a query the guard still runs and the engine can't interrupt: forty rows
 * made by arrayJoin (one block) of a regular expression replacing every character of a 2 MB string,
 * 0.15 to 0.7 s a row on this machine depending on its load, so 6 s or more in all: past the 2 s
 * limit however quiet the machine (twelve rows once finished inside it on a quiet run). Stated
 * bound: the caller is answered within 2x the limit after sending it. Another tenant's query is
 * answered while that query still holds its share.
 */

const LIMIT_S = 2;
const h = useHarness({
  SQL_SESSIONS: '3',
  SQL_MAX_CONCURRENT_PER_PROJECT: '2',
  SQL_MAX_CONCURRENT_PER_USER: '2',
  SQL_MAX_CONCURRENT_PER_WORKSPACE: '2',
  SQL_QUEUE_PER_PROJECT: '4',
  SQL_TIME_LIMIT_SECONDS: String(LIMIT_S),
});

const ISSUE_QUERY =
  "SELECT sum(editDistance(concat(toString(i), repeat('a', 4000)), concat(repeat('b', 4000), toString(i)))) AS d " +
  'FROM (SELECT arrayJoin(arrayEnumerate(arrayResize(array(1), 20))) AS i) AS x';
const ONE_BLOCK =
  "SELECT sum(length(replaceRegexpAll(concat(toString(i), repeat('ab', 1000000)), '(a|b)', 'x'))) AS n " +
  'FROM (SELECT arrayJoin(arrayEnumerate(arrayResize(array(1), 40))) AS i) AS x';

const post = (hh: Harness, token: string, query: string, projectId?: string) =>
  call(hh.api, {
    method: 'POST',
    url: `${PUBLIC}/sql`,
    token,
    payload: projectId ? { query, project_id: projectId } : { query },
  });

/** One user with a project (and key) in their own workspace and one in a second workspace. */
async function twoProjectsOneUser(hh: Harness) {
  const first = await projectWithKey(hh, 'attacker');
  const ws = await call(hh.api, {
    method: 'POST',
    url: `${PUBLIC}/workspaces`,
    token: first.owner.token,
    payload: { name: 'second' },
  });
  expect(ws.statusCode, ws.body).toBe(201);
  const project2 = await createProject(hh, first.owner.token, ws.json().id);
  const key2 = await createApiKey(hh, first.owner.token, project2.id);
  return { user: first.owner, p1: first.project, k1: first.key.key, p2: project2, k2: key2.key };
}

describe('public SQL deadline and shares (issue 20)', () => {
  it("the issue's editDistance query is refused by the guard, on POST /sql and as a sql detector", async () => {
    const a = await twoProjectsOneUser(h());
    const res = await post(h(), a.k1, ISSUE_QUERY);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().detail).toMatch(
      /^query refused: function editDistance is not allowed: its cost grows with the product/,
    );
    const detector = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/detectors`,
      token: a.user.token,
      payload: {
        project_id: a.p2.id,
        name: 'distance',
        type: 'sql',
        config: { query: `SELECT trace_id FROM traces WHERE ${ISSUE_QUERY.slice(7, 120)} > 0` },
      },
    });
    expect([400, 422], detector.body).toContain(detector.statusCode);
    expect(detector.body).toMatch(/editDistance/);
  });

  it(
    'three one-block queries of one user from two projects: answered by the deadline, two sessions at most, another tenant answered meanwhile',
    { timeout: 180_000 },
    async () => {
      const a = await twoProjectsOneUser(h());
      const b = await projectWithKey(h(), 'bystander');
      const scheduler = sqlScheduler(h().ctx);
      const sent = performance.now();
      const timed = (p: ReturnType<typeof post>) => p.then((res) => ({ res, ms: performance.now() - sent }));
      const first = [timed(post(h(), a.k1, ONE_BLOCK)), timed(post(h(), a.k2, ONE_BLOCK))];
      await waitUntil(() => scheduler.runningFor('user', a.user.user.id) === 2, "the user's first two queries running");
      const third = timed(post(h(), a.k1, ONE_BLOCK));
      await waitUntil(() => scheduler.load(a.p1.id).waiting === 1, "the user's third query waiting");
      // A session is free, but the user's share is taken: the third waits.
      expect(scheduler.runningFor('user', a.user.user.id)).toBe(2);

      const answered = await Promise.all(first);
      for (const { res, ms } of answered) {
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().detail).toBe(
          `query exceeded the time limit of ${LIMIT_S} s; narrow the time range or aggregate more`,
        );
        expect(ms, 'answered within 2x the time limit').toBeLessThan(2 * LIMIT_S * 1000);
      }
      // Both callers have their answer, and the engine is still on their one block: the shares stay taken.
      expect(scheduler.runningFor('user', a.user.user.id)).toBe(2);
      const other = await post(h(), b.key.key, 'SELECT count() AS n FROM traces');
      expect(other.statusCode, other.body).toBe(200);
      expect(
        scheduler.runningFor('user', a.user.user.id),
        "another tenant answered while the user's queries still ran",
      ).toBe(2);

      const last = await third;
      expect([400, 429], last.res.body).toContain(last.res.statusCode);
      await waitUntil(
        () => scheduler.runningFor('user', a.user.user.id) === 0,
        'the engine done with every query',
        150_000,
      );
      const after = await post(h(), a.k2, 'SELECT 1 AS one');
      expect(after.statusCode, after.body).toBe(200);
    },
  );

  it('three members of one workspace, a project each, share the workspace share', { timeout: 180_000 }, async () => {
    const admin = await signUp(h(), 'team');
    const projects: { id: string; key: string }[] = [];
    for (const user of [
      admin,
      await memberWithRole(h(), admin, admin.workspace.id, 'ADMIN'),
      await memberWithRole(h(), admin, admin.workspace.id, 'ADMIN'),
    ]) {
      const project = await createProject(h(), user.token, admin.workspace.id);
      projects.push({ id: project.id, key: (await createApiKey(h(), user.token, project.id)).key });
    }
    const scheduler = sqlScheduler(h().ctx);
    const runs = projects.map((p) => post(h(), p.key, ONE_BLOCK));
    const waiting = () => projects.reduce((n, p) => n + scheduler.load(p.id).waiting, 0);
    await waitUntil(
      () => scheduler.runningFor('workspace', admin.workspace.id) === 2 && waiting() === 1,
      "two of the workspace's queries running, one waiting",
    );
    // Three users, three projects, a free session: the third waits for the workspace's share.
    expect(scheduler.runningFor('workspace', admin.workspace.id)).toBe(2);
    for (const res of await Promise.all(runs)) expect([400, 429], res.body).toContain(res.statusCode);
    await waitUntil(
      () => scheduler.runningFor('workspace', admin.workspace.id) === 0,
      'the engine done with every query',
      150_000,
    );
  });

  it(
    "a sql detector's run keeps the same deadline and counts against its creator's and workspace's share",
    { timeout: 180_000 },
    async () => {
      const { owner, project } = await projectWithKey(h(), 'detecting');
      const created = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/detectors`,
        token: owner.token,
        payload: {
          project_id: project.id,
          name: 'one block',
          type: 'sql',
          config: { query: `SELECT toString(n) AS trace_id FROM (${ONE_BLOCK}) AS q`, interval_minutes: 1 },
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const scheduler = sqlScheduler(h().ctx);
      await tick(h(), project.id);
      // The pass has its answer (the time limit) while the engine still holds the detector's query.
      expect(scheduler.runningFor('user', owner.user.id)).toBe(1);
      expect(scheduler.runningFor('workspace', owner.workspace.id)).toBe(1);
      const { rows } = await h().ctx.pg.pool.query('SELECT last_error FROM detectors WHERE id = $1', [
        created.json().id,
      ]);
      expect(rows[0].last_error).toContain(`time limit of ${LIMIT_S} s`);
      await waitUntil(
        () => scheduler.runningFor('user', owner.user.id) === 0,
        'the engine done with the query',
        150_000,
      );
    },
  );
});
