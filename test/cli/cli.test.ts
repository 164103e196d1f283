import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import {
  call,
  createApiKey,
  createProject,
  projectWithKey,
  PUBLIC,
  tempDataDir,
  useHarness,
} from '../support/harness.js';
import { failingTrace, tick } from '../signals/support.js';
import { waitUntil } from '../support/wait.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * The `sightline` CLI run as a subprocess against a live server (issue: CLI): the browser login played
 * by the test through the web routes, then whoami, projects, token, ingest, traces, SQL, logout, and
 * the errors a user meets (bad key, refused query, unreachable server): one sentence, exit code 1.
 */

const h = useHarness();
let api = '';
let web = '';
let home = '';
let world: Awaited<ReturnType<typeof projectWithKey>>;

beforeAll(async () => {
  api = await h().api.listen({ port: 0, host: '127.0.0.1' });
  web = await h().web.listen({ port: 0, host: '127.0.0.1' });
  home = tempDataDir('cli-home');
  world = await projectWithKey(h(), 'cli');
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

type Run = { code: number; out: string; err: string };

function start(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  const child = spawn(process.execPath, [path.join(ROOT_DIR, 'bin/sightline.mjs'), ...args], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: '',
      SIGHTLINE_API_URL: api,
      SIGHTLINE_WEB_URL: web,
      ...options.env,
    },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  child.stdin.end(options.stdin ?? '');
  const done = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, out, err })));
  return { child, done, err: () => err };
}

const run = (args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) =>
  start(args, options).done;

function expectFailure(r: Run, message: RegExp) {
  expect(r.code, r.out + r.err).toBe(1);
  expect(r.err).toMatch(message);
  expect(r.err).not.toMatch(/\n\s+at |node_modules|\.ts:\d/);
}

describe('sightline CLI', () => {
  it(
    'logs in through the browser flow, keeps the session 0600, and answers whoami, projects and token',
    { timeout: 60_000 },
    async () => {
      const login = start(['login', '--no-browser', '--timeout', '60']);
      let address = '';
      // A missing address fails the expect below, with the CLI's output.
      await waitUntil(
        () => !!(address = /https?:\/\/\S+\/cli\/login\?\S+/.exec(login.err())?.[0] ?? ''),
        'the login address',
        15_000,
      ).catch(() => {});
      expect(address, login.err()).not.toBe('');
      // The test is the browser: open the page, submit the form, follow the redirect to the CLI.
      const page = await fetch(address);
      expect(page.status).toBe(200);
      const url = new URL(address);
      const form = new URLSearchParams({
        redirect_uri: url.searchParams.get('redirect_uri')!,
        state: url.searchParams.get('state')!,
        email: world.owner.user.email,
        password: world.owner.password,
      });
      const posted = await fetch(`${web}/cli/login`, { method: 'POST', body: form, redirect: 'manual' });
      expect(posted.status).toBe(302);
      const back = await fetch(posted.headers.get('location')!);
      expect(back.status).toBe(200);
      const r = await login.done;
      expect(r.code, r.err).toBe(0);
      expect(r.out).toMatch(/^Logged in to http:\/\/127\.0\.0\.1:\d+ \(1 workspace\)/);
      const file = path.join(home, '.config/sightline/credentials.json');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(fs.readFileSync(file, 'utf8')).session_token).toMatch(/^sls_/);

      const whoami = await run(['whoami']);
      expect(whoami.code, whoami.err).toBe(0);
      expect(whoami.out).toContain(world.owner.workspace.name);
      expect(whoami.out).toContain(`<${world.owner.user.email}>`);
      const projects = await run(['projects', '--format', 'json']);
      expect(JSON.parse(projects.out).map((p: { id: string }) => p.id)).toContain(world.project.id);
      const token = await run(['token']);
      expect(token.out.trim()).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    },
  );

  it(
    'ingests JSON lines in batches, and a second run of the same file counts nothing twice',
    { timeout: 60_000 },
    async () => {
      const file = path.join(home, 'spans.jsonl');
      const t0 = Date.now() - 3_600_000;
      const lines = Array.from({ length: 2500 }, (_, i) =>
        JSON.stringify({
          trace_id: `cli-t${Math.floor(i / 5)}`,
          span_id: `s${i}`,
          parent_span_id: i % 5 ? `s${i - (i % 5)}` : null,
          name: i % 5 ? 'llm' : 'agent',
          model_name: i % 2 ? 'gpt-x' : 'gpt-y',
          start_time: new Date(t0 + i).toISOString(),
        }),
      );
      fs.writeFileSync(file, `${lines.join('\n')}\n`);
      for (let pass = 0; pass < 2; pass++) {
        const r = await run(['ingest', file, '--key', world.key.key, '--batch', '1000']);
        expect(r.code, r.err).toBe(0);
        expect(r.out.trim()).toBe('2500 of 2500 spans accepted');
      }
      const list = await run(['traces', 'list', '--key', world.key.key, '--format', 'json', '--limit', '5']);
      expect(JSON.parse(list.out).meta.total).toBe(500);
      const filtered = await run([
        'traces',
        'list',
        '--key',
        world.key.key,
        '--format',
        'json',
        '--model',
        'gpt-x',
        '--span-name',
        'llm',
        '--search',
        'cli-t1',
      ]);
      expect(filtered.code, filtered.err).toBe(0);
      for (const t of JSON.parse(filtered.out).data) expect(t.trace_id).toContain('cli-t1');
      const one = await run(['traces', 'get', 'cli-t7', '--key', world.key.key]);
      expect(one.out).toContain('cli-t7');
      expect(one.out).toContain('5 spans');
      // The spans as a tree: the four children indented under the agent root.
      expect(one.out).toMatch(/^agent \[custom\]  \+0 ms/m);
      expect(one.out.match(/^[├└]─ llm \[custom\]/gm)).toHaveLength(4);
      const page = await run(['traces', 'list', '--key', world.key.key, '--limit', '200', '--since', '2d']);
      expect(page.code, page.err).toBe(0);
      expect(page.err.trim()).toBe('page 1 of 3 (500 traces; next: --page 1)');
    },
  );

  it('runs SQL from an argument, a file or standard input, as table, CSV or JSON', { timeout: 60_000 }, async () => {
    const csv = await run(['sql', 'SELECT count() AS n FROM spans', '--project', world.project.id, '--format', 'csv']);
    expect(csv.code, csv.err).toBe(0);
    expect(csv.out.trim()).toBe('n\n2500');
    const stdin = await run(['sql', '--key', world.key.key, '--format', 'json'], {
      stdin: 'SELECT model_name, count() AS n FROM spans GROUP BY model_name ORDER BY model_name',
    });
    expect(JSON.parse(stdin.out).rows).toEqual([
      ['gpt-x', 1250],
      ['gpt-y', 1250],
    ]);
    const table = await run(['sql', 'SELECT 1 AS one', '--key', world.key.key]);
    expect(table.out).toMatch(/^one\n---\n1/);
    expect(table.err).toMatch(/1 row in [\d.]+ ms/);
  });

  it(
    'says what went wrong in one line, exit code 1: refused query, bad key, missing project, unreachable server',
    { timeout: 60_000 },
    async () => {
      expectFailure(
        await run(['sql', 'SELECT * FROM system.tables', '--key', world.key.key]),
        /^sightline: query refused: tables outside the SQL schema/,
      );
      expectFailure(
        await run(['whoami', '--key', 'sl_00000000-0000-4000-8000-000000000000']),
        /^sightline: not authenticated .*check the API key/,
      );
      // A login that sees one project needs no --project (issue 37); with a second one it must name it.
      const only = await run(['sql', 'SELECT 1 AS one', '--format', 'csv']);
      expect(only.code, only.err).toBe(0);
      expect(only.out).toContain('one');
      await createProject(h(), world.owner.token, world.owner.workspace.id);
      expectFailure(await run(['sql', 'SELECT 1']), /sees 2 projects: pass --project/);
      expectFailure(
        await run(['whoami', '--api', 'http://127.0.0.1:9', '--key', world.key.key]),
        /^sightline: cannot reach Sightline at http:\/\/127\.0\.0\.1:9/,
      );
      expectFailure(await run(['ingest', path.join(home, 'missing.jsonl'), '--key', world.key.key]), /no such file/);
      // Usage errors: one line naming the mistake, never the whole help.
      const usage = await run(['traces', 'list', '--no-such-flag']);
      expectFailure(usage, /^sightline: unknown option '--no-such-flag' \(see sightline --help\)\n?$/);
      expectFailure(
        await run(['traces', 'list', '--since', 'yesterday', '--key', world.key.key]),
        /^sightline: --since takes an ISO 8601 time .* or an age \(30m, 6h, 7d, 2w\), not 'yesterday'\n?$/,
      );
      const version = await run(['--version']);
      expect(version.code).toBe(0);
      expect(version.out.trim()).toMatch(/^\d+\.\d+\.\d+/);
    },
  );

  it(
    'skips and reports lines that are not spans, sends the rest, and shows the total, rate and ETA',
    { timeout: 60_000 },
    async () => {
      const file = path.join(home, 'mixed.jsonl');
      const span = (i: number) =>
        JSON.stringify({ trace_id: 'cli-mixed', span_id: `m${i}`, name: 'x', start_time: new Date().toISOString() });
      fs.writeFileSync(file, [span(1), '{"trace_id": "cut off', '[1, 2]', '', span(2), span(3)].join('\n'));
      const r = await run(['ingest', file, '--key', world.key.key, '--batch', '2']);
      expectFailure(r, /^sightline: 2 lines were not a span and skipped$/m);
      expect(r.out.trim()).toBe('3 of 3 spans accepted');
      expect(r.err).toContain(`skipped: ${file}:2: not valid JSON`);
      expect(r.err).toContain(`skipped: ${file}:3: not a JSON object (one span per line)`);
      // Not a terminal: the bar is written as plain lines, with the total known before the first batch.
      expect(r.err).toMatch(/\| 0\/5 spans \| - spans\/s \| ETA/);
      expect(r.err).toMatch(/100% \| 5\/5 spans \| [\d,]+ spans\/s \| ETA 0s/);
      expect(r.err).toMatch(/^sent 3 spans in \d+\.\d s \([\d,]+ spans\/s\)$/m);
      const trace = await run(['traces', 'get', 'cli-mixed', '--key', world.key.key, '--format', 'json']);
      expect(trace.code, trace.err).toBe(0);
      expect(
        JSON.parse(trace.out)
          .spans.map((s: { span_id: string }) => s.span_id)
          .sort(),
      ).toEqual(['m1', 'm2', 'm3']);
    },
  );

  it(
    'retries a batch the server answered 503 (after its Retry-After) and never sends a batch twice after a 200',
    { timeout: 60_000 },
    async () => {
      let busy = 2;
      let forwardedOk = 0;
      const proxy = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        if (busy > 0) {
          busy--;
          res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"detail":"busy"}');
          return;
        }
        const answer = await fetch(`${api}${req.url}`, {
          method: req.method,
          headers: { authorization: req.headers.authorization!, 'content-type': 'application/json' },
          body: Buffer.concat(chunks),
        });
        if (answer.status === 200) forwardedOk++;
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      const file = path.join(home, 'retry.jsonl');
      fs.writeFileSync(
        file,
        Array.from({ length: 30 }, (_, i) =>
          JSON.stringify({ trace_id: 'retry', span_id: `r${i}`, name: 'x', start_time: new Date().toISOString() }),
        ).join('\n'),
      );
      const r = await run([
        'ingest',
        file,
        '--key',
        world.key.key,
        '--batch',
        '10',
        '--api',
        `http://127.0.0.1:${(proxy.address() as { port: number }).port}`,
      ]);
      proxy.close();
      expect(r.code, r.err).toBe(0);
      expect(r.out.trim()).toBe('30 of 30 spans accepted');
      expect(forwardedOk).toBe(3);
    },
  );

  it(
    'lists, resolves and reopens signals; each change shows through the API; an unknown id is one line, exit 1',
    { timeout: 60_000 },
    async () => {
      const project = await createProject(h(), world.owner.token, world.owner.workspace.id);
      const key = (await createApiKey(h(), world.owner.token, project.id)).key;
      await ingestSpans(h(), key, failingTrace('TimeoutError', 'tool.search'));
      await tick(h(), project.id);
      const readSignal = async (id: string) =>
        (await call(h().api, { method: 'GET', url: `${PUBLIC}/signals/${id}`, token: key })).json();

      const listed = await run(['signals', 'list', '--project', project.id, '--format', 'json']);
      expect(listed.code, listed.err).toBe(0);
      const [signal] = JSON.parse(listed.out).data as { signal_id: string; title: string; status: string }[];
      expect(signal).toMatchObject({ title: 'TimeoutError in tool.search', status: 'open' });
      // The table has the columns the command names, one row per signal; an API key needs no --project.
      const table = await run(['signals', 'list', '--key', key]);
      expect(table.code, table.err).toBe(0);
      expect(table.out.split('\n')[0]).toMatch(/^signal_id\s+status\s+title\s+hit_count\s+last_seen_at$/);
      expect(table.out).toContain(signal!.signal_id);

      const resolved = await run([
        'signals',
        'resolve',
        signal!.signal_id,
        '--reason',
        'fixed_by_pr',
        '--project',
        project.id,
      ]);
      expect(resolved.code, resolved.err).toBe(0);
      expect(resolved.out.trim()).toBe(`signal ${signal!.signal_id} is now resolved`);
      expect(await readSignal(signal!.signal_id)).toMatchObject({
        status: 'resolved',
        resolved_at: expect.any(String),
      });
      const onlyResolved = await run([
        'signals',
        'list',
        '--project',
        project.id,
        '--status',
        'resolved',
        '--format',
        'json',
      ]);
      expect(JSON.parse(onlyResolved.out).data.map((x: { signal_id: string }) => x.signal_id)).toEqual([
        signal!.signal_id,
      ]);

      // Compare-and-set: the signal is no longer open, so this is refused (409) and changes nothing.
      expectFailure(
        await run(['signals', 'reopen', signal!.signal_id, '--expected-status', 'open', '--project', project.id]),
        /^sightline: expected_status is 'open' but the signal is 'resolved'; nothing was changed\n?$/,
      );
      expect((await readSignal(signal!.signal_id)).status).toBe('resolved');

      const reopened = await run(['signals', 'reopen', signal!.signal_id, '--project', project.id]);
      expect(reopened.code, reopened.err).toBe(0);
      expect(reopened.out.trim()).toBe(`signal ${signal!.signal_id} is now open`);
      expect(await readSignal(signal!.signal_id)).toMatchObject({ status: 'open', resolved_at: null, reopen_count: 1 });

      const unknown = '00000000-0000-4000-8000-000000000000';
      expectFailure(
        await run(['signals', 'resolve', unknown, '--reason', 'fixed_by_pr', '--project', project.id]),
        /^sightline: signal not found\n?$/,
      );
      expectFailure(
        await run(['signals', 'reopen', 'no-such-signal', '--project', project.id]),
        /^sightline: signal not found\n?$/,
      );
      // A status change is a user's write: an API key is refused before anything is sent.
      expectFailure(await run(['signals', 'resolve', signal!.signal_id, '--reason', 'fixed_by_pr']), /pass --project/);
    },
  );

  it(
    'lists, pauses and resumes alerts; each change shows through the API; an unknown id is one line, exit 1',
    { timeout: 60_000 },
    async () => {
      const project = await createProject(h(), world.owner.token, world.owner.workspace.id);
      const created = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/alerts`,
        token: world.owner.token,
        payload: {
          name: 'cli latency',
          project_id: project.id,
          view: 'SPANS',
          measure: 'latency',
          aggregation: 'p95',
          threshold: 2000,
          window: '5m',
          severity: 'critical',
        },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().alert.id as string;
      const readAlert = async () =>
        (
          await call(h().api, {
            method: 'GET',
            url: `${PUBLIC}/alerts/${id}`,
            token: world.owner.token,
            query: { project_id: project.id },
          })
        ).json();

      const listed = await run(['alerts', 'list', '--project', project.id, '--format', 'json']);
      expect(listed.code, listed.err).toBe(0);
      expect(JSON.parse(listed.out).data).toEqual([
        expect.objectContaining({ id, name: 'cli latency', severity: 'critical', threshold: 2000 }),
      ]);
      const table = await run(['alerts', 'list', '--project', project.id]);
      expect(table.out.split('\n')[0]).toMatch(
        /^id\s+name\s+status\s+severity\s+measure\s+aggregation\s+threshold_operator\s+threshold\s+window$/,
      );
      expect(table.out).toContain('cli latency');

      const paused = await run(['alerts', 'pause', id, '--project', project.id]);
      expect(paused.code, paused.err).toBe(0);
      expect(paused.out.trim()).toBe(`alert ${id} is PAUSED`);
      expect((await readAlert()).status).toBe('PAUSED');
      const onlyPaused = await run([
        'alerts',
        'list',
        '--project',
        project.id,
        '--status',
        'PAUSED',
        '--format',
        'csv',
      ]);
      expect(onlyPaused.out).toContain(id);

      const resumed = await run(['alerts', 'resume', id, '--project', project.id]);
      expect(resumed.code, resumed.err).toBe(0);
      expect(resumed.out.trim()).toMatch(new RegExp(`^alert ${id} is (OK|NO_DATA)$`));
      expect((await readAlert()).status).not.toBe('PAUSED');

      expectFailure(
        await run(['alerts', 'pause', '00000000-0000-4000-8000-000000000000', '--project', project.id]),
        /^sightline: alert not found\n?$/,
      );
      expectFailure(
        await run(['alerts', 'resume', 'no-such-alert', '--project', project.id]),
        /^sightline: alert not found\n?$/,
      );
      expectFailure(await run(['alerts', 'list', '--status', 'SLEEPING', '--project', project.id]), /status/);
      expect((await readAlert()).status).not.toBe('PAUSED');
    },
  );

  it('logs out: the session stops working and the credentials are gone', { timeout: 60_000 }, async () => {
    const stored = JSON.parse(
      fs.readFileSync(path.join(home, '.config/sightline/credentials.json'), 'utf8'),
    ).session_token;
    const out = await run(['logout']);
    expect(out.code, out.err).toBe(0);
    expect(out.out.trim()).toBe('Logged out.');
    expect(fs.existsSync(path.join(home, '.config/sightline/credentials.json'))).toBe(false);
    const after = await fetch(`${api}/api/v1/public/workspaces`, { headers: { authorization: `Bearer ${stored}` } });
    expect(after.status).toBe(401);
    expectFailure(await run(['whoami']), /not logged in: run `sightline login`/);
  });
});
