// `npx tsx bench/scale.ts`: the inputs of docs/scaling.md's arithmetic, measured on this machine.
// Ingest through the HTTP API into fresh embedded stores (spans of the demo generator, 1,000 per
// request, 4 in flight), with the process's CPU time beside the wall time (api and engine share the
// process when embedded; the CPU is split by thread into JavaScript and engine), then the same rows by
// `client.insert` (the engine alone), then the bytes per span on disk from system.parts, as stored and
// after OPTIMIZE … FINAL.
//
//   npx tsx bench/scale.ts --spans 100000 --dir /tmp/sightline-scale/ingest
//   npx tsx bench/scale.ts --load 1000000 --load-days 1 --dir /tmp/sightline-scale/dense
//
// `--load`: no ingest measurement; bytes per span of the bench loader's spans (bench/load-spans.ts,
// 5 projects) over `--load-days`, to see the views' share at a denser rate than the API can reach here.
//
// The data directory is removed first: never point it at data you keep.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { buildApiApp } from '../src/app.js';
import { buildWebApp } from '../src/web/app.js';
import { generateSpans } from '../src/demo/generate-spans.js';
import { postIngestBodies } from './measure.js';
import { validateSpans } from '../src/traces/span-input.js';
import { withPayload } from '../src/traces/span-payload.js';
import { loadSpans } from './load-spans.js';

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '4' },
    dir: { type: 'string', default: path.join(os.tmpdir(), 'sightline-scale', 'ingest') },
    load: { type: 'string' },
    'load-days': { type: 'string', default: '1' },
  },
});
const SPANS = Number(args.spans);
const BATCH = Number(args.batch);
const CONCURRENCY = Number(args.concurrency);
const DIR = path.resolve(args.dir!);

/** Busy and total jiffies of the whole machine (/proc/stat): how much of it other processes used. */
function machineTicks(): { busy: number; total: number } {
  const cpu = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3]! + (cpu[4] ?? 0);
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/**
 * CPU seconds of this process's JavaScript: the main thread and V8's helper threads (GC, compiler).
 * Everything else in the process (chdb's query and merge threads, the libuv pool that drives chdb)
 * is the engine's share, the part a ClickHouse server would do instead of the api.
 */
function jsCpuSeconds(): number {
  const ticks = 100; // USER_HZ
  let total = 0;
  for (const tid of fs.readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(tid) === process.pid || comm.startsWith('V8 '))
      total += (Number(fields[11]) + Number(fields[12])) / ticks;
  }
  return total;
}

type Run = { wall: number; cpu: number; jsCpu: number; engineCpu: number; machineBusyCores: number };

/** Wall seconds, this process's CPU seconds (JavaScript and engine), and the machine's busy cores over `fn`. */
async function measure(fn: () => Promise<void>): Promise<Run> {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const j0 = jsCpuSeconds();
  const m0 = machineTicks();
  await fn();
  const c = process.cpuUsage(c0);
  const jsCpu = jsCpuSeconds() - j0;
  const m1 = machineTicks();
  const wall = (performance.now() - t0) / 1000;
  const cores = os.cpus().length;
  const cpu = (c.user + c.system) / 1e6;
  return {
    wall,
    cpu,
    jsCpu,
    engineCpu: cpu - jsCpu,
    machineBusyCores: ((m1.busy - m0.busy) / (m1.total - m0.total)) * cores,
  };
}

async function main(): Promise<void> {
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const ctx = await openRuntime(
    loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', RATE_LIMIT_INGEST_PER_MINUTE: '10000000' }),
  );
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  const inject = async (app: typeof api, url: string, token: string | undefined, payload: unknown) => {
    const res = await app.inject({
      method: 'POST',
      url,
      payload: payload as never,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res.json();
  };
  const signup = await inject(web, '/api/auth/signup', undefined, {
    email: `scale-${Date.now()}@sightline.local`,
    password: 'scale password 1',
    name: 'Scale',
  });
  const project = async (name: string) =>
    (
      await inject(api, '/api/v1/public/projects', signup.session_token, {
        name,
        workspace_id: signup.workspace.id,
        trace_ttl_days: 365,
      })
    ).id as string;
  if (args.load) {
    const count = Number(args.load);
    const projects = await Promise.all(Array.from({ length: 5 }, (_, i) => project(`scale-load-${i}`)));
    await loadSpans(ctx.ch.client, { spans: count, projects, days: Number(args['load-days']), nowMs: Date.now() });
    console.log(
      JSON.stringify(
        {
          at: new Date().toISOString(),
          loaded: count,
          days: Number(args['load-days']),
          bytes_per_span: await bytesPerSpan(ctx, count),
        },
        null,
        2,
      ),
    );
    await Promise.all([api.close(), web.close()]);
    return ctx.close();
  }
  const apiProject = await project('scale-api');
  const key = (
    await inject(api, `/api/v1/public/projects/${apiProject}/api-keys`, signup.session_token, { name: 'scale' })
  ).key as string;

  const now = Date.now();
  const spans = generateSpans({
    traces: Math.ceil(SPANS / 7),
    startMs: now - 7 * 86_400_000,
    endMs: now,
    seed: 11,
  }).slice(0, SPANS);
  const bodies: string[] = [];
  for (let i = 0; i < spans.length; i += BATCH) bodies.push(JSON.stringify({ spans: spans.slice(i, i + BATCH) }));
  const jsonBytes = bodies.reduce((n, b) => n + Buffer.byteLength(b), 0);

  await api.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/public/traces`;
  const apiRun = await measure(async () => void (await postIngestBodies(url, key, bodies, CONCURRENCY)));

  // The engine's share: the same rows straight into `spans` of another project (views fire).
  const rawProject = await project('scale-raw');
  const rows: object[][] = [];
  for (let i = 0; i < spans.length; i += BATCH) {
    rows.push(
      validateSpans(spans.slice(i, i + BATCH)).accepted.map((s) =>
        withPayload({
          ...s,
          project_id: rawProject,
          trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
          ttl_days: 365,
        }),
      ),
    );
  }
  const rawRun = await measure(async () => {
    for (const values of rows) await ctx.ch.client.insert({ table: 'spans', values, format: 'JSONEachRow' });
  });

  const out = {
    at: new Date().toISOString(),
    machine: { cores: os.cpus().length, model: os.cpus()[0]?.model, loadavg: os.loadavg() },
    spans: spans.length,
    json_bytes_per_span: jsonBytes / spans.length,
    api: {
      ...apiRun,
      spans_per_s: spans.length / apiRun.wall,
      spans_per_cpu_s: spans.length / apiRun.cpu,
      spans_per_js_cpu_s: spans.length / apiRun.jsCpu,
      spans_per_engine_cpu_s: spans.length / apiRun.engineCpu,
    },
    engine_insert: {
      ...rawRun,
      spans_per_s: spans.length / rawRun.wall,
      spans_per_cpu_s: spans.length / rawRun.cpu,
      spans_per_engine_cpu_s: spans.length / rawRun.engineCpu,
    },
    bytes_per_span: await bytesPerSpan(ctx, spans.length * 2),
  };
  console.log(JSON.stringify(out, null, 2));
  await Promise.all([api.close(), web.close()]);
  await ctx.close();
}

/** Bytes on disk per stored span, by table (system.parts, active parts), as stored and after OPTIMIZE … FINAL. */
async function bytesPerSpan(ctx: Runtime, storedSpans: number) {
  const parts = async () => {
    const r = await ctx.ch.client.query({
      query: `SELECT table, sum(rows) AS rows, count() AS parts, sum(bytes_on_disk) AS bytes, sum(data_uncompressed_bytes) AS uncompressed
                FROM system.parts WHERE active AND database = currentDatabase() AND table != 'schema_migrations'
               GROUP BY table ORDER BY bytes DESC`,
      format: 'JSONEachRow',
    });
    return (await r.json<{ table: string; rows: string; parts: string; bytes: string; uncompressed: string }>()).map(
      (p) => ({
        ...p,
        rows: Number(p.rows),
        parts: Number(p.parts),
        bytes: Number(p.bytes),
        uncompressed: Number(p.uncompressed),
      }),
    );
  };
  const perSpan = (list: Awaited<ReturnType<typeof parts>>) => ({
    spans: list.filter((p) => p.table === 'spans').reduce((n, p) => n + p.bytes, 0) / storedSpans,
    derived: list.filter((p) => p.table !== 'spans').reduce((n, p) => n + p.bytes, 0) / storedSpans,
    tables: Object.fromEntries(
      list.map((p) => [
        p.table,
        {
          rows: p.rows,
          parts: p.parts,
          bytes: p.bytes,
          bytes_per_span: +(p.bytes / storedSpans).toFixed(1),
          uncompressed_per_span: +(p.uncompressed / storedSpans).toFixed(1),
        },
      ]),
    ),
  });
  const stored = await parts();
  for (const t of stored.map((p) => p.table)) await ctx.ch.client.command({ query: `OPTIMIZE TABLE ${t} FINAL` });
  return { stored: perSpan(stored), merged: perSpan(await parts()) };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
