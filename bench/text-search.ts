import path from 'node:path';
import type { Runtime } from '../src/runtime.js';
import { clickHouseMigrations, ROOT_DIR } from '../src/stores/migrate.js';
import { median, percentile, time, type Row } from './measure.js';
import { SPAN_TEXT_EXPR } from '../src/traces/text-search.js';
import { catchUpTextIndex } from '../src/traces/text-index.js';

/**
 * Full-text search rows (issue 21): `GET /traces?text_query=` over 90 days, total included, for a
 * rare term (an order number of one span) and a common one (a word in about a third of the spans),
 * alone and with a filter; with `before`, first with the text index emptied (every span scanned, as
 * before clickhouse/0012_text_index.sql), then after the indexer (src/traces/text-index.ts) has
 * caught up, with its cost: engine CPU and wall time per span, bytes per span. And, with
 * `--only text`, the candidate structures side by side: the inverted index (kept) on the real
 * tables, and on copies of the same spans a plain scan, n-gram bloom filters, a side table with small
 * granules and a token bloom filter; their build (ingest) time and bytes per span.
 */

type Inject = (method: 'GET' | 'POST', url: string, token?: string) => Promise<{ meta: { total: number } }>;

const COMMON = 'refund';
const FILTER = JSON.stringify([{ field: 'model_name', op: 'in', value: ['gpt-4o'] }]);

/**
 * Rare terms that spans of the project hold, a new one for every run: an order number (bench/load-spans.ts
 * writes one per text) or, in the realistic corpus (bench/corpus.ts), a stack trace's `request_id`
 * (in a few spans of one or two traces each). ClickHouse 25.3+ caches which granules a condition
 * matched (the query condition cache), so repeating one term would measure the cache, not a user's
 * first search for it.
 */
async function rareTerms(ctx: Runtime, projectId: string, n: number): Promise<string[]> {
  const r = await ctx.ch.client.query({
    query: `SELECT term FROM (
              SELECT span_id, coalesce(nullIf(extract(input, 'order (\\\\d{8})'), ''), extract(input, 'request_id=([0-9a-f]{16,})')) AS term
              FROM spans WHERE project_id = {p:String} AND input IS NOT NULL)
            WHERE term != '' ORDER BY sipHash64(span_id) LIMIT 1 BY term LIMIT {n:UInt32}`,
    query_params: { p: projectId, n },
    format: 'JSONEachRow',
  });
  const terms = (await r.json<{ term: string }>()).map((row) => row.term).filter(Boolean);
  if (terms.length < n)
    throw new Error(
      `${terms.length} rare terms (order numbers, request ids) in the bench spans, ${n} wanted; load a larger data set or pass fewer --runs`,
    );
  return terms;
}

export type TextIndexBuild = {
  spans: number;
  ms: number;
  cpu_ms: number;
  passes: number;
  bytes: number;
  bytes_merged: number;
};

const INDEX_TABLES = "('text_postings', 'text_tokens', 'text_index_marks', 'text_index_collisions')";

async function indexBytes(ctx: Runtime): Promise<number> {
  const rows = await ctx.ch.rows<{ b: string }>({
    query: `SELECT sum(data_compressed_bytes) AS b FROM system.parts WHERE active AND database = currentDatabase() AND table IN ${INDEX_TABLES}`,
  });
  return Number(rows[0]?.b ?? 0);
}

/** Empties the text index: every span is the search's tail again, as before the index. */
async function dropIndex(ctx: Runtime) {
  for (const t of ['text_postings', 'text_tokens', 'text_index_marks', 'text_index_collisions'])
    await ctx.ch.client.command({ query: `TRUNCATE TABLE ${t}` });
}

/** The indexer's catch-up over everything stored, measured: wall time, the process's CPU (the engine runs in it), bytes. */
async function buildIndex(ctx: Runtime, rows: Row[]): Promise<TextIndexBuild> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const passes = await catchUpTextIndex(ctx, { lagMs: 0 });
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const spans = passes.reduce((n, p) => n + p.spans, 0);
  const steps = { postings: 0, tokens: 0, check: 0 };
  for (const p of passes) for (const k of Object.keys(steps) as (keyof typeof steps)[]) steps[k] += p.steps[k];
  const bytes = await indexBytes(ctx);
  await ctx.ch.client.command({ query: 'OPTIMIZE TABLE text_postings FINAL' });
  await ctx.ch.client.command({ query: 'OPTIMIZE TABLE text_tokens FINAL' });
  const merged = await indexBytes(ctx);
  const build = {
    spans,
    ms,
    cpu_ms: (used.user + used.system) / 1000,
    passes: passes.length,
    bytes,
    bytes_merged: merged,
  };
  rows.push({
    work: `text indexer catch-up, ${spans.toLocaleString()} spans in ${passes.length} passes`,
    api: spans
      ? `${Math.round(spans / (ms / 1000)).toLocaleString()} spans/s, ${((build.cpu_ms * 1000) / spans).toFixed(0)} µs CPU/span`
      : 'nothing to index (built by an earlier run)',
    reference: `${(merged / Math.max(1, spans)).toFixed(0)} B/indexed span merged (${(bytes / Math.max(1, spans)).toFixed(0)} before merges); wall: postings ${(steps.postings / 1000).toFixed(1)} s, tokens ${(steps.tokens / 1000).toFixed(1)} s, key check ${(steps.check / 1000).toFixed(1)} s`,
    ratio: '',
    target: '',
  });
  return build;
}

/**
 * What clickhouse/0030_text_index_codecs.sql changed, undone: the text index's codecs and block size
 * as 0012 made them. Parts take them as they are written or merged (OPTIMIZE … FINAL).
 */
export const BEFORE_0030 = [
  'ALTER TABLE text_postings MODIFY COLUMN trace_key CODEC(Delta, ZSTD(1))',
  'ALTER TABLE text_postings MODIFY COLUMN token CODEC(ZSTD(1))',
  'ALTER TABLE text_postings MODIFY COLUMN fields REMOVE CODEC',
  'ALTER TABLE text_postings RESET SETTING min_compress_block_size',
  'ALTER TABLE text_tokens MODIFY COLUMN token CODEC(ZSTD(1))',
  'ALTER TABLE text_tokens MODIFY COLUMN last_hour REMOVE CODEC',
];

/** clickhouse/0030's statements, to put them back after BEFORE_0030. */
export const AFTER_0030 = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')).find(
  (m) => m.version === 30,
)!.statements;

export async function benchTextSearch(
  ctx: Runtime,
  inject: Inject,
  key: string,
  projectId: string,
  days: number,
  runs: number,
  rows: Row[],
  options: { before?: boolean; codecsBefore?: boolean } = {},
) {
  const out: Record<string, unknown> = {};
  const beforeRuns = Math.min(runs, 3);
  const rare = await rareTerms(ctx, projectId, 2 * (runs + 1) + (options.before ? 2 * (beforeRuns + 1) : 0));
  const startAfter = new Date(Date.now() - days * 86_400_000).toISOString();
  let used = 0;
  const fresh = () => rare[used++ % rare.length]!;
  // Each case: a name and the parameters of a run (a fresh rare term per run).
  const cases: [string, () => Record<string, string>, string][] = [
    ['rare term (an order number or request id, new each run)', () => ({ text_query: fresh() }), 'p50 ≤ 100 ms'],
    ['rare term, model filter', () => ({ text_query: fresh(), filters: FILTER }), 'p50 ≤ 100 ms'],
    [`common term "${COMMON}"`, () => ({ text_query: COMMON }), 'p50 ≤ 300 ms'],
    [`common term "${COMMON}", model filter`, () => ({ text_query: COMMON, filters: FILTER }), 'p50 ≤ 300 ms'],
    [`common term "${COMMON}", scope output`, () => ({ text_query: COMMON, text_scope: 'output' }), 'p50 ≤ 300 ms'],
  ];
  const measure = async (label: string, n: number) => {
    const results: Record<string, unknown>[] = [];
    for (const [name, params, target] of cases) {
      const times: number[] = [];
      let total = 0;
      let failed = '';
      for (let i = 0; i < n + 1; i++) {
        const url = `/api/v1/public/traces?${new URLSearchParams({ start_after: startAfter, limit: '50', ...params() })}`;
        try {
          const ms = await time(async () => {
            total = (await inject('GET', url, key)).meta.total;
          });
          if (i >= 1) times.push(ms);
        } catch (error) {
          // The scan can run past the API's time limit on a loaded machine: say so, don't stop.
          failed = error instanceof Error ? error.message.slice(0, 120) : String(error);
          break;
        }
      }
      const p50 = times.length ? median(times) : NaN;
      rows.push({
        work: `text search ${days}d, ${label}: ${name} (${total.toLocaleString()} traces)`,
        api: times.length
          ? `p50 ${p50.toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`
          : `failed: ${failed}`,
        reference: '',
        ratio: '',
        target,
      });
      results.push({ case: name, total, p50_ms: p50, p95_ms: times.length ? percentile(times, 95) : NaN, failed });
    }
    return results;
  };
  if (options.before) {
    await dropIndex(ctx);
    out.before = await measure('no index (scan)', beforeRuns);
  }
  out.build = await buildIndex(ctx, rows);
  out.after = await measure('index', runs);
  if (options.codecsBefore) {
    // The same postings and dictionary rewritten with 0012's codecs, measured, then with 0030's again.
    const rewrite = async (statements: string[]) => {
      for (const query of statements) await ctx.ch.client.command({ query });
      const ms = await time(async () => {
        for (const t of ['text_postings', 'text_tokens'])
          await ctx.ch.client.command({ query: `OPTIMIZE TABLE ${t} FINAL` });
      });
      return { bytes: await indexBytes(ctx), rewrite_ms: ms };
    };
    // Every span stored is indexed (buildIndex caught up); with --keep the build itself indexed none.
    const [stored] = await ctx.ch.rows<{ n: string }>({ query: 'SELECT count() AS n FROM spans' });
    const spans = Math.max(1, Number(stored!.n));
    const before = await rewrite(BEFORE_0030);
    out.codecs_before = { ...before, rows: await measure('index, codecs before clickhouse/0030', runs) };
    const after = await rewrite(AFTER_0030);
    out.codecs_after = { ...after, rows: await measure('index, codecs of clickhouse/0030', runs) };
    rows.push({
      work: `text index bytes, codecs of clickhouse/0030 against 0012's (the same postings and dictionary rewritten)`,
      api: `${(after.bytes / spans).toFixed(0)} B/indexed span`,
      reference: `${(before.bytes / spans).toFixed(0)} B/indexed span before`,
      ratio: `${((after.bytes / before.bytes) * 100).toFixed(0)}%`,
      target: '',
    });
  }
  return out;
}

/** `granularity`: rows per granule of the copy (2048 as `spans`; smaller: a side table of the text). */
type Structure = { name: string; index?: string; granularity?: number; condition: (term: string) => string };

const STRUCTURES: Structure[] = [
  { name: 'plain scan (the tail; everything before the index)', condition: (t) => `${SPAN_TEXT_EXPR} LIKE '%${t}%'` },
  {
    name: 'ngrambf_v1(3, 256 KiB)',
    index: `${SPAN_TEXT_EXPR} TYPE ngrambf_v1(3, 262144, 2, 0)`,
    condition: (t) => `${SPAN_TEXT_EXPR} LIKE '%${t}%'`,
  },
  {
    name: 'ngrambf_v1(4, 1 MiB)',
    index: `${SPAN_TEXT_EXPR} TYPE ngrambf_v1(4, 1048576, 2, 0)`,
    condition: (t) => `${SPAN_TEXT_EXPR} LIKE '%${t}%'`,
  },
  {
    name: 'side table, 256-row granules, ngrambf_v1(4, 32 KiB)',
    index: `${SPAN_TEXT_EXPR} TYPE ngrambf_v1(4, 32768, 2, 0)`,
    granularity: 256,
    condition: (t) => `${SPAN_TEXT_EXPR} LIKE '%${t}%'`,
  },
  // Whole tokens only (hasToken): a substring such as `get_weather(` or a Chinese word inside a sentence is not a token.
  {
    name: 'tokenbf_v1(256 KiB), hasToken',
    index: `${SPAN_TEXT_EXPR} TYPE tokenbf_v1(262144, 2, 0)`,
    condition: (t) => `hasToken(${SPAN_TEXT_EXPR}, '${t}')`,
  },
];

/**
 * The candidates: the time of the text search's core (the traces whose spans hold the term, counted)
 * over the whole window; first the inverted index (kept) on the real tables (its build: the catch-up
 * measured by benchTextSearch), then, with `copies`, each other structure on a copy of the
 * project's spans, with its build time and bytes.
 */
export async function compareTextStructures(
  ctx: Runtime,
  projectId: string,
  runs: number,
  rows: Row[],
  options: { copies?: boolean; build?: TextIndexBuild } = {},
) {
  const c = ctx.ch.client;
  const structures = options.copies === false ? [] : STRUCTURES;
  const rare = await rareTerms(ctx, projectId, (structures.length + 1) * (runs + 1));
  const out: Record<string, unknown>[] = [];
  {
    // The index's core: the dictionary's tokens holding the term, their postings' traces.
    const core = (t: string) => `SELECT uniqExact(trace_start_hour, trace_key) AS n FROM text_postings
      WHERE project_id = {p:String}
        AND token IN (SELECT token FROM text_tokens WHERE project_id = {p:String} AND position(token, '${t}') > 0)
      SETTINGS use_query_condition_cache = 0`;
    const measured: Record<string, number> = {};
    let r = structures.length * (runs + 1);
    for (const label of ['rare', 'common'] as const) {
      const times: number[] = [];
      let traces = 0;
      for (let i = 0; i < runs + 1; i++) {
        const term = label === 'rare' ? rare[r++]! : COMMON;
        const ms = await time(async () => {
          const q = await c.query({ query: core(term), query_params: { p: projectId }, format: 'JSONEachRow' });
          traces = Number((await q.json<{ n: string }>())[0]!.n);
        });
        if (i >= 1) times.push(ms);
      }
      measured[label] = median(times);
      measured[`${label}_traces`] = traces;
    }
    const b = options.build;
    rows.push({
      work: 'text structure: inverted index, built off the insert path (kept)',
      api: `rare p50 ${measured.rare!.toFixed(0)} ms (${measured.rare_traces} traces), common p50 ${measured.common!.toFixed(0)} ms (${measured.common_traces})`,
      reference: b
        ? `build ${b.ms.toFixed(0)} ms (${b.spans.toLocaleString()} spans, all projects), index ${(b.bytes_merged / Math.max(1, b.spans)).toFixed(0)} B/span`
        : '',
      ratio: '',
      target: '',
    });
    out.push({ structure: 'inverted index (kept)', ...measured, build: b });
  }
  const spanCount = Number(
    (
      await (
        await c.query({
          query: 'SELECT count() AS n FROM spans WHERE project_id = {p:String}',
          query_params: { p: projectId },
          format: 'JSONEachRow',
        })
      ).json<{ n: string }>()
    )[0]!.n,
  );
  for (const [i, s] of structures.entries()) {
    const table = `bench_text_${i}`;
    await c.command({ query: `DROP TABLE IF EXISTS ${table}` });
    await c.command({
      query: `CREATE TABLE ${table} (project_id LowCardinality(String), trace_id String, span_id String, start_time DateTime64(3, 'UTC'),
        input Nullable(String) CODEC(ZSTD(3)), output Nullable(String) CODEC(ZSTD(3)), error_message String CODEC(ZSTD(3))
        ${s.index ? `, INDEX idx ${s.index} GRANULARITY 1` : ''})
        ENGINE = MergeTree ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id) SETTINGS index_granularity = ${s.granularity ?? 2048}`,
    });
    const buildMs = await time(() =>
      c.command({
        query: `INSERT INTO ${table} SELECT project_id, trace_id, span_id, start_time, input, output, error_message FROM spans WHERE project_id = {p:String}`,
        query_params: { p: projectId },
      }),
    );
    await c.command({ query: `OPTIMIZE TABLE ${table} FINAL` });
    const bytes = await (
      await c.query({
        query: `SELECT sum(data_compressed_bytes) AS b FROM system.data_skipping_indices WHERE table = '${table}'`,
        format: 'JSONEachRow',
      })
    ).json<{ b: string }>();
    const indexBytes = Number(bytes[0]?.b ?? 0);
    const measured: Record<string, number> = {};
    for (const label of ['rare', 'common'] as const) {
      const times: number[] = [];
      let traces = 0;
      for (let r = 0; r < runs + 1; r++) {
        const term = label === 'rare' ? rare[i * (runs + 1) + r]! : COMMON;
        const ms = await time(async () => {
          // No query condition cache (ClickHouse 25.3+): each run measures a first search.
          const q = await c.query({
            query: `SELECT uniqExact(trace_id) AS n FROM ${table} WHERE project_id = {p:String} AND ${s.condition(term)} SETTINGS use_query_condition_cache = 0`,
            query_params: { p: projectId },
            format: 'JSONEachRow',
          });
          traces = Number((await q.json<{ n: string }>())[0]!.n);
        });
        if (r >= 1) times.push(ms);
      }
      measured[label] = median(times);
      measured[`${label}_traces`] = traces;
    }
    rows.push({
      work: `text structure: ${s.name}, ${spanCount.toLocaleString()} spans`,
      api: `rare p50 ${measured.rare!.toFixed(0)} ms (${measured.rare_traces} traces), common p50 ${measured.common!.toFixed(0)} ms (${measured.common_traces})`,
      reference: `build ${buildMs.toFixed(0)} ms, index ${(indexBytes / spanCount).toFixed(0)} B/span`,
      ratio: '',
      target: '',
    });
    out.push({
      structure: s.name,
      spans: spanCount,
      build_ms: buildMs,
      index_bytes: indexBytes,
      index_bytes_per_span: indexBytes / spanCount,
      ...measured,
    });
    await c.command({ query: `DROP TABLE ${table}` });
  }
  return out;
}
