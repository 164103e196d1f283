// Experiment (not a test; issue 22): what the views chained on the span rollups cost at ingest, one by
// one, and the same rollups chained from their smallest parent (totals_1h from totals_1m, totals_1d
// from totals_1h, meta_totals_1d from meta_totals_1h: the schema of clickhouse/0011). Opens its own
// embedded store with the project's migrations, inserts 1,000-span batches of the bench's rows into
// `spans` with chosen views attached, rounds interleaved; prints medians.
//
//   npx tsx bench/experiments/ingest-chains.ts [--batches 15] [--rounds 2] [--dir /tmp/x]
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
    batches: { type: 'string', default: '15' },
    batch: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '2' },
    dir: { type: 'string', default: '/tmp/sightline-exp-ingest-chains' },
    // Only these configurations (labels, separated by |).
    only: { type: 'string' },
  },
});
const BATCHES = Number(args.batches);
const BATCH = Number(args.batch);
const ROUNDS = Number(args.rounds);

fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
const migrations = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'));
for (const m of migrations) for (const statement of m.statements) await ch.command({ query: statement });
// 0011's chains, and the same views reading 0002's and 0006's sources again: flipped between rounds.
const chains = migrations.find((m) => m.version === 11)!.statements;
const unchained = chains.map((q) =>
  q
    .replace(/FROM span_rollup_totals_1[mh]\n/, 'FROM span_rollup_1m\n')
    .replace(/FROM span_rollup_meta_totals_1h\n/, 'FROM span_rollup_meta_1h\n'),
);
const original = migrations
  .find((m) => m.version === 2)!
  .statements.map(
    (q) =>
      /^CREATE MATERIALIZED VIEW IF NOT EXISTS (span_rollup_1h_mv|span_rollup_totals_1m_mv) TO \w+ AS\s+/.exec(q) && q,
  )
  .filter((q): q is string => typeof q === 'string')
  .map((q) => q.replace(/^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO \w+ AS\s+/, 'ALTER TABLE $1 MODIFY QUERY '));
if (original.length !== 2) throw new Error('0002 views not found');
// The chained rollups aggregated from the spans themselves (-State of values, not -MergeState of the 1m states).
const RAW: Record<string, string> = {
  span_rollup_1h_mv:
    "SELECT\n    project_id, toStartOfHour(s_start) AS bucket, model_name, environment, kind, status, name, error_type,\n    count() AS spans,\n    countIf(status = 'error') AS errors,\n    sum(s_cost) AS cost,\n    sum(s_input_tokens) AS input_tokens,\n    sum(s_output_tokens) AS output_tokens,\n    sum(s_total_tokens) AS total_tokens,\n    countIf(s_end IS NOT NULL) AS durations,\n    sumIf(d, s_end IS NOT NULL) AS duration_sum,\n    min(if(s_end IS NULL, NULL, d)) AS duration_min,\n    max(if(s_end IS NULL, NULL, d)) AS duration_max,\n    quantileTDigestStateIf(d, s_end IS NOT NULL) AS duration_q,\n    uniqStateIf(s_user, s_user != '') AS users,\n    uniqStateIf(s_session, s_session != '') AS sessions,\n    uniqState(s_trace) AS traces,\n    max(s_ttl) AS ttl_days\nFROM\n(\n    SELECT project_id, model_name, environment, kind, status, name, error_type,\n           start_time AS s_start, end_time AS s_end, cost AS s_cost, input_tokens AS s_input_tokens,\n           output_tokens AS s_output_tokens, total_tokens AS s_total_tokens, user_id AS s_user, session_id AS s_session,\n           trace_id AS s_trace, ttl_days AS s_ttl,\n           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d\n    FROM spans\n)\nGROUP BY project_id, bucket, model_name, environment, kind, status, name, error_type",
  span_rollup_totals_1m_mv:
    "SELECT\n    project_id, toStartOfMinute(s_start) AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,\n    count() AS spans,\n    countIf(status = 'error') AS errors,\n    sum(s_cost) AS cost,\n    sum(s_input_tokens) AS input_tokens,\n    sum(s_output_tokens) AS output_tokens,\n    sum(s_total_tokens) AS total_tokens,\n    countIf(s_end IS NOT NULL) AS durations,\n    sumIf(d, s_end IS NOT NULL) AS duration_sum,\n    min(if(s_end IS NULL, NULL, d)) AS duration_min,\n    max(if(s_end IS NULL, NULL, d)) AS duration_max,\n    quantileTDigestStateIf(d, s_end IS NOT NULL) AS duration_q,\n    uniqStateIf(s_user, s_user != '') AS users,\n    uniqStateIf(s_session, s_session != '') AS sessions,\n    uniqState(s_trace) AS traces,\n    max(s_ttl) AS ttl_days\nFROM\n(\n    SELECT project_id, model_name, environment, kind, status, name, error_type,\n           start_time AS s_start, end_time AS s_end, cost AS s_cost, input_tokens AS s_input_tokens,\n           output_tokens AS s_output_tokens, total_tokens AS s_total_tokens, user_id AS s_user, session_id AS s_session,\n           trace_id AS s_trace, ttl_days AS s_ttl,\n           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d\n    FROM spans\n)\nGROUP BY project_id, bucket",
  span_rollup_totals_1h_mv:
    "SELECT\n    project_id, toStartOfHour(s_start) AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,\n    count() AS spans,\n    countIf(status = 'error') AS errors,\n    sum(s_cost) AS cost,\n    sum(s_input_tokens) AS input_tokens,\n    sum(s_output_tokens) AS output_tokens,\n    sum(s_total_tokens) AS total_tokens,\n    countIf(s_end IS NOT NULL) AS durations,\n    sumIf(d, s_end IS NOT NULL) AS duration_sum,\n    min(if(s_end IS NULL, NULL, d)) AS duration_min,\n    max(if(s_end IS NULL, NULL, d)) AS duration_max,\n    quantileTDigestStateIf(d, s_end IS NOT NULL) AS duration_q,\n    uniqStateIf(s_user, s_user != '') AS users,\n    uniqStateIf(s_session, s_session != '') AS sessions,\n    uniqState(s_trace) AS traces,\n    max(s_ttl) AS ttl_days\nFROM\n(\n    SELECT project_id, model_name, environment, kind, status, name, error_type,\n           start_time AS s_start, end_time AS s_end, cost AS s_cost, input_tokens AS s_input_tokens,\n           output_tokens AS s_output_tokens, total_tokens AS s_total_tokens, user_id AS s_user, session_id AS s_session,\n           trace_id AS s_trace, ttl_days AS s_ttl,\n           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d\n    FROM spans\n)\nGROUP BY project_id, bucket",
  span_rollup_totals_1d_mv:
    "SELECT\n    project_id, toStartOfDay(s_start) AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,\n    count() AS spans,\n    countIf(status = 'error') AS errors,\n    sum(s_cost) AS cost,\n    sum(s_input_tokens) AS input_tokens,\n    sum(s_output_tokens) AS output_tokens,\n    sum(s_total_tokens) AS total_tokens,\n    countIf(s_end IS NOT NULL) AS durations,\n    sumIf(d, s_end IS NOT NULL) AS duration_sum,\n    min(if(s_end IS NULL, NULL, d)) AS duration_min,\n    max(if(s_end IS NULL, NULL, d)) AS duration_max,\n    quantileTDigestStateIf(d, s_end IS NOT NULL) AS duration_q,\n    uniqStateIf(s_user, s_user != '') AS users,\n    uniqStateIf(s_session, s_session != '') AS sessions,\n    uniqState(s_trace) AS traces,\n    max(s_ttl) AS ttl_days\nFROM\n(\n    SELECT project_id, model_name, environment, kind, status, name, error_type,\n           start_time AS s_start, end_time AS s_end, cost AS s_cost, input_tokens AS s_input_tokens,\n           output_tokens AS s_output_tokens, total_tokens AS s_total_tokens, user_id AS s_user, session_id AS s_session,\n           trace_id AS s_trace, ttl_days AS s_ttl,\n           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d\n    FROM spans\n)\nGROUP BY project_id, bucket",
};
async function chainsOf(which: 'before' | 'after' | 'raw') {
  if (which === 'raw') {
    for (const [view, q] of Object.entries(RAW)) await ch.command({ query: `ALTER TABLE ${view} MODIFY QUERY ${q}` });
    return;
  }
  // Back from 'raw': 0002's queries of the views 0011 leaves alone.
  for (const q of original) await ch.command({ query: q });
  for (const q of which === 'after' ? chains : unchained) await ch.command({ query: q });
}

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

async function rate(settings: Record<string, number> = {}): Promise<[number, number]> {
  const data = rowsOf();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (const values of data)
    await ch.insert({ table: 'spans', values, format: 'JSONEachRow', clickhouse_settings: settings });
  const used = process.cpuUsage(cpu);
  return [(spans.length / (performance.now() - start)) * 1000, (used.user + used.system) / spans.length];
}

const allViews = async () => {
  const r = await ch.query({
    query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'",
    format: 'JSONEachRow',
  });
  return (await r.json<{ name: string }>()).map((v) => v.name);
};
const attached = new Set(await allViews());
async function only(views: string[]) {
  for (const v of [...attached])
    if (!views.includes(v)) {
      await ch.command({ query: `DETACH TABLE ${v}` });
      attached.delete(v);
    }
  for (const v of views)
    if (!attached.has(v)) {
      await ch.command({ query: `ATTACH TABLE ${v}` });
      attached.add(v);
    }
}
const everything = [...attached];
const M = 'span_rollup_1m_mv';
const configs: [string, string[], Record<string, number>?, ('before' | 'after' | 'raw')?][] = [
  ['no views', []],
  ['1m', [M]],
  ['1m + 1h', [M, 'span_rollup_1h_mv']],
  ['1m + totals_1m', [M, 'span_rollup_totals_1m_mv']],
  ['1m + totals_1h', [M, 'span_rollup_totals_1h_mv']],
  ['1m + totals_1d', [M, 'span_rollup_totals_1d_mv']],
  ['meta_1h', ['span_rollup_meta_1h_mv']],
  ['meta_1h + meta_totals_1h', ['span_rollup_meta_1h_mv', 'span_rollup_meta_totals_1h_mv']],
  ['meta_1h + meta_totals_1d', ['span_rollup_meta_1h_mv', 'span_rollup_meta_totals_1d_mv']],
  ['traces', ['traces_mv']],
  ['all', everything, { parallel_view_processing: 0, optimize_on_insert: 1 }, 'after'],
  ['all, 0002 chains', everything, { parallel_view_processing: 0, optimize_on_insert: 1 }, 'before'],
  ['all, totals from spans', everything, { parallel_view_processing: 0, optimize_on_insert: 1 }, 'raw'],
  ['all, parallel views', everything, { parallel_view_processing: 1, optimize_on_insert: 1 }],
  ['all, no optimize_on_insert', everything, { parallel_view_processing: 0, optimize_on_insert: 0 }],
  ['all, both', everything, { parallel_view_processing: 1, optimize_on_insert: 0 }],
  ['all, both, 0002 chains', everything, { parallel_view_processing: 1, optimize_on_insert: 0 }, 'before'],
];
const results: Record<string, number[]> = {};
const cpus: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, views, settings, chainWay] of configs) {
    if (args.only && !args.only.split('|').includes(label)) continue;
    await only(views);
    await chainsOf(chainWay ?? 'after');
    const [r, c] = await rate(settings);
    (results[label] ??= []).push(r);
    (cpus[label] ??= []).push(c);
  }
  await only(everything);
  console.log(
    `round ${round + 1}`,
    Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v.at(-1)!)])),
  );
}
for (const [label, values] of Object.entries(results))
  console.log(
    `${label.padEnd(32)} ${Math.round(median(values)).toString().padStart(6)} spans/s  CPU ${median(cpus[label]!).toFixed(0).padStart(5)} µs/span`,
  );
await ch.close();
