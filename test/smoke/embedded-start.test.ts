import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import { tempDataDir } from '../support/harness.js';
import { freePort } from '../support/private-servers.js';

/**
 * The `npm start` path: one process on the all-embedded stores (chdb, PGlite, BullMQ on PGlite),
 * started as a new user would, then driven over real HTTP.
 */
let child: ChildProcess | undefined;
const dataDir = tempDataDir('smoke');

afterAll(async () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start on the embedded stores', () => {
  it('starts, seeds a demo account, signs up, creates a key, answers whoami, stops cleanly', async () => {
    const [port, webPort] = [await freePort(), await freePort()];
    const env: Record<string, string> = {};
    // BASE_URL: vitest sets it to '/' (vite's base), which is not a server address.
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !['DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'BASE_URL'].includes(k)) env[k] = v;
    }
    Object.assign(env, {
      DATA_DIR: dataDir,
      PORT: String(port),
      WEB_PORT: String(webPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'all'], {
      cwd: ROOT_DIR,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start within 120 s:\n${output}`)), 120_000);
      const check = setInterval(() => {
        if (output.includes('is running') && output.includes('API key')) {
          clearInterval(check);
          clearTimeout(timer);
          resolve();
        }
        if (child!.exitCode !== null) {
          clearInterval(check);
          clearTimeout(timer);
          reject(new Error(`exited early:\n${output}`));
        }
      }, 100);
    });

    const api = `http://127.0.0.1:${port}`;
    const web = `http://127.0.0.1:${webPort}`;
    const demoKey = /API key\s+(sl_[0-9a-f-]+)/.exec(output)?.[1];
    expect(demoKey).toBeDefined();
    const demoWho = await fetch(`${api}/api/v1/public/whoami`, { headers: { authorization: `Bearer ${demoKey}` } });
    expect(demoWho.status).toBe(200);
    expect((await demoWho.json()).project_name).toBe('Demo project');
    // The demo project starts with a day of agent traces (SEED_DEMO defaults to true).
    const demoTraces = await fetch(`${api}/api/v1/public/traces?limit=5`, {
      headers: { authorization: `Bearer ${demoKey}` },
    });
    expect(demoTraces.status).toBe(200);
    const traces = await demoTraces.json();
    expect(traces.data).toHaveLength(5);
    expect(traces.meta.total).toBeGreaterThan(250);

    const signup = await fetch(`${web}/api/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'smoke@example.test', password: 'smoke-password', name: 'Smoke' }),
    });
    expect(signup.status).toBe(201);
    const { session_token, workspace } = await signup.json();
    const auth = { authorization: `Bearer ${session_token}`, 'content-type': 'application/json' };
    const project = await fetch(`${api}/api/v1/public/projects`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'smoke', workspace_id: workspace.id }),
    });
    expect(project.status).toBe(201);
    const { id: projectId } = await project.json();
    const keyRes = await fetch(`${api}/api/v1/public/projects/${projectId}/api-keys`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'smoke' }),
    });
    expect(keyRes.status).toBe(201);
    const { key } = await keyRes.json();
    const who = await fetch(`${api}/api/v1/public/whoami`, { headers: { authorization: `Bearer ${key}` } });
    expect(who.status).toBe(200);
    expect(await who.json()).toMatchObject({
      project_id: projectId,
      project_name: 'smoke',
      workspace_id: workspace.id,
    });
    expect((await fetch(`${api}/readyz`)).status).toBe(200);

    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 180_000);
});
