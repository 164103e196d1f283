// Masking's cost at ingest (issue 35): the realistic corpus sent through the API over real HTTP to a
// project without masking and to one with every detector on (action `mask`), in alternating rounds;
// the ratio of their ingest rates (target: masked >= 80% of unmasked), and the masker alone per span.
//
// On fresh embedded stores of its own: `npx tsx bench/masking.ts [--spans 20000] [--rounds 3] [--batch 500]`,
// or `npm run bench -- --only masking` (the full run has these rows too).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { corpusSpans } from './corpus.js';
import { median, postIngestBodies, printTable, type Row } from './measure.js';
import { compileMasking, DETECTORS, MaskingSetting } from '../src/controls/masking.js';
import { validateSpans } from '../src/traces/span-input.js';

export type MaskingBenchOptions = { spans: number; rounds: number; batch: number; concurrency: number; dir: string };

export async function benchMasking(options: MaskingBenchOptions, rows: Row[]) {
  const dir = path.resolve(options.dir);
  fs.rmSync(dir, { recursive: true, force: true });
  const { loadConfig } = await import('../src/config.js');
  const { openRuntime } = await import('../src/runtime.js');
  const { buildApiApp } = await import('../src/app.js');
  const { buildWebApp } = await import('../src/web/app.js');
  const ctx = await openRuntime(
    loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', RATE_LIMIT_INGEST_PER_MINUTE: '1000000' }),
  );
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  const inject = async (
    app: typeof api,
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    token?: string,
    payload?: unknown,
  ) => {
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
    email: `bench-${Date.now()}@sightline.local`,
    password: 'bench password 1',
    name: 'Bench',
  });
  const token = signup.session_token as string;
  const keyOf = async (name: string, masking?: unknown) => {
    const project = await inject(api, 'POST', '/api/v1/public/projects', token, {
      name,
      workspace_id: signup.workspace.id,
    });
    if (masking) await inject(api, 'PUT', `/api/v1/public/projects/${project.id}/masking`, token, masking);
    return (await inject(api, 'POST', `/api/v1/public/projects/${project.id}/api-keys`, token, { name })).key as string;
  };
  const allOn = { detectors: [...DETECTORS], patterns: [{ name: 'order', pattern: 'ORD-[0-9]{5}' }], action: 'mask' };
  const plainKey = await keyOf('unmasked');
  const maskedKey = await keyOf('masked', allOn);

  const count = options.spans;
  const stamp = Date.now();
  const spans = corpusSpans('realistic', { spans: count, startMs: stamp - 86_400_000, endMs: stamp, seed: 7 });
  const batch = options.batch;
  const bodies: string[] = [];
  for (let i = 0; i < spans.length; i += batch) bodies.push(JSON.stringify({ spans: spans.slice(i, i + batch) }));

  // The masker alone, per span (validated spans, as the ingest path hands them over).
  const masker = compileMasking(MaskingSetting.parse(allOn), Buffer.alloc(32, 1))!;
  const normalized = validateSpans(spans.slice(0, 5000)).accepted;
  const started = performance.now();
  const masked = masker.maskSpans(normalized);
  const perSpanUs = ((performance.now() - started) * 1000) / normalized.length;

  await api.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/public/traces`;
  const rates = { plain: [] as number[], masked: [] as number[] };
  // Spans per CPU second of this process (the client, the API and the embedded engines alike): what
  // other work on shared cores changes far less than the wall-clock rate.
  const cpuRates = { plain: [] as number[], masked: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    for (const [which, key] of [
      ['plain', plainKey],
      ['masked', maskedKey],
    ] as const) {
      // A fresh copy of the trace ids per round and project, so each round stores new spans.
      const sent = bodies.map((b) => b.replaceAll('"trace_id":"', `"trace_id":"r${round}-`));
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await postIngestBodies(url, key, sent, options.concurrency);
      const cpu = process.cpuUsage(cpu0);
      rates[which].push((spans.length / (performance.now() - t0)) * 1000);
      cpuRates[which].push(spans.length / ((cpu.user + cpu.system) / 1e6));
    }
  }
  const plain = median(rates.plain);
  const withMasking = median(rates.masked);
  const cpuPlain = median(cpuRates.plain);
  const cpuMasked = median(cpuRates.masked);
  rows.push(
    {
      work: `ingest, realistic corpus, ${count.toLocaleString('en')} spans, every detector on (median of ${options.rounds})`,
      api: `${Math.round(withMasking)} spans/s masked`,
      reference: `${Math.round(plain)} spans/s unmasked`,
      ratio: `${((withMasking / plain) * 100).toFixed(0)}%`,
      target: `>= 80%: ${withMasking / plain >= 0.8 ? 'met' : 'MISSED'}`,
    },
    {
      work: '... the same, by the process’s CPU time (spans per CPU second)',
      api: `${Math.round(cpuMasked)} spans/CPU s masked`,
      reference: `${Math.round(cpuPlain)} spans/CPU s unmasked`,
      ratio: `${((cpuMasked / cpuPlain) * 100).toFixed(0)}%`,
      target: `>= 80%: ${cpuMasked / cpuPlain >= 0.8 ? 'met' : 'MISSED'}`,
    },
    {
      work: `the masker alone, per realistic span (${masked} values masked in ${normalized.length} spans)`,
      api: `${perSpanUs.toFixed(1)} µs`,
      reference: '',
      ratio: '',
      target: '',
    },
  );
  await Promise.all([api.close(), web.close()]);
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    rates,
    cpu_rates: cpuRates,
    ratio: withMasking / plain,
    cpu_ratio: cpuMasked / cpuPlain,
    per_span_us: perSpanUs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: {
      spans: { type: 'string', default: '20000' },
      rounds: { type: 'string', default: '3' },
      batch: { type: 'string', default: '500' },
      concurrency: { type: 'string', default: '4' },
      dir: { type: 'string', default: 'bench/data/masking' },
    },
  });
  const rows: Row[] = [];
  benchMasking(
    {
      spans: Number(args.spans),
      rounds: Number(args.rounds),
      batch: Number(args.batch),
      concurrency: Number(args.concurrency),
      dir: args.dir,
    },
    rows,
  )
    .then((results) => {
      printTable(rows);
      const out = path.resolve('bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-masking.json`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, JSON.stringify({ ...results, rows }, null, 2));
      console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
