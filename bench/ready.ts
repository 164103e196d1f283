// Time to ready (docs/operations.md, "Restarts"): the server started as a real process on an existing
// data directory, timed from spawn until /readyz answers 200, then stopped with SIGTERM and timed
// until it exits. Two ways to start: the bundled JavaScript that `npm start` runs (dist/server/main.js,
// scripts/build-server.mjs) and the TypeScript sources through tsx's loader (warm tsx cache), for the
// reference column. Also the process's CPU time to ready, which a busy shared machine disturbs less.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { median, type Row } from './measure.js';

type Start = { readyMs: number; cpuMs: number; stopMs: number; code: number | null; line: string };

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

/** CPU time (user + system) of a process so far, from /proc (Linux), in ms; NaN elsewhere. */
function cpuMs(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100/s)
  } catch {
    return NaN;
  }
}

async function startOnce(args: string[], dataDir: string): Promise<Start> {
  const [port, webPort] = [await freePort(), await freePort()];
  const started = performance.now();
  const child = spawn(process.execPath, [...args, 'api'], {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: dataDir,
      PORT: String(port),
      WEB_PORT: String(webPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited before it was ready:\n${output}`);
    const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const readyMs = performance.now() - started;
  const cpu = cpuMs(child.pid!);
  const stopping = performance.now();
  child.kill('SIGTERM');
  const code = await exited;
  return {
    readyMs,
    cpuMs: cpu,
    stopMs: performance.now() - stopping,
    code,
    line: /is running: (.*)/.exec(output)?.[1] ?? '',
  };
}

/**
 * `runs` starts each way, interleaved. `dataDir` must not be open in this process (the embedded
 * stores take one process per directory).
 */
export async function benchReady(dataDir: string, spans: number, runs: number, rows: Row[]) {
  const { buildServer } = (await import('../scripts/build-server.mjs' as string)) as {
    buildServer(o?: { quiet?: boolean }): Promise<string | null>;
  };
  const bundle = await buildServer({ quiet: true });
  const bundled: Start[] = [];
  const source: Start[] = [];
  for (let i = 0; i < runs; i++) {
    if (bundle) bundled.push(await startOnce([bundle], dataDir));
    source.push(await startOnce(['--import', 'tsx', 'src/main.ts'], dataDir));
  }
  const ms = (xs: Start[], f: (s: Start) => number) => Math.round(median(xs.map(f)));
  const stored = `${spans.toLocaleString()} spans stored`;
  const main = bundle ? bundled : source;
  rows.push({
    work: `time to ready (api process, ${stored}; spawn → /readyz 200)`,
    api: `${ms(main, (s) => s.readyMs)} ms (CPU ${ms(main, (s) => s.cpuMs)} ms)${bundle ? '' : ' from tsx: no esbuild'}`,
    reference: bundle
      ? `${ms(source, (s) => s.readyMs)} ms from TypeScript via tsx (CPU ${ms(source, (s) => s.cpuMs)} ms)`
      : '',
    ratio: bundle ? `${((ms(main, (s) => s.readyMs) / ms(source, (s) => s.readyMs)) * 100).toFixed(0)}% of tsx` : '',
    target: '≤ 5 s at 10M spans',
  });
  const codes = [...new Set([...bundled, ...source].map((s) => s.code))];
  rows.push({
    work: 'time to stop (idle api process; SIGTERM → exit)',
    api: `${ms(main, (s) => s.stopMs)} ms, exit code ${codes.join('/')}`,
    reference: '',
    ratio: '',
    target: `exit 0 within STOP_TIMEOUT_MS (9 s)`,
  });
  return {
    bundled: bundled.map(({ line, ...s }) => ({ ...s, line })),
    source: source.map(({ line, ...s }) => ({ ...s, line })),
  };
}
