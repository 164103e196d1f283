import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { buildApiApp } from '../../src/app.js';
import { buildWebApp } from '../../src/web/app.js';
import { APP_API_PREFIX } from '../../src/web/app-api.js';
import { watchAnswers, type OpenApiDoc } from './answers.js';

/**
 * Each test file gets real stores: the Postgres and Redis servers named by DATABASE_URL/REDIS_URL
 * when set (CI), embedded PGlite otherwise, and its own embedded ClickHouse directory.
 */
export type Harness = {
  ctx: Runtime;
  api: FastifyInstance;
  web: FastifyInstance;
  config: Config;
};

export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    DATABASE_URL: process.env.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL,
    CLICKHOUSE_URL: process.env.CLICKHOUSE_URL,
    QUEUE_PREFIX: 'sightline-test',
    LOG_LEVEL: 'silent',
    WEB_URL: 'http://web.test',
    BASE_URL: 'http://api.test',
    ...overrides,
  });
}

export function tempDataDir(label = 'data'): string {
  const dir = path.join(
    os.tmpdir(),
    'sightline-test',
    `${label}-${process.pid}-${crypto.randomBytes(4).toString('hex')}`,
  );
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * A data directory for one harness: a copy of the run's migrated, empty template (global-setup.ts)
 * when there is one, so the harness opens without running every migration again.
 */
function harnessDataDir(): string {
  const dir = tempDataDir();
  const template = inject('dataTemplate');
  if (template) fs.cpSync(template, dir, { recursive: true, verbatimSymlinks: true });
  return dir;
}

type Overrides = Record<string, string | undefined>;

/**
 * Registers beforeAll/afterAll that open and close a harness; use the returned getter in tests.
 * `overrides` may be a function, read when the harness opens: for settings known only once an
 * earlier beforeAll has run (a test's own database or Redis server).
 */
export function useHarness(overrides: Overrides | (() => Overrides) = {}): () => Harness {
  let harness: Harness | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    const own = typeof overrides === 'function' ? overrides() : overrides;
    dataDir = own.DATA_DIR ? undefined : harnessDataDir();
    const config = testConfig({ DATA_DIR: dataDir, ...own });
    const ctx = await openRuntime(config);
    const api = buildApiApp(ctx);
    const web = buildWebApp(ctx);
    watchPublicAnswers(api, web);
    await Promise.all([api.ready(), web.ready()]);
    harness = { ctx, api, web, config };
  });
  afterAll(async () => {
    if (harness) {
      await Promise.allSettled([harness.api.close(), harness.web.close()]);
      await harness.ctx.close();
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return () => {
    if (!harness) throw new Error('harness not ready');
    return harness;
  };
}

export const PUBLIC = '/api/v1/public';

/**
 * Checks every public answer of these apps (not yet ready) against the api's OpenAPI document
 * (support/answers.ts); the web process serves the same routes under /app-api. A mismatch fails
 * the test that received it.
 */
export function watchPublicAnswers(api: FastifyInstance, web?: FastifyInstance): void {
  const doc = () => api.swagger() as unknown as OpenApiDoc;
  watchAnswers(api, doc, PUBLIC);
  if (web) watchAnswers(web, doc, APP_API_PREFIX, PUBLIC);
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export async function call(
  app: FastifyInstance,
  options: InjectOptions & { token?: string },
): Promise<LightMyRequestResponse> {
  const { token, headers, ...rest } = options;
  return app.inject({ ...rest, headers: { ...(headers ?? {}), ...(token ? bearer(token) : {}) } });
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${crypto.randomBytes(6).toString('hex')}@example.test`;
}

export type SignedUp = {
  token: string;
  user: { id: string; email: string; name: string };
  workspace: { id: string; name: string };
  password: string;
};

/** A new user with their own workspace, logged in. */
export async function signUp(h: Harness, label = 'user'): Promise<SignedUp> {
  const password = 'correct horse battery';
  const email = uniqueEmail(label);
  const res = await call(h.web, {
    method: 'POST',
    url: '/api/auth/signup',
    payload: { email, password, name: `${label} person` },
  });
  if (res.statusCode !== 201) throw new Error(`signup failed: ${res.statusCode} ${res.body}`);
  const body = res.json();
  return { token: body.session_token, user: body.user, workspace: body.workspace, password };
}

export async function createProject(
  h: Harness,
  token: string,
  workspaceId: string,
  name = `project-${crypto.randomBytes(4).toString('hex')}`,
) {
  const res = await call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/projects`,
    token,
    payload: { name, workspace_id: workspaceId },
  });
  if (res.statusCode !== 201) throw new Error(`create project failed: ${res.statusCode} ${res.body}`);
  return res.json() as { created: boolean; id: string; name: string; workspace_id: string };
}

export async function createApiKey(
  h: Harness,
  token: string,
  projectId: string,
  body: Record<string, unknown> = { name: 'test key' },
) {
  const res = await call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/projects/${projectId}/api-keys`,
    token,
    payload: body,
  });
  if (res.statusCode !== 201) throw new Error(`create key failed: ${res.statusCode} ${res.body}`);
  return res.json() as {
    id: string;
    name: string;
    key: string;
    key_prefix: string;
    created_at: string;
    expires_at: string | null;
  };
}

/** A user, a project of theirs and an API key for it. */
export async function projectWithKey(h: Harness, label = 'owner') {
  const owner = await signUp(h, label);
  const project = await createProject(h, owner.token, owner.workspace.id);
  const key = await createApiKey(h, owner.token, project.id);
  return { owner, project, key };
}

/** `get(token, path, query)`: a GET of a public route (`path` under /api/v1/public) with a token. */
export function publicGet(h: () => Harness) {
  return (token: string, path: string, query: Record<string, string> = {}) =>
    call(h().api, { method: 'GET', url: `${PUBLIC}${path}`, token, query });
}
