import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';

/**
 * What a bench that runs alone starts from: fresh embedded stores, this tree's API and web apps on
 * them, and a signed-up user with projects and keys made through the public API, as a user makes
 * them. The app is imported when a bench opens it, so `bench/run.ts` can import every bench's rows
 * without loading it.
 */

export type BenchServer = { ctx: Runtime; api: FastifyInstance; web: FastifyInstance; close(): Promise<void> };

/** Empties `dir`, opens the stores in it and the API and web apps on them, ready for `inject`. */
export async function openBenchServer(dir: string): Promise<BenchServer> {
  fs.rmSync(dir, { recursive: true, force: true });
  const { loadConfig } = await import('../src/config.js');
  const { openRuntime } = await import('../src/runtime.js');
  const { buildApiApp } = await import('../src/app.js');
  const { buildWebApp } = await import('../src/web/app.js');
  const ctx = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  return {
    ctx,
    api,
    web,
    async close() {
      await Promise.all([api.close(), web.close()]);
      await ctx.close();
    },
  };
}

export type BenchProject = { projectId: string; key: string };
export type BenchAccount = {
  token: string;
  workspaceId: string;
  /** A project of this user (`settings`: more fields of `POST /projects`) and an API key of it. */
  project(name: string, settings?: Record<string, unknown>): Promise<BenchProject>;
};

/** Signs a new user up through the web app; its projects and keys are made through the public API. */
export async function benchAccount(api: FastifyInstance, web: FastifyInstance): Promise<BenchAccount> {
  const signup = await request(web, 'POST', '/api/auth/signup', undefined, {
    email: `bench-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@sightline.local`,
    password: 'bench password 1',
    name: 'Bench',
  });
  const token = signup.session_token as string;
  const workspaceId = signup.workspace.id as string;
  return {
    token,
    workspaceId,
    async project(name, settings = {}) {
      const p = await publicCall(api, 'POST', '/projects', token, { name, workspace_id: workspaceId, ...settings });
      const key = await publicCall(api, 'POST', `/projects/${p.id}/api-keys`, token, { name: 'bench' });
      return { projectId: p.id as string, key: key.key as string };
    },
  };
}

/** A request through `inject`, its JSON answer; a status of 300 or more throws with the answer's start. */
export async function request(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  token: string | undefined,
  payload?: unknown,
) {
  const res = await app.inject({
    method,
    url,
    payload: payload as never,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

/** `request` on the public API: `url` after /api/v1/public. */
export function publicCall(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  token: string,
  payload?: unknown,
) {
  return request(app, method, `/api/v1/public${url}`, token, payload);
}

/** Writes a bench's results to bench/results/<start time>-<name>.json and says where. */
export function saveResults(name: string, results: object, started = new Date()): string {
  const file = path.resolve('bench/results', `${started.toISOString().replace(/[:.]/g, '-')}-${name}.json`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(results, null, 2));
  console.log(`\nresults: ${path.relative(process.cwd(), file)}`);
  return file;
}
