import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { call, createProject, PUBLIC, projectWithKey, signUp, useHarness } from '../support/harness.js';
import { expectDetail } from '../support/expect.js';
import { APP_API_PREFIX } from '../../src/web/app-api.js';
import { INVALID_KEY_DETAIL, KEY_REUSED_DETAIL } from '../../src/idempotency/plugin.js';
import { keyHash } from '../../src/idempotency/seal.js';

/**
 * The rules of the Idempotency-Key around the creates (docs/idempotency.md): what a key is, whose it
 * is, what counts as the same request, what a failed request leaves, concurrent duplicates, expiry,
 * what the store keeps, and what the OpenAPI document says.
 */

const h = useHarness();
const newKey = () => crypto.randomUUID();

function send(options: InjectOptions & { token: string }, key: string, app = h().api): Promise<LightMyRequestResponse> {
  return call(app, {
    ...options,
    headers: { ...(options.headers as Record<string, string> | undefined), 'idempotency-key': key },
  });
}

async function owned(label = 'owner') {
  const owner = await signUp(h(), label);
  const project = await createProject(h(), owner.token, owner.workspace.id);
  const dashboards = async () => {
    const { rows } = await h().ctx.pg.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dashboards WHERE project_id = $1',
      [project.id],
    );
    return rows[0]!.n;
  };
  const board = (name = 'board') => ({
    method: 'POST' as const,
    url: `${PUBLIC}/dashboards`,
    token: owner.token,
    payload: { project_id: project.id, name, description: '' },
  });
  return { owner, project, dashboards, board };
}

describe('the key itself', () => {
  it('is 1 to 255 printable ASCII characters; anything else is a 400 that says so, and creates nothing', async () => {
    const { board, dashboards } = await owned();
    const before = await dashboards();
    for (const bad of ['', 'x'.repeat(256), 'clé', 'tab\there']) {
      const res = await send(board(), bad);
      expectDetail(res, 400, INVALID_KEY_DETAIL);
    }
    expect(await dashboards()).toBe(before);
    for (const good of ['k', 'x'.repeat(255), ' spaced key ~!@#$%^&*() '])
      expect((await send(board(), good)).statusCode).toBe(201);
  });

  it('is checked after the credential: an unauthenticated request is a 401 whatever its key', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/dashboards`,
      payload: {},
      headers: { 'idempotency-key': '' },
    });
    expect(res.statusCode).toBe(401);
  });

  it('is ignored by routes that create nothing', async () => {
    const { owner, project, board } = await owned();
    const created = (await send(board(), newKey())).json();
    const key = newKey();
    const patch = {
      method: 'PATCH' as const,
      url: `${PUBLIC}/dashboards/${created.id}`,
      token: owner.token,
      payload: { project_id: project.id, name: 'renamed' },
    };
    expect((await send(patch, key)).headers['idempotent-replayed']).toBeUndefined();
    const again = await send({ ...patch, payload: { project_id: project.id, name: 'renamed again' } }, key);
    expect(again.statusCode).toBe(200);
    expect(again.json().name).toBe('renamed again');
  });
});

describe('the same request', () => {
  it('is the same method, path with query and body: another path with the key is a 409', async () => {
    const { key } = await projectWithKey(h(), 'paths');
    const idem = newKey();
    expect(
      (await send({ method: 'POST', url: `${PUBLIC}/datasets`, token: key.key, payload: { name: 'd' } }, idem))
        .statusCode,
    ).toBe(201);
    const withQuery = await send(
      {
        method: 'POST',
        url: `${PUBLIC}/datasets?project_id=${crypto.randomUUID()}`,
        token: key.key,
        payload: { name: 'd' },
      },
      idem,
    );
    expectDetail(withQuery, 409, KEY_REUSED_DETAIL);
    const web = await send(
      { method: 'POST', url: `${APP_API_PREFIX}/datasets`, token: key.key, payload: { name: 'd' } },
      idem,
      h().web,
    );
    expectDetail(web, 409, KEY_REUSED_DETAIL);
  });

  it('is the same body byte for byte: the same values written differently are another request', async () => {
    const { board } = await owned();
    const idem = newKey();
    const body = board().payload;
    const compact = JSON.stringify(body);
    const spaced = JSON.stringify(body, null, 2);
    const first = await send({ ...board(), payload: compact, headers: { 'content-type': 'application/json' } }, idem);
    expect(first.statusCode).toBe(201);
    expect(
      (await send({ ...board(), payload: compact, headers: { 'content-type': 'application/json' } }, idem)).body,
    ).toBe(first.body);
    expectDetail(
      await send({ ...board(), payload: spaced, headers: { 'content-type': 'application/json' } }, idem),
      409,
      KEY_REUSED_DETAIL,
    );
  });
});

describe('whose key', () => {
  it("is the credential's: another user's same key creates their own; the same user's other session replays", async () => {
    const a = await owned('a');
    const idem = newKey();
    const first = await send(a.board(), idem);
    expect(first.statusCode).toBe(201);

    const login = await call(h().web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: a.owner.user.email, password: a.owner.password },
    });
    const otherSession = login.json().session_token as string;
    expect(otherSession).not.toBe(a.owner.token);
    const replayed = await send({ ...a.board(), token: otherSession }, idem);
    expect(replayed.body).toBe(first.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await a.dashboards()).toBe(2);

    const b = await owned('b');
    const theirs = await send(b.board(), idem);
    expect(theirs.statusCode).toBe(201);
    expect(theirs.json().id).not.toBe(first.json().id);
  });

  it("is an API key's own: a second key of the same project creates again", async () => {
    const { owner, project, key } = await projectWithKey(h(), 'twokeys');
    const second = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/projects/${project.id}/api-keys`,
      token: owner.token,
      payload: { name: 'second' },
    });
    const idem = newKey();
    const one = await send({ method: 'POST', url: `${PUBLIC}/datasets`, token: key.key, payload: { name: 'd' } }, idem);
    const two = await send(
      { method: 'POST', url: `${PUBLIC}/datasets`, token: second.json().key, payload: { name: 'd' } },
      idem,
    );
    expect([one.statusCode, two.statusCode]).toEqual([201, 201]);
    expect(one.json().id).not.toBe(two.json().id);
  });
});

describe('a request that fails', () => {
  it('leaves nothing, key included: the corrected request with the same key creates, once', async () => {
    const { board, dashboards, project } = await owned();
    const idem = newKey();
    const invalid = await send({ ...board(), payload: { project_id: project.id } }, idem);
    expect(invalid.statusCode).toBe(422);
    const missing = await send(
      { ...board(), payload: { project_id: crypto.randomUUID(), name: 'x', description: '' } },
      idem,
    );
    expect(missing.statusCode).toBe(404);
    expect(await dashboards()).toBe(1);
    const created = await send(board(), idem);
    expect(created.statusCode).toBe(201);
    expect((await send(board(), idem)).body).toBe(created.body);
    expect(await dashboards()).toBe(2);
  });
});

describe('concurrent duplicates', () => {
  it('run once: the others wait for the first and answer its answer', async () => {
    const { board, dashboards } = await owned();
    const idem = newKey();
    const answers = await Promise.all([send(board(), idem), send(board(), idem), send(board(), idem)]);
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(2);
    expect(await dashboards()).toBe(2);
  });
});

describe('24 hours', () => {
  it('after which the key is free again, and expired rows are purged', async () => {
    const { board, dashboards, owner } = await owned();
    const idem = newKey();
    const first = await send(board(), idem);
    const pool = h().ctx.pg.pool;
    const age = (hours: number) =>
      pool.query(
        `UPDATE idempotency_keys SET created_at = now() - make_interval(hours => $3) WHERE credential = $1 AND key_hash = $2`,
        [`user:${owner.user.id}`, keyHash(idem), hours],
      );
    await age(23);
    expect((await send(board(), idem)).body).toBe(first.body);
    await age(25);
    const later = await send(board(), idem);
    expect(later.statusCode).toBe(201);
    expect(later.json().id).not.toBe(first.json().id);
    expect(await dashboards()).toBe(3);

    // An expired row of another key goes with the next keyed create of anyone.
    const stale = newKey();
    await send(board(), stale);
    await pool.query(`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key_hash = $1`, [
      keyHash(stale),
    ]);
    await send(board(), newKey());
    const left = await pool.query('SELECT 1 FROM idempotency_keys WHERE key_hash = $1', [keyHash(stale)]);
    expect(left.rowCount).toBe(0);
  });
});

describe('what the store keeps', () => {
  it('neither the key nor a readable answer: a new API key and a webhook secret are sealed', async () => {
    const { owner, project } = await owned();
    const idem = newKey();
    const created = await send(
      { method: 'POST', url: `${PUBLIC}/projects/${project.id}/api-keys`, token: owner.token, payload: { name: 'ci' } },
      idem,
    );
    const secret = created.json().key as string;
    const { rows } = await h().ctx.pg.pool.query<{ key_hash: Buffer; answer: Buffer }>(
      'SELECT key_hash, answer FROM idempotency_keys WHERE credential = $1',
      [`user:${owner.user.id}`],
    );
    expect(rows).toHaveLength(1);
    const stored = Buffer.concat([rows[0]!.key_hash, rows[0]!.answer]);
    expect(stored.includes(secret)).toBe(false);
    expect(stored.includes(idem)).toBe(false);
    // The replay opens it: the same key, usable.
    const again = await send(
      { method: 'POST', url: `${PUBLIC}/projects/${project.id}/api-keys`, token: owner.token, payload: { name: 'ci' } },
      idem,
    );
    expect(again.json().key).toBe(secret);
    expect((await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: secret })).statusCode).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  const CREATES = [
    'post /api/v1/public/workspaces',
    'post /api/v1/public/workspaces/{workspace_id}/members',
    'post /api/v1/public/projects/{project_id}/api-keys',
    'post /api/v1/public/dashboards',
    'post /api/v1/public/widgets',
    'post /api/v1/public/alerts',
    'post /api/v1/public/detectors',
    'post /api/v1/public/datasets',
    'post /api/v1/public/datasets/{dataset_id}/versions',
    'post /api/v1/public/evaluation-runs',
    'post /api/v1/public/evaluation-runs/{run_id}/results',
    'post /api/v1/public/evaluation-runs/{run_id}/complete',
    // The quality loop's creates (quality.md: every create accepts Idempotency-Key).
    'post /api/v1/public/scores',
    'post /api/v1/public/score-configs',
    'post /api/v1/public/llm-connections',
    'post /api/v1/public/evaluators',
    'post /api/v1/public/evaluators/{evaluator_id}/backfill',
    'post /api/v1/public/prompts',
    'post /api/v1/public/annotation-queues',
    'post /api/v1/public/annotation-queues/{queue_id}/items',
    'post /api/v1/public/annotation-queues/{queue_id}/items/{item_id}/add-to-dataset',
    'post /api/v1/public/comments',
    'post /api/v1/public/exports',
    'post /api/v1/public/export-buckets',
    'post /api/v1/public/export-schedules',
  ];
  type Operation = {
    parameters?: { in: string; name: string; required?: boolean }[];
    responses: Record<string, unknown>;
  };

  it('shows the optional Idempotency-Key header and the 409 on every create, and on nothing else', async () => {
    const doc = (await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json`, token: '' })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const taking: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const header = operation.parameters?.find(
          (p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key',
        );
        if (!header) continue;
        taking.push(`${method} ${path}`);
        expect(header.required ?? false).toBe(false);
        expect(operation.responses['409']).toBeDefined();
      }
    }
    // Price overrides are creates too, once the route exists.
    const expected = doc.paths['/api/v1/public/model-prices']?.post
      ? [...CREATES, 'post /api/v1/public/model-prices']
      : CREATES;
    expect(taking.sort()).toEqual([...expected].sort());
  });
});
