// Experiment (not a test): time SQL candidates for the trace list on a bench data set.
//   npx tsx bench/experiments/list-sql.ts <bench dir> file.sql ...
// Each file: `-- name: <label>` headers, one query each. Params: {p:String} (the bench's first
// project), {from:DateTime64(3)} (WINDOW_DAYS before the run, default 90).
import fs from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { median } from '../measure.js';

const [dir, ...files] = process.argv.slice(2);
const dataset = JSON.parse(fs.readFileSync(`${dir}/bench-dataset.json`, 'utf8')) as { projectIds: string[] };
const ctx = await openRuntime(loadConfig({ DATA_DIR: dir!, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const runs = Number(process.env.RUNS ?? 7);
for (const days of (process.env.WINDOW_DAYS ?? '90').split(',').map(Number)) {
  const params = { p: dataset.projectIds[0], from: (Date.now() - days * 86_400_000) / 1000 };
  for (const file of files) {
    const parts = fs
      .readFileSync(file!, 'utf8')
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
        `${days}d ${name!.padEnd(44)} p50 ${median(times).toFixed(1).padStart(7)} ms min ${Math.min(...times)
          .toFixed(1)
          .padStart(
            7,
          )} ms cpu ${median(cpu).toFixed(1).padStart(7)} ms  rows ${rows}  ${JSON.stringify(first)?.slice(0, 120)}`,
      );
    }
  }
}
await ctx.close();
process.exit(0);
