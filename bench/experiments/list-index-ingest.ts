// Experiment (not a test): the ingest cost of clickhouse/0014's pair index (trace_metadata_kv_mv,
// chained on the `traces` block). Opens its own embedded store with every migration, then inserts
// the demo spans the ingest bench sends (1,000-span batches, a fresh project per run) into `spans`
// with all views, and with all but that one (DETACH), interleaved over rounds; prints medians of
// the rate and of the process's CPU per span (engine threads included).
//   npx tsx bench/experiments/list-index-ingest.ts [--batches 30] [--rounds 5] [--dir /tmp/x]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: {
    batches: { type: 'string', default: '30' },
    batch: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    dir: { type: 'string', default: '/tmp/sightline-exp-list-index-ingest' },
  },
});
const BATCHES = Number(args.batches);
const BATCH = Number(args.batch);
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
for (const m of clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')))
  for (const statement of m.statements) await ch.command({ query: statement });

const stamp = Date.now();
const spans = generateSpans({
  traces: Math.ceil((BATCHES * BATCH) / 7) + 10,
  startMs: stamp - 86_400_000,
  endMs: stamp,
  seed: 7,
}).slice(0, BATCHES * BATCH);
const batches: unknown[][] = [];
for (let i = 0; i < spans.length; i += BATCH) batches.push(spans.slice(i, i + BATCH));
let run = 0;
const rowsOf = () => {
  const project = `p${run++}`;
  return batches.map((b) =>
    validateSpans(b).accepted.map((s) => ({
      ...s,
      project_id: project,
      trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
      ttl_days: 30,
    })),
  );
};
async function rate(): Promise<[number, number]> {
  const data = rowsOf();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (const values of data) await ch.insert({ table: 'spans', values, format: 'JSONEachRow' });
  const used = process.cpuUsage(cpu);
  return [(spans.length / (performance.now() - start)) * 1000, (used.user + used.system) / spans.length];
}
const results: Record<string, [number, number][]> = { with: [], without: [] };
await rate(); // warm-up
for (let r = 0; r < Number(args.rounds); r++) {
  results.with!.push(await rate());
  await ch.command({ query: 'DETACH TABLE trace_metadata_kv_mv' });
  results.without!.push(await rate());
  await ch.command({ query: 'ATTACH TABLE trace_metadata_kv_mv' });
}
const pairs = await ch.query({ query: 'SELECT count() AS n FROM trace_metadata_kv', format: 'JSONEachRow' });
console.log(
  `pair rows for ${(spans.length * (Number(args.rounds) + 1)).toLocaleString()} spans with the index:`,
  await pairs.json(),
);
for (const [label, rs] of Object.entries(results))
  console.log(
    `spans, all views ${label === 'with' ? 'with' : 'without'} the pair index: ${median(rs.map((x) => x[0])).toFixed(0)} spans/s, ${median(rs.map((x) => x[1])).toFixed(1)} CPU µs/span (${rs.map((x) => x[1].toFixed(0)).join(', ')})`,
  );
await ch.close();
process.exit(0);
