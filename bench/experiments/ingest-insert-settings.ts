// Experiment (not a test): the engine's work for one insert into `spans` (every view firing) under
// insert-level settings, against the same rows into a plain MergeTree table. Rows come from a Memory
// table (no JSON parsing), background merges are stopped, and the variants interleave; medians of
// process CPU (engine threads included) and wall per insert. The settings ride in the statement
// (chdb keeps `clickhouse_settings` on its session).
//
//   npx tsx bench/experiments/ingest-insert-settings.ts [--corpus realistic|default] [--batch 2000] [--reps 21] [--all]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { corpusSpans, type CorpusName } from '../corpus.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'realistic' },
    all: { type: 'boolean', default: false },
    batch: { type: 'string', default: '1000' },
    reps: { type: 'string', default: '9' },
    dir: { type: 'string', default: '/tmp/sightline-exp-insert-settings' },
    migrations: { type: 'string', default: path.join(ROOT_DIR, 'clickhouse') },
  },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
for (const m of clickHouseMigrations(args.migrations)) for (const s of m.statements) await ch.command({ query: s });
const BATCH = Number(args.batch);
const stamp = Date.now();
const spans = corpusSpans(args.corpus as CorpusName, {
  spans: BATCH * 3,
  startMs: stamp - 86_400_000,
  endMs: stamp,
  seed: 7,
});
const rows = validateSpans(spans.slice(BATCH, 2 * BATCH)).accepted.map((s) => ({
  ...s,
  project_id: 'p',
  trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
  ttl_days: 30,
}));
await ch.command({ query: 'CREATE TABLE mem_spans AS spans ENGINE = Memory' });
await ch.insert({ table: 'mem_spans', values: rows, format: 'JSONEachRow' });
await ch.command({
  query:
    'CREATE TABLE plain AS spans ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)',
});
await ch.command({ query: 'SYSTEM STOP MERGES' });
const timeIt = async (fn: () => Promise<unknown>) => {
  const c = process.cpuUsage();
  const t = performance.now();
  await fn();
  const u = process.cpuUsage(c);
  return [performance.now() - t, (u.user + u.system) / 1000];
};
const res: Record<string, [number[], number[]]> = {};
const rec = (k: string, [w, c]: number[]) => {
  res[k] ??= [[], []];
  res[k][0].push(w!);
  res[k][1].push(c!);
};
const variants: Record<string, Record<string, unknown>> = {
  default: {},
  'optimize_on_insert=0': { optimize_on_insert: 0 },
  // Measured, not taken: the views' queries through the old query analyzer (deprecated upstream).
  ...(args.all
    ? {
        'enable_analyzer=0': { enable_analyzer: 0 },
        parallel_view_processing: { parallel_view_processing: 1 },
        'max_threads=1': { max_threads: 1 },
        'optimize_on_insert=0, max_threads=1': { optimize_on_insert: 0, max_threads: 1 },
      }
    : {}),
};
for (let i = 0; i < Number(args.reps); i++) {
  rec('SELECT 1', await timeIt(() => ch.command({ query: 'SELECT 1' })));
  rec('plain insert from mem', await timeIt(() => ch.command({ query: 'INSERT INTO plain SELECT * FROM mem_spans' })));
  for (const [k, s] of Object.entries(variants))
    rec(
      `spans insert from mem, ${k}`,
      await timeIt(() =>
        ch.command({
          query: `INSERT INTO spans ${
            Object.keys(s).length
              ? 'SETTINGS ' +
                Object.entries(s)
                  .map(([a, b]) => `${a} = ${b}`)
                  .join(', ')
              : ''
          } SELECT * FROM mem_spans`,
        }),
      ),
    );
}
for (const [k, [w, c]] of Object.entries(res))
  console.log(
    `${k.padEnd(50)} wall ${median(w).toFixed(1).padStart(7)} ms  cpu ${median(c).toFixed(1).padStart(7)} ms`,
  );
await ch.close();
