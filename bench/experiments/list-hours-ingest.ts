// Experiment (not a test): what the trace list's hourly counts (clickhouse/0012_trace_list_hours.sql)
// cost ingest. Inserts the bench's spans into `spans` (every view fires) with and without the view
// that feeds `trace_hours`, interleaved, and prints the engine's CPU per span each way.
//   npx tsx bench/experiments/list-hours-ingest.ts [spans per round] [rounds]
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { ROOT_DIR, splitStatements } from '../../src/stores/migrate.js';
import { loadSpans } from '../load-spans.js';
import { median } from '../measure.js';

const SPANS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 4);
const dir = fs.mkdtempSync('/tmp/list-hours-ingest-');
const ctx = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const view = splitStatements(fs.readFileSync(path.join(ROOT_DIR, 'clickhouse/0012_trace_list_hours.sql'), 'utf8')).find(
  (s) => s.includes('CREATE MATERIALIZED VIEW'),
)!;
const out = { with: { ms: [] as number[], cpu: [] as number[] }, without: { ms: [] as number[], cpu: [] as number[] } };
for (let round = 0; round < ROUNDS; round++) {
  for (const way of round % 2 ? (['without', 'with'] as const) : (['with', 'without'] as const)) {
    if (way === 'without') await ctx.ch.client.command({ query: 'DROP VIEW IF EXISTS trace_hours_mv SYNC' });
    else await ctx.ch.client.command({ query: view });
    const cpu = process.cpuUsage();
    const t = performance.now();
    // Batches of 10,000 spans (1,000 traces), as an ingest stream inserts, not one bulk insert.
    await loadSpans(ctx.ch.client, {
      spans: SPANS,
      projects: [`${way}-${round}`],
      days: 1,
      nowMs: Date.now(),
      batch: 10_000,
    });
    const used = process.cpuUsage(cpu);
    out[way].ms.push(performance.now() - t);
    out[way].cpu.push((used.user + used.system) / SPANS);
    console.log(
      `round ${round + 1} ${way}: ${((SPANS / out[way].ms.at(-1)!) * 1000).toFixed(0)} spans/s, ${out[way].cpu.at(-1)!.toFixed(1)} µs CPU/span`,
    );
  }
}
const [w, wo] = [median(out.with.cpu), median(out.without.cpu)];
console.log(
  `median CPU/span: with ${w.toFixed(1)} µs, without ${wo.toFixed(1)} µs: the view costs ${(((w - wo) / wo) * 100).toFixed(1)}%`,
);
console.log(
  `median wall: with ${median(out.with.ms).toFixed(0)} ms, without ${median(out.without.ms).toFixed(0)} ms per ${SPANS} spans`,
);
await ctx.close();
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
