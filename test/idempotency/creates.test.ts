import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { call, createProject, PUBLIC, projectWithKey, signUp, useHarness, type Harness } from '../support/harness.js';
import { createDataset, createVersion, simpleCases } from '../support/datasets.js';
import { createRun } from '../support/evaluations.js';
import { KEY_REUSED_DETAIL } from '../../src/idempotency/plugin.js';

/**
 * Every create takes an Idempotency-Key (docs/idempotency.md): a retry with the
 * same key answers the first answer byte for byte and creates nothing; the same key with another
 * body answers 409. Counts are read from the stores themselves.
 */

const h = useHarness();

type Send = (body: 'a' | 'b') => InjectOptions & { token: string };
type Case = { name: string; prepare(h: Harness): Promise<{ send: Send; count: () => Promise<number> }> };

const newKey = () => crypto.randomUUID();

function keyed(options: InjectOptions & { token: string }, key: string): Promise<LightMyRequestResponse> {
  return call(h().api, {
    ...options,
    headers: { ...(options.headers as Record<string, string> | undefined), 'idempotency-key': key },
  });
}

async function rows(sql: string, params: unknown[]): Promise<number> {
  const { rows: found } = await h().ctx.pg.pool.query<{ n: number }>(sql, params);
  return found[0]!.n;
}

const CASES: Case[] = [
  {
    name: 'POST /workspaces',
    async prepare(h) {
      const user = await signUp(h, 'ws');
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/workspaces`,
          token: user.token,
          payload: { name: `team ${b}` },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM memberships WHERE user_id = $1', [user.user.id]),
      };
    },
  },
  {
    name: 'POST /workspaces/{id}/members',
    async prepare(h) {
      const admin = await signUp(h, 'admin');
      const [a, b] = [await signUp(h, 'ma'), await signUp(h, 'mb')];
      return {
        send: (v) => ({
          method: 'POST',
          url: `${PUBLIC}/workspaces/${admin.workspace.id}/members`,
          token: admin.token,
          payload: { email: (v === 'a' ? a : b).user.email, role: 'MEMBER' },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1', [admin.workspace.id]),
      };
    },
  },
  {
    name: 'POST /projects/{id}/api-keys',
    async prepare(h) {
      const owner = await signUp(h, 'keys');
      const project = await createProject(h, owner.token, owner.workspace.id);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/projects/${project.id}/api-keys`,
          token: owner.token,
          payload: { name: `key ${b}` },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /model-prices',
    async prepare(h) {
      const owner = await signUp(h, 'prices');
      const project = await createProject(h, owner.token, owner.workspace.id);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/model-prices`,
          token: owner.token,
          payload: {
            project_id: project.id,
            model_pattern: `my-model-${b}`,
            input_per_million: 1,
            output_per_million: 2,
          },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM model_prices WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /dashboards',
    async prepare(h) {
      const owner = await signUp(h, 'dash');
      const project = await createProject(h, owner.token, owner.workspace.id);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/dashboards`,
          token: owner.token,
          payload: { project_id: project.id, name: `board ${b}`, description: '' },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM dashboards WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /widgets',
    async prepare(h) {
      const owner = await signUp(h, 'widget');
      const project = await createProject(h, owner.token, owner.workspace.id);
      const board = await call(h.api, {
        method: 'POST',
        url: `${PUBLIC}/dashboards`,
        token: owner.token,
        payload: { project_id: project.id, name: 'b', description: '' },
      });
      const dashboardId = board.json().id as string;
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/widgets`,
          token: owner.token,
          payload: {
            project_id: project.id,
            dashboard_id: dashboardId,
            title: `notes ${b}`,
            type: 'markdown',
            spec: { text: b },
          },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM widgets WHERE dashboard_id = $1', [dashboardId]),
      };
    },
  },
  {
    name: 'POST /alerts',
    async prepare(h) {
      const owner = await signUp(h, 'alert');
      const project = await createProject(h, owner.token, owner.workspace.id);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/alerts`,
          token: owner.token,
          payload: { name: `slow ${b}`, project_id: project.id, view: 'SPANS', measure: 'latency', threshold: 2000 },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM alerts WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /detectors',
    async prepare(h) {
      const owner = await signUp(h, 'detector');
      const project = await createProject(h, owner.token, owner.workspace.id);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/detectors`,
          token: owner.token,
          payload: {
            project_id: project.id,
            name: `slow ${b}`,
            type: 'threshold',
            config: { measure: 'latency', operator: '>', value: 5000 },
          },
        }),
        count: () => rows('SELECT count(*)::int AS n FROM detectors WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /datasets',
    async prepare(h) {
      const { project, key } = await projectWithKey(h, 'datasets');
      return {
        send: (b) => ({ method: 'POST', url: `${PUBLIC}/datasets`, token: key.key, payload: { name: `golden ${b}` } }),
        count: () => rows('SELECT count(*)::int AS n FROM datasets WHERE project_id = $1', [project.id]),
      };
    },
  },
  {
    name: 'POST /datasets/{id}/versions',
    async prepare(h) {
      const { key } = await projectWithKey(h, 'versions');
      const dataset = await createDataset(h, key.key);
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/datasets/${dataset.id}/versions`,
          token: key.key,
          payload: { label: b, test_cases: simpleCases(b === 'a' ? 50 : 51) },
        }),
        count: () =>
          rows(
            'SELECT count(*)::int AS n FROM dataset_test_cases c JOIN dataset_versions v ON v.id = c.version_id WHERE v.dataset_id = $1',
            [dataset.id],
          ),
      };
    },
  },
  {
    name: 'POST /evaluation-runs',
    async prepare(h) {
      const { project, key } = await projectWithKey(h, 'runs');
      const dataset = await createDataset(h, key.key);
      const version = await createVersion(h, key.key, dataset.id, simpleCases(2));
      return {
        send: (b) => ({
          method: 'POST',
          url: `${PUBLIC}/evaluation-runs`,
          token: key.key,
          payload: {
            evaluation_name: 'nightly',
            dataset_version_id: version.dataset_version_id,
            candidate_version: `v-${b}`,
            environment: 'ci',
          },
        }),
        count: () =>
          rows(
            'SELECT count(*)::int AS n FROM evaluation_runs r JOIN evaluations e ON e.id = r.evaluation_id WHERE e.project_id = $1',
            [project.id],
          ),
      };
    },
  },
];

describe('a retried create with the same Idempotency-Key', () => {
  for (const c of CASES) {
    it(`${c.name}: answers the first answer, creates nothing; another body with the key is a 409`, async () => {
      const { send, count } = await c.prepare(h());
      const key = newKey();
      const before = await count();
      const first = await keyed(send('a'), key);
      expect(first.statusCode, first.body.slice(0, 300)).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const created = await count();
      expect(created).toBeGreaterThan(before);

      const again = await keyed(send('a'), key);
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers['content-type']).toBe(first.headers['content-type']);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(await count()).toBe(created);

      const other = await keyed(send('b'), key);
      expect(other.statusCode, other.body).toBe(409);
      expect(other.json()).toEqual({ detail: KEY_REUSED_DETAIL });
      expect(await count()).toBe(created);

      // Without a key (or with a new one) the same request creates again, as before.
      const fresh = await keyed(send('b'), newKey());
      expect(fresh.statusCode).toBe(201);
      expect(await count()).toBeGreaterThan(created);
    });
  }
});

describe('results and completion of a run', () => {
  async function runWithCases() {
    const { project, key } = await projectWithKey(h(), 'results');
    const dataset = await createDataset(h(), key.key);
    const version = await createVersion(h(), key.key, dataset.id, simpleCases(3));
    const run = await createRun(h(), key.key, version.dataset_version_id);
    const results = version.items.map((item, i) => ({
      test_case_id: item.test_case_id,
      output: `out ${i}`,
      scores: [{ name: 'exact', value: i % 2 === 0 }],
    }));
    return { project, key, run, results };
  }

  /** Postgres revisions summed (a replacement counts up) and the ClickHouse copy's rows before merges. */
  async function writes(runId: string): Promise<{ revisions: number; copies: number }> {
    const revisions = await rows(
      'SELECT COALESCE(sum(revision), 0)::int AS n FROM evaluation_results WHERE run_id = $1',
      [runId],
    );
    const result = await h().ctx.ch.client.query({
      query: 'SELECT count() AS n FROM evaluation_results WHERE evaluation_run_id = {run:String}',
      query_params: { run: runId },
      format: 'JSONEachRow',
    });
    const [{ n }] = await result.json<{ n: string }>();
    return { revisions, copies: Number(n) };
  }

  it('POST /evaluation-runs/{id}/results: the retry writes nothing to either store and answers the same', async () => {
    const { key, run, results } = await runWithCases();
    const url = `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/results`;
    const idem = newKey();
    const first = await keyed({ method: 'POST', url, token: key.key, payload: { results } }, idem);
    expect(first.statusCode, first.body).toBe(200);
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 3, copies: 3 });

    const again = await keyed({ method: 'POST', url, token: key.key, payload: { results } }, idem);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 3, copies: 3 });

    const other = await keyed({ method: 'POST', url, token: key.key, payload: { results: results.slice(1) } }, idem);
    expect(other.statusCode).toBe(409);
    // A retry without the key replaces the results (the spec's rule): each revision counts up.
    const unkeyed = await call(h().api, { method: 'POST', url, token: key.key, payload: { results } });
    expect(unkeyed.statusCode).toBe(200);
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 6, copies: 6 });
  });

  it('POST /evaluation-runs/{id}/complete: the retry answers the first answer; the key with another body is a 409', async () => {
    const { key, run, results } = await runWithCases();
    await keyed(
      {
        method: 'POST',
        url: `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/results`,
        token: key.key,
        payload: { results },
      },
      newKey(),
    );
    const url = `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/complete`;
    const idem = newKey();
    const first = await keyed({ method: 'POST', url, token: key.key }, idem);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().status).toBe('completed');
    const again = await keyed({ method: 'POST', url, token: key.key }, idem);
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // A body where there was none is another request: the key's 409, not the run's.
    const other = await keyed({ method: 'POST', url, token: key.key, payload: { status: 'completed' } }, idem);
    expect(other.json()).toEqual({ detail: KEY_REUSED_DETAIL });
    // Completion is idempotent by itself too (docs/datasets.md): a plain retry answers the same run.
    expect((await call(h().api, { method: 'POST', url, token: key.key })).json()).toEqual(first.json());
  });
});
