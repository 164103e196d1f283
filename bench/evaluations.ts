// Dataset and evaluation rows of the benchmark (issue 12): the summary of a 100,000-result run
// (p50; target < 50 ms), the whole read of a 10,000-case version of large JSON (time and peak memory,
// over real HTTP so the answer streams), and the paged read of the same version.
//
// Part of `npm run bench`; alone, on fresh embedded stores: `npx tsx bench/evaluations.ts [--runs 30]`
// (add `--expose-gc` to NODE_OPTIONS for steadier memory figures).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';
import { median, percentile, printTable, time, type Row } from './measure.js';
import { benchAccount, openBenchServer, saveResults } from './bench-server.js';

const CASES = 10_000;
const RESULTS = 100_000;
const RESULT_BATCH = 10_000;
const PUBLIC = '/api/v1/public';

async function inject(api: FastifyInstance, method: 'GET' | 'POST', url: string, key: string, payload?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (typeof payload === 'string') headers['content-type'] = 'application/json';
  const res = await api.inject({ method, url: `${PUBLIC}${url}`, payload: payload as never, headers });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res;
}

/** A test case of about 2.5 KB: a chat-style input, an expected answer, metadata. */
function largeCase(i: number) {
  const text = `Question ${i}: ${'explain the trade-offs of the approach in detail, with examples. '.repeat(20)}`;
  return {
    input: {
      messages: [
        { role: 'system', content: 'You are a careful assistant.' },
        { role: 'user', content: text },
      ],
      temperature: 0.2,
      seed: 9007199254740993 + i,
    },
    expected: { answer: `Answer ${i}: ${'a considered answer. '.repeat(30)}`, citations: [i, i + 1, i + 2] },
    metadata: { topic: `t${i % 17}`, difficulty: i % 5, tags: ['bench', `g${i % 3}`] },
  };
}

export async function benchEvaluations(ctx: Runtime, api: FastifyInstance, key: string, runs: number, rows: Row[]) {
  const out: Record<string, unknown> = {};
  const dataset = (await inject(api, 'POST', '/datasets', key, { name: `bench-${Date.now()}` })).json() as {
    id: string;
  };

  // A 10,000-case version through the API.
  const cases = Array.from({ length: CASES }, (_, i) => largeCase(i));
  const body = JSON.stringify({ test_cases: cases });
  let versionId = '';
  const createMs = await time(async () => {
    versionId = (await inject(api, 'POST', `/datasets/${dataset.id}/versions`, key, body)).json().dataset_version_id;
  });
  rows.push({
    work: `create a ${CASES.toLocaleString()}-case version (${(body.length / 1e6).toFixed(1)} MB of JSON)`,
    api: `${createMs.toFixed(0)} ms`,
    reference: '',
    ratio: '',
    target: '',
  });
  out.create_version_ms = createMs;

  out.whole_read = await benchWholeRead(api, key, versionId, rows);
  out.paged_read = await benchPagedRead(api, key, versionId, rows);
  out.summary = await benchSummary(ctx, api, key, dataset.id, runs, rows);
  return out;
}

/**
 * The whole version over real HTTP, the body discarded as it arrives: time (3 runs after a warm-up),
 * answer size, and the live memory held while it streams. Live, not peak-with-garbage: with
 * --expose-gc a separate pass collects after every 256 KB received and samples what is still held
 * (without it the figure includes uncollected garbage and is only an upper bound).
 */
async function benchWholeRead(api: FastifyInstance, key: string, versionId: string, rows: Row[]) {
  // The ingest rows of `npm run bench` may have the server listening already.
  if (!api.server.listening) await api.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}${PUBLIC}/dataset-versions/${versionId}`;
  const gc = (globalThis as { gc?: () => void }).gc;
  const held = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external + m.arrayBuffers;
  };
  const read = async (onChunk: (received: number) => void) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`whole read: ${res.status}`);
    let received = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      received += chunk.length;
      onChunk(received);
    }
    return received;
  };
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < 4; i++) {
    const ms = await time(async () => {
      bytes = await read(() => {});
    });
    if (i > 0) times.push(ms);
  }
  gc?.();
  const base = held();
  let peak = 0;
  let next = 0;
  await read((received) => {
    if (received < next) return;
    next = received + 256 * 1024;
    gc?.();
    peak = Math.max(peak, held() - base);
  });
  // The control, measured the same way: the same answer held whole in memory (what a read that
  // buffers its answer costs), so the streamed figure can be read against it.
  gc?.();
  const controlBase = held();
  const whole = await api.inject({
    method: 'GET',
    url: `${PUBLIC}/dataset-versions/${versionId}`,
    headers: { authorization: `Bearer ${key}` },
  });
  gc?.();
  const buffered = held() - controlBase;
  if (whole.body.length === 0) throw new Error('empty control read');
  const p50 = median(times);
  const mb = (n: number) => `${(Math.max(0, n) / 1e6).toFixed(2)} MB`;
  rows.push({
    work: `whole read, ${CASES.toLocaleString()}-case version (${(bytes / 1e6).toFixed(1)} MB answer, streamed)`,
    api: `p50 ${p50.toFixed(0)} ms, ${gc ? 'live' : 'peak (with garbage)'} memory +${mb(peak)} while streaming`,
    reference: `+${mb(buffered)} holding the answer whole`,
    ratio: '',
    target: 'bounded memory',
  });
  return {
    p50_ms: p50,
    answer_bytes: bytes,
    memory_growth_bytes: peak,
    buffered_control_bytes: buffered,
    memory_measure: gc ? 'live (gc every 256 KB)' : 'peak including garbage',
  };
}

/** The same version in pages of 1,000, following next_cursor. */
async function benchPagedRead(api: FastifyInstance, key: string, versionId: string, rows: Row[]) {
  const totals: number[] = [];
  const pages: number[] = [];
  for (let i = 0; i < 4; i++) {
    let cursor: string | null = null;
    let items = 0;
    const total = await time(async () => {
      do {
        const start = performance.now();
        const res = await inject(
          api,
          'GET',
          `/dataset-versions/${versionId}?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
          key,
        );
        const page = res.json() as { items: unknown[]; next_cursor: string | null };
        if (i > 0) pages.push(performance.now() - start);
        items += page.items.length;
        cursor = page.next_cursor;
      } while (cursor);
    });
    if (items !== CASES) throw new Error(`paged read gave ${items} cases`);
    if (i > 0) totals.push(total);
  }
  rows.push({
    work: `paged read, same version, limit 1000 (10 pages)`,
    api: `p50 ${median(totals).toFixed(0)} ms in all, ${median(pages).toFixed(1)} ms a page`,
    reference: '',
    ratio: '',
    target: '',
  });
  return { p50_total_ms: median(totals), p50_page_ms: median(pages), p95_page_ms: percentile(pages, 95) };
}

/**
 * A run of 100,000 results. A version takes at most 10,000 cases per create, so the 100,000-case
 * version is put in place with SQL; the results then go through the API in batches of 10,000 (which
 * keeps the run's aggregates), then 10% of them are re-sent (replacements). Then the summary's p50.
 */
async function benchSummary(
  ctx: Runtime,
  api: FastifyInstance,
  key: string,
  datasetId: string,
  runs: number,
  rows: Row[],
) {
  const projectId = (
    await ctx.pg.pool.query<{ project_id: string }>('SELECT project_id FROM datasets WHERE id = $1', [datasetId])
  ).rows[0]!.project_id;
  const versionId = crypto.randomUUID();
  await ctx.pg.pool.query('UPDATE datasets SET version_count = version_count + 1 WHERE id = $1', [datasetId]);
  await ctx.pg.pool.query(
    `INSERT INTO dataset_versions (id, dataset_id, project_id, version_number, label, test_case_count)
     SELECT $1, $2, $3, version_count, 'bench-100k', $4 FROM datasets WHERE id = $2`,
    [versionId, datasetId, projectId, RESULTS],
  );
  await ctx.pg.pool.query(
    `INSERT INTO dataset_test_cases (version_id, ordinal, id, input, expected)
     SELECT $1, g, gen_random_uuid(), jsonb_build_object('q', g), to_jsonb(g) FROM generate_series(1, $2::int) g`,
    [versionId, RESULTS],
  );
  const ids = (
    await ctx.pg.pool.query<{ id: string }>(
      'SELECT id FROM dataset_test_cases WHERE version_id = $1 ORDER BY ordinal',
      [versionId],
    )
  ).rows.map((r) => r.id);
  const run = (
    await inject(api, 'POST', '/evaluation-runs', key, {
      evaluation_name: 'bench',
      dataset_version_id: versionId,
      candidate_version: 'bench',
      environment: 'bench',
    })
  ).json() as { evaluation_run_id: string };
  const result = (id: string, i: number, round: number) => ({
    test_case_id: id,
    output: { text: `output ${i}` },
    ...(i % 97 === 0 ? { error: 'timeout' } : {}),
    scores: [
      { name: 'accuracy', value: ((i * 7 + round) % 100) / 100, passed: (i + round) % 4 !== 0 },
      { name: 'relevance', value: ((i * 13) % 10) / 10 },
      i % 50 === 0 ? { name: 'judge', error: 'judge unavailable' } : { name: 'judge', value: (i % 3) / 2 },
    ],
    metrics: [
      { name: 'latency_ms', value: 100 + (i % 900), unit: 'ms' },
      { name: 'tokens', value: 50 + (i % 200) },
    ],
  });
  const writes: number[] = [];
  for (let from = 0; from < RESULTS; from += RESULT_BATCH) {
    const batch = ids.slice(from, from + RESULT_BATCH).map((id, j) => result(id, from + j, 0));
    writes.push(
      await time(() =>
        inject(api, 'POST', `/evaluation-runs/${run.evaluation_run_id}/results`, key, { results: batch }),
      ),
    );
  }
  const replaced = ids.flatMap((id, i) => (i % 10 === 0 ? [result(id, i, 1)] : []));
  writes.push(
    await time(() =>
      inject(api, 'POST', `/evaluation-runs/${run.evaluation_run_id}/results`, key, { results: replaced }),
    ),
  );
  const perSecond = (RESULTS + replaced.length) / (writes.reduce((a, b) => a + b, 0) / 1000);
  rows.push({
    work: `result writes, ${RESULT_BATCH.toLocaleString()} per request (3 scores, 2 metrics each)`,
    api: `${Math.round(perSecond).toLocaleString()} results/s`,
    reference: '',
    ratio: '',
    target: '',
  });

  const times: number[] = [];
  let count = 0;
  for (let i = 0; i < runs + 2; i++) {
    const ms = await time(async () => {
      count = (await inject(api, 'GET', `/evaluation-runs/${run.evaluation_run_id}`, key)).json().result_count;
    });
    if (i >= 2) times.push(ms);
  }
  if (count !== RESULTS) throw new Error(`summary counted ${count} results`);
  const p50 = median(times);
  rows.push({
    work: `run summary, ${RESULTS.toLocaleString()} results (3 scores, 2 metrics)`,
    api: `p50 ${p50.toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
    reference: '',
    ratio: '',
    target: 'p50 < 50 ms',
  });
  return { results: RESULTS, writes_per_s: perSecond, p50_ms: p50, p95_ms: percentile(times, 95) };
}

/** Standalone: fresh embedded stores, one project, the rows above. */
async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: { runs: { type: 'string', default: '30' }, dir: { type: 'string', default: 'bench/data/evaluations' } },
  });
  const server = await openBenchServer(path.resolve(args.dir));
  try {
    const { key } = await (await benchAccount(server.api, server.web)).project('bench');
    const rows: Row[] = [];
    const results = await benchEvaluations(server.ctx, server.api, key, Number(args.runs), rows);
    printTable(rows);
    saveResults('evaluations', { ...results, rows });
  } finally {
    await server.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
