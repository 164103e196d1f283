// Experiment (not a test): the ingest cost of 0006's views (span_rollup_meta_1h_mv and the totals'
// views chained on it). Inserts the same kind of rows as the bench's raw ingest row (client.insert,
// 1,000-span batches) into `spans` with all of them, with the per-hour one only, and with none,
// interleaved over rounds; prints medians.
//   npx tsx bench/experiments/metadata-rollup-ingest.ts [spans=100000] [rounds=3]
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openClickHouse } from '../../src/stores/clickhouse.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { clickHouseMigrations, readMigrations, ROOT_DIR, splitStatements } from '../../src/stores/migrate.js';
import { median } from '../measure.js';

const SPANS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const DIR = process.env.EXP_DIR ?? '/tmp/dash-meta/ingest-exp';
fs.rmSync(DIR, { recursive: true, force: true });
// ClickHouse alone, with every migration's statements (no Postgres needed here).
const ch = await openClickHouse(loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const client = ch.client;
for (const m of clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')))
  for (const query of m.statements) await client.command({ query });

const now = Date.now();
const spans = generateSpans({ traces: Math.ceil(SPANS / 7), startMs: now - 86_400_000, endMs: now, seed: 7 }).slice(
  0,
  SPANS,
);
const batches = (project: string) => {
  const out: Record<string, unknown>[][] = [];
  for (let i = 0; i < spans.length; i += 1000) {
    out.push(
      validateSpans(spans.slice(i, i + 1000)).accepted.map((s) => ({
        ...s,
        project_id: project,
        trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
        ttl_days: 30,
      })),
    );
  }
  return out;
};
const insert = async (project: string) => {
  const rows = batches(project);
  const t = performance.now();
  for (const values of rows) await client.insert({ table: 'spans', values, format: 'JSONEachRow' });
  return (spans.length / (performance.now() - t)) * 1000;
};

// Variants, interleaved: all three views of 0006; only the per-hour view (the totals' views dropped); none.
const migration = splitStatements(
  readMigrations(path.join(ROOT_DIR, 'clickhouse')).find((m) => m.name === 'span_rollup_metadata')!.sql,
);
const views = migration.filter((s) => s.startsWith('CREATE MATERIALIZED VIEW'));
const names = views.map((v) => /VIEW IF NOT EXISTS (\w+)/.exec(v)![1]!);
const setViews = async (n: number) => {
  for (const name of names) await client.command({ query: `DROP VIEW IF EXISTS ${name} SYNC` });
  for (const v of views.slice(0, n)) await client.command({ query: v });
};
const variants: [string, number][] = [
  ['all views', views.length],
  ['per-hour view only', 1],
  ['no view', 0],
];
const rates: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, n] of variants) {
    await setViews(n);
    (rates[label] ??= []).push(await insert(`${label}-${round}`));
  }
  console.log(`round ${round}: ${variants.map(([l]) => `${l} ${Math.round(rates[l]!.at(-1)!)}`).join(', ')} spans/s`);
}
const none = median(rates['no view']!);
for (const [label] of variants)
  console.log(
    `median ${label}: ${Math.round(median(rates[label]!))} spans/s (${((median(rates[label]!) / none) * 100).toFixed(0)}% of no view)`,
  );
await ch.close();
