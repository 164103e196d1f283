// Experiment (not a test): time SQL candidates for the trace list on a bench data set.
//   npx tsx bench/experiments/list-sql.ts <bench dir> file.sql ...
//   WINDOW_DAYS=1,90 RUNS=9 npx tsx bench/experiments/list-sql.ts /tmp/bench-lists3 bench/experiments/list-counts.sql
// Each file: `-- name: <label>` headers, one query each. Params: {p:String} (the bench's first
// project), {from:DateTime64(3)} (WINDOW_DAYS before the run, default 90). Prints p50, min and the
// process's CPU (engine threads included), which a busy machine disturbs less than the wall clock.
//
// Issue 22 item 5 (90-day lists at 10M spans), measured on the bench's 3M spans (60,000 traces of
// the first project in 90 days), CPU per query, 2 shared cores (list-counts.sql holds the queries):
//   today's one pass (FINAL, count() OVER (), page)   17.3 ms      (1 day: 4.0 ms)
//   count() FINAL alone                                13.7 ms      (1 day: 3.2 ms)
//   count() without FINAL                               9.7 ms
//   per-hour uniqExact sets of trace ids, summed       17.4 ms      (1 day: 8.6 ms)
//   page from the newest 2 hours (FINAL)                5.6 ms
// Exact per-hour sets of ids (a view on `traces` into an AggregatingMergeTree of uniqExact states,
// the reverted commit 4a1dee3 on branch h-lists) cost as much to merge as counting the window with
// FINAL, and the list then needs the cut hours and late roots counted too: through the service the
// whole list took 41 ms CPU against the one pass's 28 ms at 90 days (35 against 19 at 1 day). A
// total that costs hours, not traces, needs plain per-hour counts of new traces, which only the
// writer knows (span-writer.ts sees which traces a batch starts). Counting without FINAL where an
// hour's rows lie in one part (each trace one merged row there), FINAL only for the other hours
// ("by parts per hour"): 12.8 ms against 17.8 ms for count() FINAL in the same run, for any filter.
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
