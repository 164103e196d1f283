// Bytes on disk per span (issue 22, item 2): the realistic corpus (bench/corpus.ts) sent through the
// API into fresh embedded stores, every table merged (OPTIMIZE … FINAL), then sizes read from the
// engine's own accounts (system.parts, system.columns, system.data_skipping_indices): bytes per span
// of `spans` and of every table fed from it, against the raw JSON of the spans sent and against gzip
// of that JSON. Also the ingest rate (spans/s and MB/s of JSON) of the same run.
//
//   npm run bench -- --only storage --storage-spans 100000
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { ClickHouseClient } from '@clickhouse/client';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { buildApiApp } from '../src/app.js';
import { buildWebApp } from '../src/web/app.js';
import { realisticTraces } from './corpus.js';
import { postIngestBodies, type Row } from './measure.js';
import type { SpanInput } from '../src/traces/span-input.js';
import { PAYLOAD_COLUMNS } from '../src/traces/span-payload.js';
import { catchUpSeal } from '../src/rollups/seal.js';
import { catchUpTextIndex } from '../src/traces/text-index.js';
import { BEFORE_0030 } from './text-search.js';

export type StorageOptions = {
  dir: string;
  spans: number;
  batch: number;
  concurrency: number;
  seed: number;
  /**
   * `before`: the spans table as it was before clickhouse/0010_span_storage.sql (its codecs and
   * settings reverted on the fresh, empty table), so one build measures both sides of the change.
   * `before-0013`: `traces.root` without clickhouse/0013_trace_root_codec.sql's ZSTD (LZ4, the default).
   * `before-0030`: the text index with clickhouse/0012's codecs (without 0030_text_index_codecs.sql).
   */
  schema?: 'before' | 'before-0013' | 'before-0030' | 'after';
  /** Also the step table (storageSteps): each storage variant measured on a copy of the same rows. */
  steps?: boolean;
};

/** The columns clickhouse/0010_span_storage.sql gave codecs. */
const BEFORE_0010_COLUMNS = [
  'trace_id',
  'span_id',
  'parent_span_id',
  'start_time',
  'end_time',
  'user_id',
  'session_id',
  'metadata',
  'cost',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'time_to_first_token_ms',
  'output_tokens_per_second',
  'ingested_at',
];
/** What clickhouse/0010_span_storage.sql changed, undone. */
const BEFORE_0010 = [
  `ALTER TABLE spans ${BEFORE_0010_COLUMNS.map((c) => `MODIFY COLUMN ${c} REMOVE CODEC`).join(', ')}`,
  'ALTER TABLE spans RESET SETTING min_compress_block_size, max_compress_block_size',
];

/** What clickhouse/0013_trace_root_codec.sql changed, undone. */
const BEFORE_0013 = 'ALTER TABLE traces MODIFY COLUMN root REMOVE CODEC';

export type TableSize = {
  table: string;
  rows: number;
  parts: number;
  compressed: number;
  uncompressed: number;
  on_disk: number;
};
export type ColumnSize = { column: string; type: string; compressed: number; uncompressed: number; codec: string };

const MB = 1024 * 1024;

export async function benchStorage(options: StorageOptions, rows: Row[]) {
  fs.rmSync(options.dir, { recursive: true, force: true });
  fs.mkdirSync(options.dir, { recursive: true });
  const ctx = await openRuntime(
    loadConfig({ DATA_DIR: options.dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', WEB_URL: 'http://localhost:3000' }),
  );
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  try {
    if (options.schema === 'before') for (const query of BEFORE_0010) await ctx.ch.client.command({ query });
    if (options.schema === 'before-0013') await ctx.ch.client.command({ query: BEFORE_0013 });
    if (options.schema === 'before-0030') for (const query of BEFORE_0030) await ctx.ch.client.command({ query });
    const key = await projectKey(api, web);
    await api.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/public/traces`;

    // The corpus, streamed: request bodies of `batch` spans, the raw JSON of every span counted, and
    // one gzip stream over all of it (the best gzip can do: its 32 KB window sees neighbours).
    const nowMs = Date.now();
    const traces = realisticTraces({
      spans: options.spans,
      startMs: nowMs - 86_400_000,
      endMs: nowMs,
      seed: options.seed,
    });
    const gzip = zlib.createGzip({ level: 6 });
    let gzipBytes = 0;
    gzip.on('data', (chunk: Buffer) => (gzipBytes += chunk.length));
    const gzipDone = new Promise((resolve) => gzip.on('end', resolve));
    let rawBytes = 0;
    let sent = 0;
    const bodies: string[] = [];
    let pending: SpanInput[] = [];
    const flush = () => {
      if (pending.length === 0) return;
      bodies.push(JSON.stringify({ spans: pending }));
      pending = [];
    };
    for (const trace of traces) {
      for (const span of trace) {
        const json = JSON.stringify(span);
        rawBytes += Buffer.byteLength(json);
        gzip.write(`${json}\n`);
        pending.push(span);
        sent++;
        if (pending.length === options.batch) flush();
      }
    }
    flush();
    gzip.end();
    await gzipDone;

    const cpu = process.cpuUsage();
    const started = performance.now();
    await postIngestBodies(url, key, bodies, options.concurrency);
    const seconds = (performance.now() - started) / 1000;
    const cpuUs = process.cpuUsage(cpu);
    bodies.length = 0;

    // What the worker's jobs add off the insert path, as a running deployment holds it: the span
    // rollups (src/rollups/seal.ts) and the text index (src/traces/text-index.ts).
    await catchUpSeal(ctx, { lagMs: 0 });
    await catchUpTextIndex(ctx, { lagMs: 0 });
    const merged = await mergeAll(ctx.ch.client);
    const tables = await tableSizes(ctx.ch.client);
    const columns = await columnSizes(ctx.ch.client, 'spans');
    const indexes = await indexSizes(ctx.ch.client, 'spans');
    const fedColumns = await columnSizes(ctx.ch.client, '%', true);
    const spansTable = tables.find((t) => t.table === 'spans');
    if (!spansTable || spansTable.rows !== sent)
      throw new Error(`spans holds ${spansTable?.rows ?? 0} rows after the merge, ${sent} were sent`);

    const perSpan = (bytes: number) => bytes / sent;
    const rawPerSpan = perSpan(rawBytes);
    const fed = tables.filter((t) => t.table !== 'spans');
    const fedBytes = fed.reduce((n, t) => n + t.on_disk, 0);
    const allBytes = spansTable.on_disk + fedBytes;
    const schema =
      options.schema === 'before'
        ? ', schema before 0010'
        : options.schema === 'before-0013'
          ? ', traces.root before 0013 (LZ4)'
          : options.schema === 'before-0030'
            ? ', text index before 0030'
            : '';
    const work = `${sent.toLocaleString()} realistic spans (${(rawPerSpan / 1024).toFixed(1)} KB JSON each) via the API, merged${schema}`;
    const fmt = (b: number) => `${b.toFixed(0)} B/span`;
    rows.push({
      work: `bytes on disk, spans table: ${work}`,
      api: fmt(perSpan(spansTable.on_disk)),
      reference: `raw JSON ${fmt(rawPerSpan)}, gzip ${fmt(perSpan(gzipBytes))} (${(rawBytes / gzipBytes).toFixed(1)}×)`,
      ratio: `${(rawBytes / spansTable.on_disk).toFixed(1)}× smaller than raw`,
      target: '≥ 20× smaller than raw',
    });
    rows.push({
      work: `bytes on disk, spans + every table fed from it (trace and span rollups, text index): ${work}`,
      api: fmt(perSpan(allBytes)),
      reference: `of which fed tables ${fmt(perSpan(fedBytes))}`,
      ratio: `${(rawBytes / allBytes).toFixed(1)}× smaller than raw`,
      target: '≥ 12× smaller than raw (issue 36)',
    });
    rows.push({
      work: `ingest of the same, ${options.batch}/request, ${options.concurrency} in flight${schema}`,
      api: `${Math.round(sent / seconds).toLocaleString()} spans/s`,
      reference: `${(rawBytes / MB / seconds).toFixed(1)} MB/s of JSON, ${((cpuUs.user + cpuUs.system) / sent).toFixed(
        0,
      )} µs CPU/span`,
      ratio: '',
      target: '',
    });

    printSizes(tables, columns, indexes, sent, rawBytes, gzipBytes);
    printFedColumns(fedColumns, sent);
    const steps = options.steps ? await storageSteps(ctx.ch.client, rawBytes, rows) : undefined;
    return {
      steps,
      schema: options.schema ?? 'after',
      spans: sent,
      raw_json_bytes: rawBytes,
      gzip_bytes: gzipBytes,
      ingest_seconds: seconds,
      ingest_spans_per_s: sent / seconds,
      ingest_mb_per_s: rawBytes / MB / seconds,
      cpu_us_per_span: (cpuUs.user + cpuUs.system) / sent,
      merge_seconds: merged,
      tables,
      spans_columns: columns,
      fed_columns: fedColumns,
      spans_indexes: indexes,
      bytes_per_span: {
        spans: perSpan(spansTable.on_disk),
        all: perSpan(allBytes),
        raw: rawPerSpan,
        gzip: perSpan(gzipBytes),
      },
    };
  } finally {
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
  }
}

async function projectKey(api: ReturnType<typeof buildApiApp>, web: ReturnType<typeof buildWebApp>): Promise<string> {
  const call = async (app: typeof api, url: string, payload: unknown, token?: string) => {
    const res = await app.inject({
      method: 'POST',
      url,
      payload: payload as never,
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    if (res.statusCode >= 300) throw new Error(`POST ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return res.json();
  };
  const signup = await call(web, '/api/auth/signup', {
    email: `bench-storage-${Date.now()}@sightline.local`,
    password: 'bench password 1',
    name: 'Bench',
  });
  const project = await call(
    api,
    '/api/v1/public/projects',
    { name: 'storage', workspace_id: signup.workspace.id, trace_ttl_days: 3650 },
    signup.session_token,
  );
  return (await call(api, `/api/v1/public/projects/${project.id}/api-keys`, { name: 'bench' }, signup.session_token))
    .key;
}

/** OPTIMIZE … FINAL on every table that has data: what background merges reach, at once. Answers seconds. */
export async function mergeAll(client: ClickHouseClient): Promise<number> {
  const started = performance.now();
  const r = await client.query({
    query: `SELECT DISTINCT table FROM system.parts WHERE active AND database = currentDatabase()`,
    format: 'JSONEachRow',
  });
  for (const { table } of await r.json<{ table: string }>())
    await client.command({ query: `OPTIMIZE TABLE \`${table}\` FINAL` });
  return (performance.now() - started) / 1000;
}

export async function tableSizes(client: ClickHouseClient, like = '%'): Promise<TableSize[]> {
  const r = await client.query({
    query: `SELECT table, sum(rows) AS rows, count() AS parts, sum(data_compressed_bytes) AS compressed,
              sum(data_uncompressed_bytes) AS uncompressed, sum(bytes_on_disk) AS on_disk
            FROM system.parts WHERE active AND database = currentDatabase() AND table LIKE {like:String}
            GROUP BY table ORDER BY on_disk DESC`,
    query_params: { like },
    format: 'JSONEachRow',
  });
  return (await r.json<Record<string, string | number>>()).map((x) => ({
    table: String(x.table),
    rows: Number(x.rows),
    parts: Number(x.parts),
    compressed: Number(x.compressed),
    uncompressed: Number(x.uncompressed),
    on_disk: Number(x.on_disk),
  }));
}

/** Column sizes of `table` (a LIKE pattern with `fed`: every table but `spans`, named `table.column`). */
export async function columnSizes(client: ClickHouseClient, table: string, fed = false): Promise<ColumnSize[]> {
  const r = await client.query({
    query: `SELECT table, name, type, data_compressed_bytes AS compressed, data_uncompressed_bytes AS uncompressed, compression_codec AS codec
            FROM system.columns WHERE database = currentDatabase() AND table LIKE {table:String}
              AND ({fed:Bool} = 0 OR (table != 'spans' AND data_compressed_bytes > 0))
            ORDER BY compressed DESC`,
    query_params: { table, fed },
    format: 'JSONEachRow',
  });
  return (await r.json<Record<string, string | number>>()).map((x) => ({
    column: fed ? `${String(x.table)}.${String(x.name)}` : String(x.name),
    type: String(x.type),
    compressed: Number(x.compressed),
    uncompressed: Number(x.uncompressed),
    codec: String(x.codec),
  }));
}

export async function indexSizes(client: ClickHouseClient, table: string) {
  const r = await client.query({
    query: `SELECT name, data_compressed_bytes AS compressed, marks_bytes AS marks
            FROM system.data_skipping_indices WHERE database = currentDatabase() AND table = {table:String}`,
    query_params: { table },
    format: 'JSONEachRow',
  });
  return (await r.json<Record<string, string | number>>()).map((x) => ({
    index: String(x.name),
    compressed: Number(x.compressed),
    marks: Number(x.marks),
  }));
}

function printSizes(
  tables: TableSize[],
  columns: ColumnSize[],
  indexes: { index: string; compressed: number; marks: number }[],
  spans: number,
  raw: number,
  gzip: number,
): void {
  const b = (n: number) => (n / spans).toFixed(1).padStart(9);
  console.log(`\nraw JSON ${b(raw)} B/span, gzip ${b(gzip)} B/span`);
  console.log('\ntable                              rows     on disk B/span  compressed B/span  uncompressed B/span');
  for (const t of tables)
    console.log(
      `${t.table.padEnd(32)} ${String(t.rows).padStart(8)} ${b(t.on_disk)} ${b(t.compressed).padStart(18)} ${b(t.uncompressed).padStart(20)}`,
    );
  console.log('\nspans column                     compressed B/span  uncompressed B/span  codec');
  for (const c of columns)
    console.log(`${c.column.padEnd(32)} ${b(c.compressed).padStart(18)} ${b(c.uncompressed).padStart(20)}  ${c.codec}`);
  for (const i of indexes)
    console.log(`index ${i.index.padEnd(26)} ${b(i.compressed).padStart(18)}  marks ${b(i.marks)}`);
}

/** The largest columns of the tables fed from `spans` (the text index, rollups, trace rows). */
function printFedColumns(columns: ColumnSize[], spans: number): void {
  console.log('\nfed table column                          compressed B/span  uncompressed B/span  codec');
  for (const c of columns.slice(0, 25))
    console.log(
      `${c.column.padEnd(42)} ${(c.compressed / spans).toFixed(1).padStart(18)} ${(c.uncompressed / spans).toFixed(1).padStart(20)}  ${c.codec}`,
    );
}

export const STORAGE_DEFAULT_DIR = path.resolve('bench/data/storage');

/** One variant of the spans table's storage, as the step table measures it. */
type Variant = { step: string; edit: (ddl: string) => string };

const COLUMNS_0010 = BEFORE_0010_COLUMNS;
const withoutCodec = (ddl: string, column: string) =>
  ddl.replace(new RegExp('(`' + column + '` [^\\n]*?) CODEC\\([^\\n]*\\)(,?)\\n'), '$1$2\n');
const setting = (ddl: string, extra: string) =>
  ddl.replace(/SETTINGS index_granularity = 2048[^\n]*/, `SETTINGS index_granularity = 2048${extra}`);
const BLOCKS = ', min_compress_block_size = 4194304, max_compress_block_size = 4194304';
const payloadCodec = (ddl: string, codec: string) =>
  ddl.replace(/(`(input|output)` Nullable\(String\)|`io` String DEFAULT '') CODEC\(ZSTD\(3\)\)/g, `$1 CODEC(${codec})`);
/** Before clickhouse/0016: input and output stored in two ZSTD(3) columns, no `io`. */
const twoColumns = (ddl: string) =>
  ddl
    .replace(/(`(input|output)` Nullable\(String\)) ALIAS [^\n]*?(,?)\n/g, '$1 CODEC(ZSTD(3))$3\n')
    .replace(/ *`io(_split|_nulls)?` [^\n]*\n/g, '');

const VARIANTS: Variant[] = [
  {
    step: 'before 0010 (ZSTD(3) payloads, LZ4 elsewhere, 1 MiB blocks)',
    edit: (d) => setting(COLUMNS_0010.reduce(withoutCodec, twoColumns(d)), ''),
  },
  {
    step: '+ 4 MiB compression blocks',
    edit: (d) => setting(COLUMNS_0010.reduce(withoutCodec, twoColumns(d)), BLOCKS),
  },
  { step: '+ ZSTD/Delta/T64 on ids, times, counts (= 0010)', edit: (d) => setting(twoColumns(d), BLOCKS) },
  { step: '0010 + ZSTD(6) on input/output', edit: (d) => payloadCodec(setting(twoColumns(d), BLOCKS), 'ZSTD(6)') },
  {
    step: '0010 + key (project, trace_start_hour, trace_id, start_time, span_id)',
    edit: (d) =>
      setting(twoColumns(d), BLOCKS).replace(
        /ORDER BY \([^\n]*\)\n/,
        'ORDER BY (project_id, trace_start_hour, trace_id, start_time, span_id)\n',
      ),
  },
  { step: '+ input and output in one column (= 0016/0017)', edit: (d) => setting(d, BLOCKS) },
  { step: '0016 + ZSTD(6) on io', edit: (d) => payloadCodec(setting(d, BLOCKS), 'ZSTD(6)') },
];

/**
 * The step table: the spans just ingested copied into a table per storage variant (codecs, block
 * size, sort key), merged, measured; the copy's insert work per span is the step's ingest cost (the
 * read of the source is the same for all). Then the content-addressed prototype: every message of
 * an LLM conversation (and every tool list) stored once per project, the spans keeping references.
 */
export async function storageSteps(client: ClickHouseClient, rawJsonBytes: number, rows: Row[]) {
  const count = async (q: string) =>
    (await (await client.query({ query: q, format: 'JSONEachRow' })).json<Record<string, string>>())[0]!;
  const spans = Number((await count('SELECT count() AS n FROM spans')).n);
  const ddl = (await count('SHOW CREATE TABLE spans')).statement!.replace(
    /CREATE TABLE \S+/,
    'CREATE TABLE bench_spans_variant',
  );
  const out: Record<string, unknown>[] = [];
  let base: number | undefined;
  let baseUs: number | undefined;
  let otherBytes = 0;
  for (const v of VARIANTS) {
    await client.command({ query: 'DROP TABLE IF EXISTS bench_spans_variant SYNC' });
    await client.command({ query: v.edit(ddl) });
    // The variant's stored columns, by name (spans' input and output are ALIAS columns of `io`).
    const stored = (
      await (
        await client.query({
          query: `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'bench_spans_variant'
                    AND default_kind != 'ALIAS' ORDER BY position`,
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>()
    )
      .map((c) => c.name)
      .join(', ');
    const started = performance.now();
    await client.command({
      query: `INSERT INTO bench_spans_variant (${stored}) SELECT ${stored} FROM spans ORDER BY start_time
              SETTINGS max_block_size = 1000, min_insert_block_size_rows = 1000, min_insert_block_size_bytes = 0`,
    });
    const us = ((performance.now() - started) * 1000) / spans;
    await client.command({ query: 'OPTIMIZE TABLE bench_spans_variant FINAL' });
    const [size] = await tableSizes(client, 'bench_spans_variant');
    const cols = await columnSizes(client, 'bench_spans_variant');
    const payload = cols
      .filter((c) => ['input', 'output', ...PAYLOAD_COLUMNS].includes(c.column))
      .reduce((n, c) => n + c.compressed, 0);
    if (v.step.includes('= 0010')) otherBytes = size!.on_disk - payload;
    base ??= size!.on_disk;
    baseUs ??= us;
    out.push({
      step: v.step,
      bytes_per_span: size!.on_disk / spans,
      payload_bytes_per_span: payload / spans,
      insert_us_per_span: us,
    });
    rows.push({
      work: `step: ${v.step}`,
      api: `${(size!.on_disk / spans).toFixed(0)} B/span (input+output ${(payload / spans).toFixed(0)})`,
      reference: `${(((base - size!.on_disk) / base) * 100).toFixed(1)}% smaller than before 0010`,
      ratio: `${(rawJsonBytes / size!.on_disk).toFixed(1)}× smaller than raw; insert ${us.toFixed(0)} µs/span (${us >= baseUs ? '+' : ''}${(((us - baseUs) / baseUs) * 100).toFixed(0)}%)`,
      target: '',
    });
  }
  await client.command({ query: 'DROP TABLE IF EXISTS bench_spans_variant SYNC' });
  const ca = await contentAddressedPrototype(client, spans);
  const total = otherBytes + ca.spans_bytes + ca.chunk_bytes;
  out.push({ step: 'content-addressed prototype', ...ca, bytes_per_span: total / spans });
  rows.push({
    work: `step: 0010 + each message stored once per project (prototype, ${ca.exact}/${spans} exact)`,
    api: `${(total / spans).toFixed(0)} B/span (refs ${(ca.spans_bytes / spans).toFixed(0)}, messages ${(ca.chunk_bytes / spans).toFixed(0)})`,
    reference: `${(((base! - total) / base!) * 100).toFixed(1)}% smaller than before 0010`,
    ratio: `${(rawJsonBytes / total).toFixed(1)}× smaller than raw; encode ${ca.encode_us_per_span.toFixed(0)} µs/span in JS, insert ${ca.insert_us_per_span.toFixed(0)} µs/span`,
    target: '',
  });
  return out;
}

/**
 * What storing each conversation message once per project would save, measured, not wired: each
 * span's input and output cut into pieces at the JSON values that repeat (objects with a `role`: the
 * messages an LLM call carries again and again, and an LLM's answer, which the next call carries; a
 * `tools` list), each piece stored once per project under its hash, the span keeping literal text
 * and references. Checks the pieces rebuild every text byte for byte.
 */
async function contentAddressedPrototype(client: ClickHouseClient, spans: number) {
  const r = await client.query({
    query: 'SELECT project_id, trace_start_hour, input, output FROM spans ORDER BY start_time',
    format: 'JSONEachRow',
  });
  const source = await r.json<{
    project_id: string;
    trace_start_hour: string;
    input: string | null;
    output: string | null;
  }>();
  const chunks = new Map<string, string>();
  const spanRows: { project_id: string; input_parts: string[]; output_parts: string[] }[] = [];
  const chunkRows: { project_id: string; hash: string; first_hour: string; body: string }[] = [];
  let exact = 0;
  const started = performance.now();
  for (const s of source) {
    const input = encodePayload(s.input);
    const output = encodePayload(s.output);
    for (const [hash, body] of [...input.chunks, ...output.chunks]) {
      if (chunks.has(hash)) continue;
      chunks.set(hash, body);
      chunkRows.push({ project_id: s.project_id, hash, first_hour: s.trace_start_hour, body });
    }
    const decode = (parts: string[]) =>
      parts.map((p) => (p[0] === 'L' ? p.slice(1) : chunks.get(p.slice(1))!)).join('');
    if (
      (s.input === null || decode(input.parts) === s.input) &&
      (s.output === null || decode(output.parts) === s.output)
    )
      exact++;
    spanRows.push({ project_id: s.project_id, input_parts: input.parts, output_parts: output.parts });
  }
  const encodeUs = ((performance.now() - started) * 1000) / spans;
  await client.command({ query: 'DROP TABLE IF EXISTS bench_ca_spans SYNC' });
  await client.command({ query: 'DROP TABLE IF EXISTS bench_ca_chunks SYNC' });
  await client.command({
    query: `CREATE TABLE bench_ca_spans (project_id LowCardinality(String), input_parts Array(String) CODEC(ZSTD(3)),
              output_parts Array(String) CODEC(ZSTD(3))) ENGINE = MergeTree ORDER BY project_id
              SETTINGS index_granularity = 2048, min_compress_block_size = 4194304, max_compress_block_size = 4194304`,
  });
  await client.command({
    query: `CREATE TABLE bench_ca_chunks (project_id LowCardinality(String), first_hour DateTime('UTC'),
              hash String CODEC(ZSTD(1)), body String CODEC(ZSTD(3))) ENGINE = ReplacingMergeTree
              ORDER BY (project_id, first_hour, hash)
              SETTINGS index_granularity = 2048, min_compress_block_size = 4194304, max_compress_block_size = 4194304`,
  });
  const insertStarted = performance.now();
  for (let i = 0; i < spanRows.length; i += 1000)
    await client.insert({ table: 'bench_ca_spans', values: spanRows.slice(i, i + 1000), format: 'JSONEachRow' });
  for (let i = 0; i < chunkRows.length; i += 1000)
    await client.insert({ table: 'bench_ca_chunks', values: chunkRows.slice(i, i + 1000), format: 'JSONEachRow' });
  const insertUs = ((performance.now() - insertStarted) * 1000) / spans;
  await client.command({ query: 'OPTIMIZE TABLE bench_ca_spans FINAL' });
  await client.command({ query: 'OPTIMIZE TABLE bench_ca_chunks FINAL' });
  const [spansSize] = await tableSizes(client, 'bench_ca_spans');
  const [chunkSize] = await tableSizes(client, 'bench_ca_chunks');
  await client.command({ query: 'DROP TABLE bench_ca_spans SYNC' });
  await client.command({ query: 'DROP TABLE bench_ca_chunks SYNC' });
  return {
    exact,
    chunks: chunks.size,
    spans_bytes: spansSize!.on_disk,
    chunk_bytes: chunkSize!.on_disk,
    encode_us_per_span: encodeUs,
    insert_us_per_span: insertUs,
  };
}

type Piece = string | { chunk: string };

/** `text` as literal pieces and references (`L…` literal, `H<md5>` a stored piece); falls back to one literal. */
function encodePayload(text: string | null): { parts: string[]; chunks: [string, string][] } {
  if (text === null) return { parts: [], chunks: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { parts: [`L${text}`], chunks: [] };
  }
  const pieces: Piece[] = [];
  serialize(value, pieces, null);
  // Only where cutting the parsed value rebuilds the very text (JSON.stringify's spelling): else literal.
  if (pieces.map((p) => (typeof p === 'string' ? p : p.chunk)).join('') !== text)
    return { parts: [`L${text}`], chunks: [] };
  const parts: string[] = [];
  const chunks: [string, string][] = [];
  let literal = '';
  for (const p of pieces) {
    if (typeof p === 'string') {
      literal += p;
      continue;
    }
    if (literal) parts.push(`L${literal}`);
    literal = '';
    const hash = crypto.createHash('md5').update(p.chunk).digest('base64');
    parts.push(`H${hash}`);
    chunks.push([hash, p.chunk]);
  }
  if (literal) parts.push(`L${literal}`);
  return { parts, chunks };
}

function serialize(v: unknown, out: Piece[], key: string | null): void {
  if (v === null || typeof v !== 'object') {
    out.push(JSON.stringify(v));
    return;
  }
  if ((!Array.isArray(v) && 'role' in v) || (key === 'tools' && Array.isArray(v))) {
    out.push({ chunk: JSON.stringify(v) });
    return;
  }
  if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i) out.push(',');
      serialize(x, out, null);
    });
    out.push(']');
    return;
  }
  out.push('{');
  let first = true;
  for (const [k, x] of Object.entries(v)) {
    out.push(`${first ? '' : ','}${JSON.stringify(k)}:`);
    first = false;
    serialize(x, out, k);
  }
  out.push('}');
}
