import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { startFakeOpenAi, type FakeOpenAi } from './support/fake-openai.js';
import { listenOnLoopback, waitForTrace } from './support/read-back.js';

/**
 * The integration pages' Node setups, run as a reader would run them (issue 37: they sent nothing
 * for a script that ends normally, and their `node --import` line failed on Node 20). Each page's
 * code blocks marked `file=NAME` are written into a fresh project directory that resolves this
 * repository's node_modules, its block marked `run` is run with this Node (the suite's; the README
 * supports 20 and newer) against a Sightline on loopback and, for the AI SDK, a stand-in
 * OpenAI-compatible server; the program must exit by itself, and its spans must have arrived.
 */

type Snippets = { files: Map<string, string>; command: string };

/** The blocks of a docs page: ```lang file=NAME (written as NAME) and ```sh run (the command). */
export function snippetsOf(markdown: string): Snippets {
  const files = new Map<string, string>();
  let command = '';
  for (const block of markdown.matchAll(/^```(\w+)([^\n]*)\n([\s\S]*?)^```$/gm)) {
    const info = block[2]!.trim();
    const file = /(?:^|\s)file=(\S+)/.exec(info)?.[1];
    if (file) files.set(file, block[3]!);
    else if (/(?:^|\s)run(?:\s|$)/.test(info)) command = block[3]!.trim();
  }
  return { files, command };
}

/** `VAR=value … node args…` as the page writes it: the program's arguments (its variables are the test's). */
function nodeArgs(command: string): string[] {
  const words = command.split(/\s+/);
  const node = words.indexOf('node');
  expect(node, `a node command in: ${command}`).toBeGreaterThanOrEqual(0);
  return words.slice(node + 1);
}

const h = useHarness();
let origin = '';
let fake: FakeOpenAi;
const dirs: string[] = [];

beforeAll(async () => {
  origin = await listenOnLoopback(h());
  fake = await startFakeOpenAi();
});
afterAll(async () => {
  await fake?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function runPage(page: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  const { files, command } = snippetsOf(fs.readFileSync(path.join(ROOT_DIR, 'docs/integrations', page), 'utf8'));
  expect([...files.keys()].sort()).toEqual(['app.mjs', 'instrumentation.mjs']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-snippet-'));
  dirs.push(dir);
  fs.symlinkSync(path.join(ROOT_DIR, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  for (const [name, text] of files) fs.writeFileSync(path.join(dir, name), text);
  const child = spawn(process.execPath, nodeArgs(command), {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', HOME: dir, SIGHTLINE_URL: origin, ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  return { code, out };
}

/** The project's only trace, once the program has exited: its spans were sent before it did. */
async function onlyTrace(token: string, spanCount: number) {
  const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token });
  expect(list.statusCode).toBe(200);
  const items = list.json().data as { trace_id: string }[];
  expect(items).toHaveLength(1);
  return waitForTrace(h(), token, items[0]!.trace_id, spanCount);
}

describe('docs/integrations snippets, run on this Node', () => {
  it('runs on Node 20 or newer', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(20);
  });

  it(
    'vercel-ai.md: a script that simply ends has sent its trace, named after its functionId',
    { timeout: 60_000 },
    async () => {
      const { key } = await projectWithKey(h(), 'snippet-vercel');
      const run = await runPage('vercel-ai.md', {
        SIGHTLINE_API_KEY: key.key,
        OPENAI_API_KEY: 'sk-fake',
        OPENAI_BASE_URL: fake.baseUrl,
      });
      expect(run.code, run.out).toBe(0);
      expect(run.out).toContain('It is 18°C and sunny in Paris.');
      const trace = await onlyTrace(key.key, 4);
      expect(trace.name).toBe('travel-agent');
      expect(trace).toMatchObject({ user_id: 'user-42', session_id: 'sess-7' });
      expect(trace.spans.map((s) => s.name)).toEqual(expect.arrayContaining(['travel-agent', 'get_weather']));
      expect(trace.spans.filter((s) => s.kind === 'llm')).toHaveLength(2);
      expect(trace.total_cost).toBeGreaterThan(0);
    },
  );

  it(
    'langfuse.md: a script that simply ends has sent its trace, named by its traceName',
    { timeout: 60_000 },
    async () => {
      const { key } = await projectWithKey(h(), 'snippet-langfuse');
      const run = await runPage('langfuse.md', { SIGHTLINE_API_KEY: key.key });
      expect(run.code, run.out).toBe(0);
      const trace = await onlyTrace(key.key, 3);
      expect(trace.name).toBe('travel-booking');
      expect(trace.tags).toEqual(['travel']);
      expect(trace).toMatchObject({ user_id: 'user-42', session_id: 'sess-7' });
      expect(trace.metadata_map).toMatchObject({ tenant: 'acme' });
      const generation = trace.spans.find((s) => s.kind === 'llm')!;
      // Langfuse's `input` leaves its cached tokens out: they are added (docs/integrations/mapping.md).
      expect(generation).toMatchObject({
        model_name: 'gpt-4o',
        input_tokens: 160,
        cache_read_tokens: 40,
        output_tokens: 30,
        cost: 0.0006,
      });
      expect(trace.spans.find((s) => s.name === 'get_weather')?.kind).toBe('tool');
    },
  );
});
