// Experiment (not a test; issue 22, item 2): how long clickhouse/0016 and 0017 take on a store that
// holds spans written before them (0016 rewrites `io` for every stored part, a mutation waited for),
// and the disk around it.
//
//   npx tsx bench/experiments/payload-migration.ts [--spans 1000000] [--dir /tmp/x]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { loadSpans } from '../load-spans.js';

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '1000000' },
    dir: { type: 'string', default: '/tmp/sightline-exp-payload-migration' },
  },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
const migrations = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'));
const run = async (pick: (v: number) => boolean) => {
  for (const m of migrations.filter((m) => pick(m.version)))
    for (const statement of m.statements) await ch.command({ query: statement });
};
const spansBytes = async () => {
  const r = await ch.query({
    query: `SELECT sum(bytes_on_disk) AS b, countIf(active) AS parts FROM system.parts WHERE database = currentDatabase() AND table = 'spans' AND active`,
    format: 'JSONEachRow',
  });
  return (await r.json<{ b: string; parts: string }>())[0]!;
};
await run((v) => v < 16);
const N = Number(args.spans);
await loadSpans(ch, { spans: N, projects: ['p-a', 'p-b', 'p-c'], days: 30, nowMs: Date.now() });
await ch.command({ query: 'OPTIMIZE TABLE spans FINAL' });
console.log(`before: ${JSON.stringify(await spansBytes())}`);
for (const v of [16, 17]) {
  const started = performance.now();
  await run((x) => x === v);
  console.log(
    `migration ${v}: ${((performance.now() - started) / 1000).toFixed(1)} s, ${JSON.stringify(await spansBytes())}`,
  );
}
await ch.command({ query: 'OPTIMIZE TABLE spans FINAL' });
console.log(`after a merge: ${JSON.stringify(await spansBytes())}`);
const check = await ch.query({
  query: `SELECT count() AS n, countIf(input IS NULL) AS no_input, sum(length(input)) AS input_bytes, sum(length(output)) AS output_bytes FROM spans`,
  format: 'JSONEachRow',
});
console.log(JSON.stringify(await check.json()));
await ch.close();
