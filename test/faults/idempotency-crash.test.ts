import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/harness.js';
import { freePort } from '../support/private-servers.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * Retried creates across a crash (issue 24; docs/idempotency.md): a real `npm start` process on
 * embedded stores of its own SIGKILLs itself inside a keyed create, right before or right after the
 * create's commit (IDEMPOTENCY_TEST_CRASH, config.ts), so the client never gets an answer. Restarted
 * on the same data, the client retries with the same key, and exactly one of the resource exists:
 * - before the commit, nothing of the first attempt is there, and the retry creates it, once;
 * - after the commit, the resource is there, and the retry answers the stored answer.
 * For a 5,000-case dataset version, an alert, a dashboard and evaluation results (copied to ClickHouse).
 */

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

type Server = ServerProcess & { api: string; web: string };

/** The server of `npm start` on `dir`, killing itself at `crash` inside the next keyed create. */
async function startServer(dir: string, crash?: 'before_commit' | 'after_commit'): Promise<Server> {
  const [port, webPort] = [await freePort(), await freePort()];
  const env: Record<string, string> = { SEED_DEMO: 'false', ...(crash ? { IDEMPOTENCY_TEST_CRASH: crash } : {}) };
  const server = await startServerProcess({ mode: 'all', dataDir: dir, port, webPort, env });
  children.push(server.child);
  return { ...server, api: `http://127.0.0.1:${port}/api/v1/public`, web: `http://127.0.0.1:${webPort}` };
}

async function json(url: string, token: string, init: { method?: string; body?: unknown; key?: string } = {}) {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.key ? { 'idempotency-key': init.key } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    body: text ? JSON.parse(text) : undefined,
    replayed: res.headers.get('idempotent-replayed'),
  };
}

/** An account, a project, an API key, a dataset, and a run of a 3-case version, made with plain (unkeyed) requests. */
async function setUp(server: Server) {
  const email = `crash-${crypto.randomBytes(4).toString('hex')}@example.test`;
  const signup = await fetch(`${server.web}/api/auth/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery', name: 'Crash' }),
  });
  const { session_token: token, workspace } = (await signup.json()) as {
    session_token: string;
    workspace: { id: string };
  };
  const project = await json(`${server.api}/projects`, token, {
    method: 'POST',
    body: { name: 'crashes', workspace_id: workspace.id },
  });
  const key = await json(`${server.api}/projects/${project.body.id}/api-keys`, token, {
    method: 'POST',
    body: { name: 'ci' },
  });
  const dataset = await json(`${server.api}/datasets`, key.body.key, { method: 'POST', body: { name: 'golden' } });
  const apiKey = key.body.key as string;
  // The run's version lives in a dataset of its own: the crashed version create counts the first one's.
  const other = await json(`${server.api}/datasets`, apiKey, { method: 'POST', body: { name: 'small' } });
  const small = await json(`${server.api}/datasets/${other.body.id}/versions`, apiKey, {
    method: 'POST',
    body: { test_cases: [1, 2, 3].map((i) => ({ input: { q: i }, expected: `a${i}` })) },
  });
  const run = await json(`${server.api}/evaluation-runs`, apiKey, {
    method: 'POST',
    body: {
      evaluation_name: 'nightly',
      dataset_version_id: small.body.dataset_version_id,
      candidate_version: 'v1',
      environment: 'ci',
    },
  });
  expect([project.status, key.status, dataset.status, small.status, run.status]).toEqual([201, 201, 201, 201, 201]);
  const caseIds = (small.body.items as { test_case_id: string }[]).map((c) => c.test_case_id);
  return {
    token,
    projectId: project.body.id as string,
    apiKey,
    datasetId: dataset.body.id as string,
    runId: run.body.evaluation_run_id as string,
    caseIds,
  };
}

type Account = Awaited<ReturnType<typeof setUp>>;

/** One create each: its request (always the same bytes), its status, and how many of it exist (`one` once created). */
function creates(account: Account) {
  const results = account.caseIds.map((id, i) => ({
    test_case_id: id,
    output: `out ${i}`,
    scores: [{ name: 'exact', value: i === 0 }],
  }));
  const cases = Array.from({ length: 5000 }, (_, i) => ({
    input: { question: `q${i}`, context: 'c'.repeat(100) },
    expected: `a${i}`,
    metadata: { i },
  }));
  return [
    {
      name: 'dataset version (5,000 cases)',
      status: 201,
      one: 1,
      send: (s: Server, key: string) =>
        json(`${s.api}/datasets/${account.datasetId}/versions`, account.apiKey, {
          method: 'POST',
          body: { label: 'crash', test_cases: cases },
          key,
        }),
      async count(s: Server) {
        const dataset = await json(`${s.api}/datasets/${account.datasetId}`, account.apiKey);
        const versions = dataset.body.versions as { test_case_count: number }[];
        for (const v of versions) expect(v.test_case_count).toBe(5000);
        return versions.length;
      },
    },
    {
      name: 'alert',
      status: 201,
      one: 1,
      send: (s: Server, key: string) =>
        json(`${s.api}/alerts`, account.token, {
          method: 'POST',
          body: {
            name: 'crash alert',
            project_id: account.projectId,
            view: 'SPANS',
            measure: 'latency',
            threshold: 2000,
          },
          key,
        }),
      async count(s: Server) {
        const alerts = await json(`${s.api}/alerts?project_id=${account.projectId}`, account.token);
        return (alerts.body.data as { name: string }[]).filter((a) => a.name === 'crash alert').length;
      },
    },
    {
      name: 'dashboard',
      status: 201,
      one: 1,
      send: (s: Server, key: string) =>
        json(`${s.api}/dashboards`, account.token, {
          method: 'POST',
          body: { project_id: account.projectId, name: 'crash board', description: '' },
          key,
        }),
      async count(s: Server) {
        const boards = await json(`${s.api}/dashboards?project_id=${account.projectId}`, account.token);
        return (boards.body.data as { name: string }[]).filter((d) => d.name === 'crash board').length;
      },
    },
    {
      // Results are also copied to ClickHouse before the commit: public SQL must see each once.
      name: 'evaluation results (3)',
      status: 200,
      one: 3,
      send: (s: Server, key: string) =>
        json(`${s.api}/evaluation-runs/${account.runId}/results`, account.apiKey, {
          method: 'POST',
          body: { results },
          key,
        }),
      async count(s: Server) {
        const run = await json(`${s.api}/evaluation-runs/${account.runId}`, account.apiKey);
        return run.body.result_count as number;
      },
      // Once retried, public SQL (the ClickHouse copy, read with FINAL) shows each result once, not twice.
      async settled(s: Server) {
        const sql = await json(`${s.api}/sql`, account.apiKey, {
          method: 'POST',
          body: { query: `SELECT count() AS n FROM evaluation_results WHERE evaluation_run_id = '${account.runId}'` },
        });
        expect(Number(sql.body.rows[0][0])).toBe(3);
      },
    },
  ];
}

describe.each(['before_commit', 'after_commit'] as const)('SIGKILL %s of a keyed create', (point) => {
  it('then a retry with the same key leaves exactly one of each resource', { timeout: 600_000 }, async () => {
    const dir = tempDataDir(`idem-${point}`);
    dirs.push(dir);
    let server = await startServer(dir, point);
    const account = await setUp(server);
    const list = creates(account);
    const keys = list.map(() => crypto.randomUUID());

    for (const [i, create] of list.entries()) {
      // The server dies inside the create: the client gets no answer at all.
      await expect(create.send(server, keys[i]!), create.name).rejects.toThrow();
      expect(await server.exited).toBe('SIGKILL');
      server = await startServer(dir, i < list.length - 1 ? point : undefined);
    }

    for (const [i, create] of list.entries()) {
      // Before the commit nothing of the create was kept; after it, all of it was.
      expect(await create.count(server), create.name).toBe(point === 'before_commit' ? 0 : create.one);
      const retry = await create.send(server, keys[i]!);
      expect(retry.status, `${create.name}: ${retry.text.slice(0, 200)}`).toBe(create.status);
      expect(retry.replayed, create.name).toBe(point === 'before_commit' ? null : 'true');
      expect(await create.count(server), create.name).toBe(create.one);
      const again = await create.send(server, keys[i]!);
      expect(again.text).toBe(retry.text);
      expect(again.replayed).toBe('true');
      expect(await create.count(server), create.name).toBe(create.one);
      if ('settled' in create && create.settled) await create.settled(server);
    }
    server.child.kill('SIGTERM');
    await server.exited;
  });
});
