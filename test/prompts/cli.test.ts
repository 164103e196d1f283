import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import { call, projectWithKey, PUBLIC, tempDataDir, useHarness } from '../support/harness.js';

/** `sightline prompts get NAME [--label L | --version N]` run as a subprocess against a live server. */

const h = useHarness();
let api = '';
let key = '';

beforeAll(async () => {
  api = await h().api.listen({ port: 0, host: '127.0.0.1' });
  key = (await projectWithKey(h(), 'cli')).key.key;
  for (const [prompt, labels] of [
    ['Hello {{name}}', []],
    ['Hi {{name}}!', ['staging']],
  ] as const) {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/prompts`,
      token: key,
      payload: { name: 'team/greet', type: 'text', prompt, labels },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
});

function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const child = spawn(process.execPath, [path.join(ROOT_DIR, 'bin/sightline.mjs'), ...args], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: tempDataDir('cli-home'),
      XDG_CONFIG_HOME: '',
      SIGHTLINE_API_URL: api,
      SIGHTLINE_API_KEY: key,
    },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out, err })));
}

describe('sightline prompts', () => {
  it('gets a prompt by label, by version, or the newest; lists prompts', { timeout: 120_000 }, async () => {
    // No production label (an API key can't set it): the newest.
    expect((await run(['prompts', 'get', 'team/greet'])).out).toBe('Hi {{name}}!\n');
    expect((await run(['prompts', 'get', 'team/greet', '--version', '1'])).out).toBe('Hello {{name}}\n');
    expect((await run(['prompts', 'get', 'team/greet', '--label', 'staging'])).out).toBe('Hi {{name}}!\n');
    const json = await run(['prompts', 'get', 'team/greet', '--label', 'latest', '--format', 'json']);
    expect(JSON.parse(json.out)).toMatchObject({ name: 'team/greet', version: 2, labels: ['staging', 'latest'] });
    const list = await run(['prompts', 'list', '--format', 'csv']);
    expect(list.out.split('\n')[0]).toBe('name,type,latest_version,labels,updated_at');
    expect(list.out).toContain('team/greet,text,2');
    const missing = await run(['prompts', 'get', 'team/nope', '--label', 'production']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/^sightline: .*prompt not found/);
    const both = await run(['prompts', 'get', 'team/greet', '--label', 'x', '--version', '1']);
    expect(both.code).toBe(1);
  });
});
