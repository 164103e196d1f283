// Experiment (not a test): the month merge (src/traces/month-merge.ts) on a bench data set: each due
// month merged in turn, with its time and the disk peak around it (du of the ClickHouse directory,
// sampled every 200 ms while the merge runs, and system.parts' active and outdated bytes of `traces`).
//   DIR=/tmp/lists-10m npx tsx bench/experiments/month-merge.ts [--dry]
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { monthsDue, runMonthMergePass, traceMonths } from '../../src/traces/month-merge.js';

const DIR = process.env.DIR ?? '/tmp/lists-10m';
const dry = process.argv.includes('--dry');
const ctx = await openRuntime(loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const chDir = path.join(DIR, 'clickhouse');
// du exits 1 when a merge's temporary directory vanishes under it; its sum is still printed.
const du = () => Number(spawnSync('du', ['-sb', chDir], { encoding: 'utf8' }).stdout.split('\t')[0]);
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
const partsBytes = async () => {
  const [r] = await ctx.ch.rows<{ a: string; o: string }>({
    query: `SELECT sumIf(bytes_on_disk, active) AS a, sumIf(bytes_on_disk, NOT active) AS o
      FROM system.parts WHERE database = currentDatabase() AND table = 'traces'`,
  });
  return { active: Number(r!.a), outdated: Number(r!.o) };
};
const months = await traceMonths(ctx.ch);
console.table(months);
console.log(
  'due:',
  monthsDue(months, Date.now()).map((m) => m.partition),
);
if (!dry) {
  for (;;) {
    const before = du();
    const tables = await partsBytes();
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, du())), 200);
    const pass = await runMonthMergePass(ctx.ch);
    clearInterval(timer);
    peak = Math.max(peak, du());
    const after = await partsBytes();
    if (!pass.merged) break;
    console.log(
      `merged ${pass.merged.partition} (${pass.merged.parts} parts, ${pass.merged.rows} rows, ${mb(pass.merged.bytes)}) in ${pass.ms.toFixed(0)} ms; ` +
        `du ${mb(before)} -> peak ${mb(peak)} (+${mb(peak - before)}); traces active ${mb(tables.active)} -> ${mb(after.active)}, outdated ${mb(after.outdated)}`,
    );
  }
  console.table(await traceMonths(ctx.ch));
}
await ctx.close();
process.exit(0);
