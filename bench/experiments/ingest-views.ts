// Experiment (not a test): what each materialized view on `spans` costs per ingested span, and how
// the insert format and batch size move the engine's rate. Opens its own embedded store with the
// project's ClickHouse migrations, then inserts the benchmark's rows (1,000-span batches by default)
// into: a plain MergeTree copy of `spans` (no views), `spans` with its views detached, and `spans`
// with each view (with the views chained on its target) attached alone, then all of them.
// Rounds interleave the configurations; medians are printed.
//
//   npx tsx bench/experiments/ingest-views.ts [--batches 30] [--batch 1000] [--rounds 3] [--dir /tmp/x]
//   npx tsx bench/experiments/ingest-views.ts --formats   # JSONEachRow vs pre-serialised formats, plain table
//   npx tsx bench/experiments/ingest-views.ts --corpus realistic --batches 10   # agent spans (bench/corpus.ts)
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Readable } from 'node:stream';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { corpusSpans, type CorpusName } from '../corpus.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: {
    batches: { type: 'string', default: '30' },
    batch: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
    dir: { type: 'string', default: '/tmp/sightline-exp-ingest-views' },
    formats: { type: 'boolean', default: false },
    // Only the plain table, spans with all views and spans with none.
    quick: { type: 'boolean', default: false },
    corpus: { type: 'string', default: 'default' },
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
for (const m of clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')))
  for (const statement of m.statements) await ch.command({ query: statement });

const stamp = Date.now();
const spans = corpusSpans(args.corpus as CorpusName, {
  spans: BATCHES * BATCH,
  startMs: stamp - 86_400_000,
  endMs: stamp,
  seed: 7,
});
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

/** Inserts a fresh project's rows; the rate, and the process's CPU µs per span (engine threads included). */
async function rate(
  table: string,
  insert: (table: string, values: object[]) => Promise<unknown> = (t, values) =>
    ch.insert({ table: t, values, format: 'JSONEachRow' }),
): Promise<[number, number]> {
  const data = rowsOf();
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (const values of data) await insert(table, values);
  const used = process.cpuUsage(cpu);
  return [(spans.length / (performance.now() - start)) * 1000, (used.user + used.system) / spans.length];
}

/** Views reading `table`, each with the views chained on its target table (read off their definitions). */
async function viewsOn(table: string): Promise<{ name: string; chain: string[] }[]> {
  const r = await ch.query({
    query:
      "SELECT name, create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView' ORDER BY name",
    format: 'JSONEachRow',
  });
  const all = (await r.json<{ name: string; q: string }>()).map((v) => ({
    name: v.name,
    to: /\bTO (?:\w+\.)?(\w+)/.exec(v.q)?.[1],
    from: [...v.q.matchAll(/\bFROM (?:\w+\.)?(\w+)/g)].map((m) => m[1]),
  }));
  const on = (t: string): { name: string; chain: string[] }[] =>
    all
      .filter((v) => v.from.includes(t))
      .map((v) => ({ name: v.name, chain: v.to ? on(v.to).flatMap((c) => [c.name, ...c.chain]) : [] }));
  return on(table);
}

await ch.command({
  query:
    'CREATE TABLE exp_plain AS spans ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)',
});
const results: Record<string, number[]> = {};
const cpuResults: Record<string, number[]> = {};
const record = (label: string, [value, cpu]: [number, number]) => {
  (results[label] ??= []).push(value);
  (cpuResults[label] ??= []).push(cpu);
};

if (args.formats) {
  // Pre-serialised text through client.exec: the engine parses it; JS only builds the text.
  const COLUMNS = [
    'project_id',
    'trace_id',
    'span_id',
    'parent_span_id',
    'name',
    'kind',
    'start_time',
    'end_time',
    'status',
    'error_type',
    'error_message',
    'model_name',
    'environment',
    'user_id',
    'session_id',
    'input',
    'output',
    'metadata',
    'cost',
    'input_tokens',
    'output_tokens',
    'total_tokens',
    'evaluation_run_id',
    'trace_start_hour',
    'ttl_days',
  ];
  const exec =
    (format: string, body: (rows: Record<string, unknown>[]) => string) => async (table: string, values: object[]) => {
      const r = await ch.exec({
        query: `INSERT INTO ${table} (${COLUMNS.join(', ')}) FORMAT ${format}`,
        values: Readable.from([body(values as Record<string, unknown>[])]),
      });
      r.stream.resume();
    };
  const jsonEachRow = exec('JSONEachRow', (rows) => rows.map((r) => JSON.stringify(r)).join('\n'));
  const compact = exec('JSONCompactEachRow', (rows) =>
    rows.map((r) => JSON.stringify(COLUMNS.map((c) => r[c]))).join('\n'),
  );
  for (let round = 0; round < ROUNDS; round++) {
    record('client.insert JSONEachRow', await rate('exp_plain'));
    record('exec JSONEachRow text', await rate('exp_plain', jsonEachRow));
    record('exec JSONCompactEachRow text', await rate('exp_plain', compact));
    console.log(
      `round ${round + 1}`,
      Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v.at(-1)!)])),
    );
  }
} else {
  const views = await viewsOn('spans');
  const all = views.flatMap((v) => [v.name, ...v.chain]);
  const detach = async (list: string[]) => {
    for (const v of list) await ch.command({ query: `DETACH TABLE ${v}` });
  };
  const attach = async (list: string[]) => {
    for (const v of list) await ch.command({ query: `ATTACH TABLE ${v}` });
  };
  console.log(
    'views on spans:',
    views.map((v) => `${v.name}${v.chain.length ? ` (+ ${v.chain.join(', ')})` : ''}`).join('; '),
  );
  for (let round = 0; round < ROUNDS; round++) {
    record('plain MergeTree', await rate('exp_plain'));
    record('spans, all views', await rate('spans'));
    await detach(all);
    record('spans, no views', await rate('spans'));
    for (const v of args.quick ? [] : views) {
      await attach([v.name]);
      record(`spans + ${v.name} alone`, await rate('spans'));
      if (v.chain.length) {
        await attach(v.chain);
        record(`spans + ${v.name} + its chain`, await rate('spans'));
        await detach(v.chain);
      }
      await detach([v.name]);
    }
    await attach(all);
    console.log(
      `round ${round + 1}`,
      Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v.at(-1)!)])),
    );
  }
}

const first = Object.keys(results)[0]!;
const base = median(results[first]!);
const noViews = results['spans, no views'] ? median(results['spans, no views']) : base;
const noViewsCpu = cpuResults['spans, no views'] ? median(cpuResults['spans, no views']) : median(cpuResults[first]!);
console.log(
  `\n${BATCHES} batches of ${BATCH} spans, median of ${ROUNDS} rounds (wall: rate and µs/span; CPU: process CPU µs/span, engine threads included)`,
);
for (const [label, values] of Object.entries(results)) {
  const r = median(values);
  const usPerSpan = 1e6 / r;
  const cpu = median(cpuResults[label]!);
  const extra = label.startsWith('spans +')
    ? `, +${(usPerSpan - 1e6 / noViews).toFixed(1)} wall / +${(cpu - noViewsCpu).toFixed(1)} CPU µs/span over spans without views`
    : '';
  console.log(
    `${label.padEnd(48)} ${Math.round(r).toString().padStart(7)} spans/s  ${usPerSpan.toFixed(1).padStart(6)} µs/span  CPU ${cpu.toFixed(1).padStart(6)} µs/span  ${((r / base) * 100).toFixed(0)}% of first${extra}`,
  );
}
await ch.close();
