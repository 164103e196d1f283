// Experiment (not a test): what planning each materialized view's query costs, the part of a view's
// work that every insert pays whatever its size (the engine plans each view's SELECT again for
// every block it feeds). EXPLAIN PLAN of each view's SELECT against an empty store, process CPU,
// median of 15, beside `SELECT 1` (the cost of any query on the embedded engine).
//
//   npx tsx bench/experiments/ingest-view-planning.ts [--dir /tmp/x]
//
// 2026-11-28, load average 8, two runs: 6-10 ms each for the rollups and their chains, 12-18 ms the
// metadata rollup, 14-15 ms traces_mv; SELECT 1 1.5-2 ms. A GROUP BY on the same eight keys with four
// sums plans in 2.5 ms, with the same uniq and t-digest states in 2.7: the views' many -If aggregates,
// the duration expression and the renaming subquery are what take the time (without the subquery,
// -1.7 ms on the per-minute rollup). One insert feeds each view one block (checked: one new part per
// target table for a 2,000-span insert).
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: { dir: { type: 'string', default: '/tmp/sightline-exp-view-planning' } },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
for (const m of clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')))
  for (const statement of m.statements) await ch.command({ query: statement });
const r = await ch.query({
  query:
    "SELECT name, as_select AS q FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name",
  format: 'JSONEachRow',
});
const views = await r.json<{ name: string; q: string }>();
const cpuMs = async (fn: () => Promise<unknown>) => {
  const c = process.cpuUsage();
  await fn();
  const u = process.cpuUsage(c);
  return (u.user + u.system) / 1000;
};
for (const v of views) {
  const trivial: number[] = [];
  const plan: number[] = [];
  for (let i = 0; i < 15; i++) {
    trivial.push(await cpuMs(() => ch.command({ query: 'SELECT 1' })));
    plan.push(
      await cpuMs(async () => (await ch.query({ query: `EXPLAIN PLAN ${v.q}`, format: 'TabSeparated' })).text()),
    );
  }
  console.log(
    `${v.name.padEnd(34)} EXPLAIN PLAN ${median(plan).toFixed(1).padStart(5)} ms CPU (SELECT 1: ${median(trivial).toFixed(1)} ms)`,
  );
}
await ch.close();
