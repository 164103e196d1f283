// Experiment (not a test): candidate queries for metadata-filtered trace lists on the bench data set.
//   npx tsx bench/experiments/list-metadata.ts load            # 10M spans into EXP_DIR (default /tmp/lead/exp)
//   npx tsx bench/experiments/list-metadata.ts run file.sql ... # each file: `-- name` headers, queries between
// Queries may use {p:String} (the first project) and {from:DateTime64(3)} (set by WINDOW_DAYS, default 90).
import fs from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { loadSpans } from '../load-spans.js';
import { median } from '../measure.js';

const DIR = process.env.EXP_DIR ?? '/tmp/lead/exp';
const marker = `${DIR}/exp.json`;
const ctx = await openRuntime(loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const [cmd, ...files] = process.argv.slice(2);
if (cmd === 'load') {
  const projects = ['p0', 'p1', 'p2', 'p3', 'p4'];
  const t0 = performance.now();
  await loadSpans(
    ctx.ch.client,
    { spans: Number(process.env.SPANS ?? 10_000_000), projects, days: 90, nowMs: Date.now() },
    (n) => process.stdout.write(`\r${n} ${((performance.now() - t0) / 1000).toFixed(0)}s`),
  );
  fs.writeFileSync(marker, JSON.stringify({ projects, nowMs: Date.now() }));
  console.log('\nloaded');
} else if (cmd === 'exec') {
  const { splitStatements } = await import('../../src/stores/migrate.js');
  for (const file of files)
    for (const query of splitStatements(fs.readFileSync(file, 'utf8'))) {
      const t = performance.now();
      await ctx.ch.client.command({ query, clickhouse_settings: { max_execution_time: 3600 } as never });
      console.log(`${(performance.now() - t).toFixed(0)} ms: ${query.slice(0, 80).replace(/\s+/g, ' ')}`);
    }
} else if (cmd === 'list') {
  // list '<label>' '<filters JSON>' [name|search]: the service's whole list call, per window.
  const { listTraces } = await import('../../src/traces/service.js');
  const [label, filters, extra] = files;
  for (const days of [1, 7, 90]) {
    const times: number[] = [];
    const cpu: number[] = [];
    let total = 0;
    for (let i = 0; i < Number(process.env.RUNS ?? 7) + 1; i++) {
      const c = process.cpuUsage();
      const t = performance.now();
      const params = {
        projectId: 'p0',
        limit: 50,
        page: 0,
        includeEvaluations: false,
        startAfter: Date.now() - days * 86_400_000,
        filters: JSON.parse(filters ?? '[]'),
        ...(extra ? JSON.parse(extra) : {}),
      };
      let page = { meta: { total: 0 } };
      if (process.env.PHASE === 'select') {
        const { selectTracesQuery } = await import('../../src/traces/list-query.js');
        const { KEYS_LIMITS } = await import('../../src/traces/read-bounds.js');
        const r = await ctx.ch.client.query({ ...selectTracesQuery(params, KEYS_LIMITS), format: 'JSONEachRow' });
        const out = await r.json<{ total: number }>();
        page = { meta: { total: Number(out[0]?.total ?? 0) } };
      } else page = await listTraces(ctx as never, params);
      if (i > 0) times.push(performance.now() - t);
      const used = process.cpuUsage(c);
      if (i > 0) cpu.push((used.user + used.system) / 1000);
      total = page.meta.total;
    }
    console.log(
      `${String(days).padStart(2)}d ${label!.padEnd(40)} p50 ${median(times).toFixed(1).padStart(7)} ms  cpu ${median(cpu).toFixed(1).padStart(7)} ms  total ${total}`,
    );
  }
} else {
  const runs = Number(process.env.RUNS ?? 7);
  const days = Number(process.env.WINDOW_DAYS ?? 90);
  const params = { p: 'p0', from: (Date.now() - days * 86_400_000) / 1000 };
  for (const file of files) {
    const parts = fs
      .readFileSync(file, 'utf8')
      .split(/^-- name: /m)
      .filter((s) => s.trim());
    for (const part of parts) {
      const [name, ...body] = part.split('\n');
      const query = body.join('\n').trim();
      const times: number[] = [];
      let rows = 0;
      let first: unknown;
      const cpu: number[] = [];
      for (let i = 0; i < runs + 1; i++) {
        const c = process.cpuUsage();
        const t = performance.now();
        const r = await ctx.ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
        const out = await r.json<Record<string, unknown>>();
        if (i > 0) times.push(performance.now() - t);
        const used = process.cpuUsage(c);
        if (i > 0) cpu.push((used.user + used.system) / 1000);
        rows = out.length;
        first = out[0];
      }
      console.log(
        `${days}d ${name!.padEnd(40)} p50 ${median(times).toFixed(1).padStart(7)} ms  cpu ${median(cpu).toFixed(1).padStart(7)} ms  rows ${rows}  first ${JSON.stringify(first)?.slice(0, 140)}`,
      );
    }
  }
}
await ctx.close();
process.exit(0);
