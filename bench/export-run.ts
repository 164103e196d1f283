import fs from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { buildApiApp } from '../src/app.js';
import { buildWebApp } from '../src/web/app.js';
import { ROOT_DIR } from '../src/stores/migrate.js';
import { loadSpans } from './load-spans.js';

/**
 * An export of a bulk-loaded span history to an S3-compatible bucket, run by worker processes of its
 * own (bench/export-worker.ts): the export bench row (bench/export.ts) and the crash test
 * (test/faults/export-crash.test.ts) share it. `prepareExport` fills fresh embedded stores in `dir`
 * (an account, a project, a bucket, `spans` spans of the last day loaded in the engine, a queued export)
 * and closes them; `startExportWorker` then runs a worker process on that directory, its peak resident
 * memory read from /proc while it runs.
 */

export type BucketAccess = { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string };
export type PreparedExport = { exportId: string; projectId: string; prefix: string; spans: number };

const DAY_MS = 86_400_000;

/** The environment of every process on the directory: embedded stores, loopback buckets allowed. */
function storeEnv(dir: string): Record<string, string> {
  return { DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', EXPORT_ALLOW_PRIVATE: 'true' };
}

export async function prepareExport(
  dir: string,
  options: { spans: number; format: 'parquet' | 'jsonl' | 'csv'; bucket: BucketAccess },
): Promise<PreparedExport> {
  fs.mkdirSync(dir, { recursive: true });
  const ctx = await openRuntime(loadConfig({ ...storeEnv(dir), WEB_URL: 'http://localhost:3000' }));
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  try {
    await Promise.all([api.ready(), web.ready()]);
    const inject = async (app: typeof api, method: 'POST', url: string, token?: string, payload?: unknown) => {
      const res = await app.inject({
        method,
        url,
        payload: payload as never,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      return res.json();
    };
    const signup = await inject(web, 'POST', '/api/auth/signup', undefined, {
      email: `export-${Date.now()}@sightline.local`,
      password: 'export bench password',
      name: 'Export',
    });
    const token = signup.session_token as string;
    const project = await inject(api, 'POST', '/api/v1/public/projects', token, {
      name: 'export',
      workspace_id: signup.workspace.id,
    });
    const prefix = 'sightline/';
    const bucket = await inject(api, 'POST', '/api/v1/public/export-buckets', token, {
      project_id: project.id,
      name: 'warehouse',
      endpoint: options.bucket.endpoint,
      region: 'us-east-1',
      bucket: options.bucket.bucket,
      prefix,
      access_key_id: options.bucket.accessKeyId,
      secret_access_key: options.bucket.secretAccessKey,
      force_path_style: true,
    });
    // The last day, ending an hour ago: inside the window below, and inside the project's retention.
    const nowMs = Date.now() - 3_600_000;
    await loadSpans(ctx.ch.client, { spans: options.spans, projects: [project.id], days: 1, nowMs });
    const created = await inject(api, 'POST', '/api/v1/public/exports', token, {
      project_id: project.id,
      kind: 'spans',
      format: options.format,
      start_time: new Date(nowMs - DAY_MS - 3_600_000).toISOString(),
      end_time: new Date(nowMs + 3_600_000).toISOString(),
      destination: { bucket_id: bucket.id },
    });
    return { exportId: created.export_id, projectId: project.id, prefix, spans: options.spans };
  } finally {
    await Promise.allSettled([api.close(), web.close()]);
    await ctx.close();
  }
}

export type ExportOutcome = {
  status: string;
  rows: number;
  bytes: number;
  objects: string[];
  error: string | null;
  seconds: number;
};

export type ExportWorker = {
  child: ChildProcess;
  /** The process's peak resident memory so far (VmHWM, bytes), read from /proc. */
  peakRss(): number;
  /** Its peak resident memory when it was ready, before it ran anything (bytes; 0 until then). */
  readyRss(): number;
  /** Resolves when the worker's `ready` line was printed. */
  ready: Promise<void>;
  /** The export's state once it ended (completed or failed), as the worker saw it; rejects if the process died first. */
  outcome: Promise<ExportOutcome>;
  exited: Promise<NodeJS.Signals | number | null>;
  output(): string;
};

/** VmHWM of a process, in bytes (0 once it is gone). */
export function peakRssOf(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * A worker process (node with tsx's loader, so a SIGKILL ends the worker itself) running the export
 * workers (workers/exports.ts) on `dir` until the export has ended. `leaseSeconds`: EXPORT_LEASE_SECONDS.
 */
export function startExportWorker(
  dir: string,
  exportId: string,
  options: { leaseSeconds?: number } = {},
): ExportWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/export-worker.ts', exportId], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      ...storeEnv(dir),
      EXPORT_LEASE_SECONDS: String(options.leaseSeconds ?? 120),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let peak = 0;
  const sample = () => (peak = Math.max(peak, peakRssOf(child.pid!)));
  const sampler = setInterval(sample, 100);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => {
      clearInterval(sampler);
      resolve(signal ?? code);
    }),
  );
  const lines = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const match = pattern.exec(output);
        if (match) resolve(match[1] ?? '');
      };
      child.stdout!.on('data', look);
      void exited.then(() => {
        look();
        reject(new Error(`the export worker exited:\n${output.slice(-4000)}`));
      });
    });
  const keep = (d: Buffer) => {
    if (output.length < 262_144) output += d.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let atReady = 0;
  const ready = lines(/^(export worker ready)$/m).then(() => void (atReady = sample()));
  const outcome = lines(/^outcome (.+)$/m).then((json) => JSON.parse(json) as ExportOutcome);
  ready.catch(() => {});
  outcome.catch(() => {});
  return {
    child,
    peakRss: () => Math.max(sample(), peak),
    readyRss: () => atReady,
    ready,
    outcome,
    exited,
    output: () => output,
  };
}
