// Experiment (not a test; issue 22, item 2): bytes a span of the realistic corpus's input and output
// take when stored as today (two ZSTD(3) columns) against one column holding both, so the answer of
// LLM call N and the next call's input, which repeats it, fall into one compression stream.
//
//   npx tsx bench/experiments/io-column.ts [--spans 20000] [--dir /tmp/x]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { realisticTraces } from '../corpus.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { withPayload } from '../../src/traces/span-payload.js';

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '20000' },
    dir: { type: 'string', default: '/tmp/sightline-exp-io-column' },
  },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);

const SETTINGS =
  'SETTINGS index_granularity = 2048, min_compress_block_size = 4194304, max_compress_block_size = 4194304';
const KEY = 'ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)';
const VARIANTS: Record<string, string> = {
  two: `input Nullable(String) CODEC(ZSTD(3)), output Nullable(String) CODEC(ZSTD(3))`,
  io: `io String CODEC(ZSTD(3)), input_len UInt32 CODEC(T64, ZSTD(1))`,
  io6: `io String CODEC(ZSTD(6)), input_len UInt32 CODEC(T64, ZSTD(1))`,
  io_oi: `io String CODEC(ZSTD(3)), input_len UInt32 CODEC(T64, ZSTD(1))`,
};
for (const [name, cols] of Object.entries(VARIANTS)) {
  await ch.command({
    query: `CREATE TABLE t_${name} (project_id String, trace_id String, span_id String, start_time DateTime64(3, 'UTC'), ${cols}) ENGINE = MergeTree ${KEY} ${SETTINGS}`,
  });
}

const N = Number(args.spans);
const rows: {
  project_id: string;
  trace_id: string;
  span_id: string;
  start_time: number;
  input: string | null;
  output: string | null;
}[] = [];
let raw = 0;
for (const spans of realisticTraces({ spans: N, startMs: Date.now() - 86_400_000, endMs: Date.now(), seed: 7 })) {
  raw += Buffer.byteLength(JSON.stringify(spans));
  for (const s of validateSpans(spans).accepted)
    rows.push({
      project_id: 'p',
      trace_id: s.trace_id,
      span_id: s.span_id,
      start_time: s.start_time,
      input: s.input,
      output: s.output,
    });
  if (rows.length >= N) break;
}
const insert = async (table: string, values: object[]) => {
  for (let i = 0; i < values.length; i += 5000)
    await ch.insert({ table, values: values.slice(i, i + 5000), format: 'JSONEachRow' });
};
await insert('t_two', rows);
const io = rows.map((r) => ({
  ...r,
  io: (r.input ?? '') + (r.output ?? ''),
  input_len: Buffer.byteLength(r.input ?? ''),
}));
await insert('t_io', io);
await insert('t_io6', io);
await insert(
  't_io_oi',
  rows.map((r) => ({ ...r, io: (r.output ?? '') + (r.input ?? ''), input_len: Buffer.byteLength(r.output ?? '') })),
);
for (const name of Object.keys(VARIANTS)) await ch.command({ query: `OPTIMIZE TABLE t_${name} FINAL` });
const res = await ch.query({
  query: `SELECT table, column, sum(data_compressed_bytes) AS c FROM system.columns WHERE database = currentDatabase() AND table LIKE 't\\_%' GROUP BY table, column ORDER BY table, column`,
  format: 'JSONEachRow',
});
const out = (await res.json()) as { table: string; column: string; c: string }[];
console.log(`spans ${rows.length}, raw JSON ${(raw / rows.length).toFixed(0)} B a span`);
const by: Record<string, number> = {};
for (const r of out)
  if (!['project_id', 'trace_id', 'span_id', 'start_time'].includes(r.column))
    by[r.table] = (by[r.table] ?? 0) + Number(r.c);
for (const r of out) console.log(r.table, r.column, (Number(r.c) / rows.length).toFixed(1), 'B a span');
for (const [t, b] of Object.entries(by)) console.log(t, 'payload', (b / rows.length).toFixed(1), 'B a span');
// Reads: a scan of one field (as a text search of one scope over the un-indexed tail does) and of both,
// two columns against input and output as ALIAS columns of io; medians of 7, interleaved.
await ch.command({
  query: `CREATE TABLE t_alias (project_id String, trace_id String, span_id String, start_time DateTime64(3, 'UTC'),
    io String CODEC(ZSTD(3)), io_split UInt32 CODEC(T64, ZSTD(1)), io_nulls UInt8,
    input Nullable(String) ALIAS if(bitTest(io_nulls, 0), NULL, substring(io, 1, io_split)),
    output Nullable(String) ALIAS if(bitTest(io_nulls, 1), NULL, substring(io, io_split + 1))) ENGINE = MergeTree ${KEY} ${SETTINGS}`,
});
await insert(
  't_alias',
  rows.map((r) => withPayload(r)),
);
await ch.command({ query: 'OPTIMIZE TABLE t_alias FINAL' });
const SCANS: Record<string, string> = {
  output: "positionCaseInsensitiveUTF8(output, 'zürich verspätet') > 0",
  input: "positionCaseInsensitiveUTF8(input, 'zürich verspätet') > 0",
  both: "positionCaseInsensitiveUTF8(input, 'zürich verspätet') > 0 OR positionCaseInsensitiveUTF8(output, 'zürich verspätet') > 0",
  'one trace': `trace_id = '${rows[rows.length >> 1]!.trace_id}' AND length(input) + length(output) > 0`,
};
const times: Record<string, number[]> = {};
for (let run = 0; run < 7; run++)
  for (const [scan, where] of Object.entries(SCANS))
    for (const table of ['t_two', 't_alias']) {
      const started = performance.now();
      await (
        await ch.query({
          query: `SELECT count() FROM ${table} WHERE ${where} SETTINGS use_query_condition_cache = 0`,
          format: 'JSONEachRow',
        })
      ).json();
      (times[`${scan} ${table}`] ??= []).push(performance.now() - started);
    }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
for (const [k, xs] of Object.entries(times)) console.log(`scan ${k}: ${median(xs).toFixed(1)} ms`);
await ch.close();
