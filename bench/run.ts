// `npm run bench`: a benchmark, not a test. Loads a realistic data set into fresh embedded stores,
// then measures ingest through the API against the raw engine insert of the same rows, list-traces
// latency over 24h/7d/90d windows with and without filters against the best hand-written ClickHouse
// query for the same answer, and the trace detail read. Prints a table; writes JSON to bench/results/.
//
//   npm run bench -- --spans 1000000 --runs 15
//   npm run bench -- --keep          # reuse the data set of an earlier run with the same size
//   npm run bench -- --detection-samples 0   # leave out detection (first pass, latency)
//   npm run bench -- --only ingest --ingest-rounds 3   # the ingest rows alone, no bulk data set (add
//                                                      # --spans N to ingest beside N stored spans)
//   npm run bench -- --only lists --keep  # the list-traces rows alone
//   npm run bench -- --only lists --keep --no-list-references   # ... without the hand-written references
//   npm run bench -- --only text --spans 1000000 --dir /tmp/bench-text --keep
//                                         # the text-search rows (before: index emptied; the indexer's
//                                         # catch-up; after) and the candidate structures (issue 21);
//                                         # --text-copies false leaves out the structures built on copies,
//                                         # --no-text-before the rows with the index emptied
//   npm run bench -- --only dashboards --spans 3000000 --dir /tmp/bench-dash --keep
//                                         # the dashboard rows alone (default and metadata dashboards)
//   npm run bench -- --only cli           # start time of `sightline --help` (bench/cli-start.ts)
//   npm run bench -- --only ready --spans 1000000 --keep   # time to ready (and to stop) of a server
//                                         # process on the data set (bench/ready.ts)
//   npx tsx bench/prompts.ts --spans 1000000   # the prompt rows alone (fetch under load, version
//                                         # comparison over 90 days), on fresh stores of their own
//   npm run bench -- --only scores --scores-spans 1000000 --scores-write 1000000
//                                         # score writes (rate, bytes per score) and the 90-day score
//                                         # reads: list filter and summaries, SCORES widgets (bench/scores.ts),
//                                         # evaluator throughput, 1 and 2 projects (bench/evaluator-throughput.ts)
//   npm run bench -- --only protocols --protocol-rounds 3   # a 10,000-event Langfuse ingestion batch and
//                                         # a 1,000-run LangSmith multipart batch against native
//                                         # ingest of the same spans, until settled (bench/protocols.ts)
//   npm run bench -- --only masking       # ingest of the realistic corpus with every masking detector on
//                                         # against off, interleaved rounds (bench/masking.ts)
//   npm run bench -- --only export --export-spans 1000000 --export-formats parquet,jsonl
//                                         # an export of 1M spans to a local S3 by a worker process of its
//                                         # own: MB/s and peak RSS (bench/export.ts)
//   npm run bench -- --only storage --storage-spans 100000   # bytes on disk per realistic span, merged,
//                                         # against raw JSON and gzip (bench/storage.ts); --storage-schema
//                                         # before-0030 with the text index's codecs before clickhouse/0030
//   npm run bench -- --only text --spans 10000000 --projects 1 --no-text-before --text-copies false \
//                    --text-codecs-before   # issue 36's text rows at 10M spans in one project, and the
//                                         # index rewritten with 0012's codecs and 0030's in the same run
//   npm run bench -- --only scores --scores-spans 10000000 --scores-per-trace 40   # issue 36's 100M scores
//   npm run bench -- --only ingest --ingest-rounds 5 --ingest-before-0015 --ingest-writers ''
//                                         # ... and the API with the two views 0015 dropped put back
//                                         # (span rollups fed at insert, as before), interleaved
//   npm run bench -- --only ingest --corpus both   # with the rows of the API beside every worker npm start
//                                         # runs (--no-ingest-worker leaves them out): rate, and seconds
//                                         # until the text index holds the last span
//   npm run bench -- --only ingest --corpus realistic   # the spans sent through the API: agent traces
//                                         # carrying the conversation so far (bench/corpus.ts)
//   npm run bench -- --only lists --corpus realistic --spans 300000 --dir /tmp/bench-real --keep
//                                         # any row on a data set of the realistic corpus instead
//                                         # (inserted through the spans views, not generated in SQL)
//   npm run bench -- --only text --corpus both --spans 1000000 --realistic-spans 300000
//                                         # a section on both corpora: today's, then the realistic one
//                                         # (its rows tagged "[realistic corpus, N spans]")
//
// The full run (no --only) runs every row that ingests or reads spans (ingest, lists, text search,
// trace detail, dashboards, detection, alerts) on both corpora: today's data set of --spans spans,
// then a realistic one of --realistic-spans (default 1M, at most --spans) in stores of its own beside
// it (`<dir>-realistic`). `--corpus default` or `--corpus realistic` runs one.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { buildApiApp } from '../src/app.js';
import { buildWebApp } from '../src/web/app.js';
import { corpusSpans, realisticTraces, CORPUS_NAMES, type CorpusName } from './corpus.js';
import { validateSpans } from '../src/traces/span-input.js';
import { withPayload } from '../src/traces/span-payload.js';
import { loadSpans } from './load-spans.js';
import { LIST_CASES, referenceQueries } from './reference-queries.js';
import { median, percentile, postIngestBodies, time, type Row, printTable } from './measure.js';
import { guardSql, guardUncached } from '../src/sql/guard.js';
import { benchDashboards, benchMetadataDashboards } from './dashboards.js';
import { benchDetection } from './detection.js';
import { benchEvaluations } from './evaluations.js';
import { benchEvaluatorThroughput, benchEvaluatorThroughputAlone } from './evaluator-throughput.js';
import { benchAlerts } from './alerts.js';
import { benchReady } from './ready.js';
import { benchCliStart } from './cli-start.js';
import { benchTextSearch, compareTextStructures, type TextIndexBuild } from './text-search.js';
import { benchStorage } from './storage.js';
import { benchScoresAlone } from './scores.js';
import { benchWriters } from './ingest-writers.js';
import { benchPrompts } from './prompts.js';
import { benchProjects, benchProtocols, benchProtocolsAlone, type ProtocolBenchOptions } from './protocols.js';
import { benchMasking } from './masking.js';
import { benchExport, type ExportBenchOptions } from './export.js';
import { catchUpSeal } from '../src/rollups/seal.js';
import {
  catchUpTextIndex,
  textIndexLagSeconds,
  TEXT_INDEX_EVERY_MS,
  TEXT_INDEX_LAG_MS,
} from '../src/traces/text-index.js';
import { startWorkers } from '../workers/index.js';
import { clickHouseMigrations, ROOT_DIR } from '../src/stores/migrate.js';
import { runMonthMergePass } from '../src/traces/month-merge.js';

const { values: args } = parseArgs({
  allowNegative: true,
  options: {
    // Default 10M; 0 with `--only ingest`, which needs no history unless asked for.
    spans: { type: 'string' },
    // `ingest` or `dashboards`: run that section alone (quick to iterate on).
    only: { type: 'string' },
    projects: { type: 'string', default: '5' },
    days: { type: 'string', default: '90' },
    'ingest-spans': { type: 'string', default: '100000' },
    'ingest-batch': { type: 'string', default: '1000' },
    'ingest-concurrency': { type: 'string', default: '4' },
    // Starts of a server process for the time-to-ready rows (bench/ready.ts), each way.
    'ready-runs': { type: 'string', default: '3' },
    // Rounds of the three ingest measurements, interleaved; the rows report medians.
    'ingest-rounds': { type: 'string', default: '1' },
    // A fourth ingest measurement each round: the API with the views clickhouse/0015 dropped created
    // again (span_rollup_1m_mv, span_rollup_meta_1h_mv: the span rollups fed at insert), then dropped.
    'ingest-before-0015': { type: 'boolean', default: false },
    // A fourth (or fifth) ingest measurement each round: the API with every worker `npm start` runs
    // beside it in this process (the sealer, the text indexer, …), and the seconds until the index
    // holds the last span sent. `--no-ingest-worker` leaves it out.
    'ingest-worker': { type: 'boolean', default: true },
    // Span writers on one project for the parallel-ingest rows (bench/ingest-writers.ts); '' leaves them out.
    'ingest-writers': { type: 'string', default: '1,2,4' },
    // A Postgres server for the writers' locks (else DATABASE_URL, else the embedded one's in-process locks).
    'database-url': { type: 'string' },
    'growth-spans': { type: 'string', default: '1000000' },
    // Failing traces whose ingest → signal latency is measured; 0 leaves detection out of the run.
    'detection-samples': { type: 'string', default: '20' },
    runs: { type: 'string', default: '20' },
    // `--no-list-references`: the list rows without the hand-written queries beside them (at 10M
    // spans the 90-day one-pass references take seconds a run); no ratio then.
    'list-references': { type: 'boolean', default: true },
    dir: { type: 'string', default: 'bench/data/run' },
    keep: { type: 'boolean', default: false },
    // `--only text`: also build and measure the structures not kept on copies of the spans (minutes).
    'text-copies': { type: 'string', default: 'true' },
    // `--only text --no-text-before`: leave out the rows with the index emptied (a scan of every span's
    // text, minutes at 10M spans).
    'text-before': { type: 'boolean', default: true },
    // `--only text --text-codecs-before`: also the search rows with the index rewritten with the codecs
    // it had before clickhouse/0030, then with 0030's again (one run, the same data).
    'text-codecs-before': { type: 'boolean', default: false },
    // The spans sent through the API (bench/corpus.ts): `default` (demo traces, ~1 KB spans),
    // `realistic` (agent traces carrying the conversation so far, ~4.7 KB spans) or `both` (today's,
    // then the realistic one beside it). Default: `both` for the full run, `default` with --only.
    corpus: { type: 'string' },
    // The realistic data set's spans when both corpora run (default: 1M, at most --spans; loading it
    // goes through the spans views, far slower than the default corpus's in-engine load).
    'realistic-spans': { type: 'string' },
    // The spans naming the bench prompt's versions over 90 days, beside the data set (bench/prompts.ts).
    'prompt-spans': { type: 'string', default: '1000000' },
    // `--only storage`: spans of the realistic corpus sent, and the request size (bench/storage.ts).
    'storage-spans': { type: 'string', default: '100000' },
    'storage-batch': { type: 'string', default: '500' },
    // `before`: the spans table without clickhouse/0010's codecs, to compare both in one build;
    // `before-0013`: traces.root without clickhouse/0013's ZSTD; `before-0030`: the text index without
    // clickhouse/0030's codecs.
    'storage-schema': { type: 'string', default: 'after' },
    // Also each storage step (codecs, block size, sort key, messages stored once) on a copy of the rows.
    'storage-steps': { type: 'boolean', default: false },
    // `--only scores`: spans of the scored data set (4 scores a trace of 4 spans) and scores written.
    'scores-spans': { type: 'string', default: '1000000' },
    'scores-write': { type: 'string', default: '1000000' },
    // Scores a trace of the scored data set (bench/scores.ts; issue 36's 100M: --scores-spans 10000000
    // --scores-per-trace 40).
    'scores-per-trace': { type: 'string', default: '4' },
    // The producer protocol rows (bench/protocols.ts): interleaved rounds, Langfuse events, LangSmith runs.
    'protocol-rounds': { type: 'string', default: '3' },
    'langfuse-events': { type: 'string', default: '10000' },
    'langsmith-runs': { type: 'string', default: '1000' },
    // `--only masking`: realistic spans sent each way per round, and the rounds (bench/masking.ts).
    'masking-spans': { type: 'string', default: '20000' },
    'masking-rounds': { type: 'string', default: '3' },
    // `--only export`: spans loaded and exported, once per format (bench/export.ts).
    'export-spans': { type: 'string', default: '1000000' },
    'export-formats': { type: 'string', default: 'parquet,jsonl' },
  },
});
const ONLY = args.only;
if (
  ONLY !== undefined &&
  ![
    'ingest',
    'dashboards',
    'lists',
    'ready',
    'text',
    'cli',
    'storage',
    'scores',
    'protocols',
    'masking',
    'export',
  ].includes(ONLY)
)
  throw new Error(
    `--only takes 'ingest', 'dashboards', 'lists', 'ready', 'text', 'cli', 'storage', 'scores', 'protocols', 'masking' or 'export', not '${ONLY}'`,
  );
const SPANS = Number(args.spans ?? (ONLY === 'ingest' ? 0 : 10_000_000));
const PROJECTS = Number(args.projects);
const DAYS = Number(args.days);
const INGEST_SPANS = Number(args['ingest-spans']);
const INGEST_BATCH = Number(args['ingest-batch']);
const CONCURRENCY = Number(args['ingest-concurrency']);
const INGEST_ROUNDS = Number(args['ingest-rounds']);
const RUNS = Number(args.runs);
const DIR = path.resolve(args.dir);
const MARKER = path.join(DIR, 'bench-dataset.json');
/** The corpora this run measures, today's first: the main data set is the first's, the second gets stores of its own. */
const CORPORA: CorpusName[] = (() => {
  const given = args.corpus ?? (ONLY === undefined ? 'both' : 'default');
  if (given === 'both') return ['default', 'realistic'];
  if (!CORPUS_NAMES.includes(given as CorpusName))
    throw new Error(`--corpus takes ${CORPUS_NAMES.join(', ')} or both, not '${given}'`);
  return [given as CorpusName];
})();
const CORPUS = CORPORA[0]!;
/** The second corpus's data set (the realistic one, when both run). */
const SECOND_SPANS = Number(args['realistic-spans'] ?? Math.min(SPANS, 1_000_000));

type Dataset = {
  /** Absent in markers written before the realistic corpus: the default one. */
  corpus?: CorpusName;
  spans: number;
  projects: number;
  days: number;
  nowMs: number;
  keys: string[];
  projectIds: string[];
  email: string;
  password: string;
};

async function main(): Promise<void> {
  if (ONLY === 'cli') {
    const rows: Row[] = [];
    const cli = benchCliStart(RUNS, rows);
    return report({ started_at: new Date().toISOString(), runs: RUNS, cli }, rows, 'cli');
  }
  if (ONLY === 'storage') {
    // Fresh stores of its own (a data directory beside DIR), so the sizes are the corpus's alone.
    const rows: Row[] = [];
    const storage = await benchStorage(storageOptions(), rows);
    return report({ started_at: new Date().toISOString(), storage }, rows, `storage-${args['storage-spans']}`);
  }
  if (ONLY === 'scores') {
    const rows: Row[] = [];
    const scores = await benchScoresAlone(`${DIR}-scores`, scoresOptions(), rows);
    // The evaluator's rows belong with the scores' (issue 31): one project (4 slots) and two.
    const evaluator_throughput = [
      await benchEvaluatorThroughputAlone(`${DIR}-evaluators`, { traces: 300, projects: 1, delayMs: 200 }, rows),
      await benchEvaluatorThroughputAlone(`${DIR}-evaluators`, { traces: 600, projects: 2, delayMs: 200 }, rows),
    ];
    return report(
      { started_at: new Date().toISOString(), scores, evaluator_throughput },
      rows,
      `scores-${args['scores-spans']}`,
    );
  }
  if (ONLY === 'protocols') {
    // Fresh stores of their own: the rows compare protocol and native ingest on the same engines.
    const rows: Row[] = [];
    const protocols = await benchProtocolsAlone(`${DIR}-protocols`, protocolOptions(), rows);
    return report({ started_at: new Date().toISOString(), protocols }, rows, 'protocols');
  }
  if (ONLY === 'masking') {
    const rows: Row[] = [];
    const masking = await benchMasking(maskingOptions(), rows);
    return report({ started_at: new Date().toISOString(), masking }, rows, 'masking');
  }
  if (ONLY === 'export') {
    const rows: Row[] = [];
    const exported = await benchExport(exportOptions(), rows);
    return report({ started_at: new Date().toISOString(), export: exported }, rows, `export-${args['export-spans']}`);
  }
  const reuse = args.keep && fs.existsSync(MARKER) && sameSize(JSON.parse(fs.readFileSync(MARKER, 'utf8')) as Dataset);
  if (!reuse) fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  // Alert webhooks go to a receiver on 127.0.0.1 (bench/alerts.ts).
  const config = loadConfig({
    DATA_DIR: DIR,
    LOG_LEVEL: 'silent',
    SEED_DEMO: 'false',
    WEB_URL: 'http://localhost:3000',
    ALERT_WEBHOOK_ALLOW_PRIVATE: 'true',
    // The evaluator throughput row's judge is a fake provider on 127.0.0.1 (bench/evaluator-throughput.ts).
    LLM_CONNECTION_ALLOW_PRIVATE: 'true',
  });
  const ctx = await openRuntime(config);
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  const dataset = reuse ? (JSON.parse(fs.readFileSync(MARKER, 'utf8')) as Dataset) : await createDataset(ctx, api, web);
  const rows: Row[] = [];
  const results: Record<string, unknown> = {
    started_at: new Date().toISOString(),
    spans: SPANS,
    projects: PROJECTS,
    days: DAYS,
    runs: RUNS,
    corpus: CORPUS,
    corpora: CORPORA,
  };

  if (ONLY === 'dashboards') {
    results.dashboards = await benchDashboards(ctx, api, dataset.keys[0]!, dataset.projectIds[0]!, RUNS, rows);
    results.metadata_dashboards = await benchMetadataDashboards(ctx, api, await benchSession(web, dataset), RUNS, rows);
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
    results.second_corpus = await secondCorpus(['dashboards'], rows);
    return report(results, rows, `dashboards-${SPANS}`);
  }
  if (ONLY === 'ready') {
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
    results.ready = await benchReady(DIR, dataset.spans, Number(args['ready-runs']), rows);
    return report(results, rows, `ready-${SPANS}`);
  }
  if (ONLY === 'lists') {
    results.list = await benchList(ctx, api, dataset, rows);
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
    results.second_corpus = await secondCorpus(['lists'], rows);
    return report(results, rows, `lists-${SPANS}`);
  }
  const textSearch = (before: boolean) =>
    benchTextSearch(
      ctx,
      (m, u, k) => inject(api, m, u, k),
      dataset.keys[0]!,
      dataset.projectIds[0]!,
      DAYS,
      RUNS,
      rows,
      { before, codecsBefore: args['text-codecs-before'] },
    );
  if (ONLY === 'text') {
    // Before (the index emptied: a scan, as before clickhouse/0012), the indexer's catch-up, after.
    const text = await textSearch(args['text-before']);
    results.text_search = text;
    results.text_structures = await compareTextStructures(ctx, dataset.projectIds[0]!, Math.min(RUNS, 5), rows, {
      copies: args['text-copies'] !== 'false',
      build: text.build as TextIndexBuild,
    });
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
    results.second_corpus = await secondCorpus(['text'], rows);
    return report(results, rows, `text-${SPANS}`);
  }
  results.ingest = await benchIngest(ctx, api, web, dataset, rows);
  if (ONLY === 'ingest') {
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
    results.second_corpus = await secondCorpus(['ingest'], rows);
    return report(results, rows, 'ingest');
  }
  results.list = await benchList(ctx, api, dataset, rows);
  // The indexer catches up on the bulk-loaded history first, as a running worker would have.
  results.text_search = await textSearch(false);
  results.detail = await benchDetail(ctx, api, dataset, rows);
  results.sql_guard = benchGuard(rows);
  results.dashboards = await benchDashboards(ctx, api, dataset.keys[0]!, dataset.projectIds[0]!, RUNS, rows);
  results.metadata_dashboards = await benchMetadataDashboards(ctx, api, await benchSession(web, dataset), RUNS, rows);
  if (Number(args['detection-samples']) > 0) {
    const login = await inject(web, 'POST', '/api/auth/login', undefined, {
      email: dataset.email,
      password: dataset.password,
    });
    const session = { token: login.session_token, projectId: dataset.projectIds[0]!, key: dataset.keys[0]! };
    results.detection = await benchDetection(ctx, api, session, Number(args['detection-samples']), rows);
  }
  results.evaluations = await benchEvaluations(ctx, api, dataset.keys[0]!, RUNS, rows);
  results.evaluator_throughput = await benchEvaluatorThroughput(
    ctx,
    api,
    web,
    { traces: 600, projects: 2, delayMs: 200 },
    rows,
  );
  results.alerts = await benchAlerts(ctx, api, web, dataset, rows);
  results.prompts = await benchPrompts(
    ctx,
    api,
    await benchSession(web, dataset),
    { spans: Number(args['prompt-spans']), rate: 200, duration: 10, runs: RUNS },
    rows,
  );
  // Beside the data set: the protocols' spans and the native reference land in projects of their own.
  results.protocols = await benchProtocols(ctx, api, await benchProjects(api, web), protocolOptions(), rows);
  // One embedded data directory per process: close this one before the growth data set opens its own.
  await Promise.all([api.close(), web.close()]);
  await ctx.close();
  results.second_corpus = await secondCorpus(
    ['ingest', 'lists', 'text', 'detail', 'dashboards', 'detection', 'alerts'],
    rows,
  );
  results.ready = await benchReady(DIR, dataset.spans, Number(args['ready-runs']), rows);
  results.dashboard_growth = await benchGrowth(rows, results.dashboards as { '90d': { p50_ms: number } });
  results.storage = await benchStorage(storageOptions(), rows);
  results.scores = await benchScoresAlone(`${DIR}-scores`, scoresOptions(), rows);
  results.masking = await benchMasking(maskingOptions(), rows);
  results.export = await benchExport(exportOptions(), rows);
  report(results, rows, String(SPANS));
}

/** The masking rows' options (bench/masking.ts): fresh stores of their own beside DIR. */
function maskingOptions() {
  return {
    dir: `${DIR}-masking`,
    spans: Number(args['masking-spans']),
    rounds: Number(args['masking-rounds']),
    batch: 500,
    concurrency: CONCURRENCY,
  };
}

/** The export rows' options (bench/export.ts): fresh stores and a local S3 of their own beside DIR. */
function exportOptions(): ExportBenchOptions {
  return {
    dir: `${DIR}-export`,
    spans: Number(args['export-spans']),
    formats: args['export-formats'].split(',') as ExportBenchOptions['formats'],
  };
}

/** The score rows' options (bench/scores.ts): fresh stores of their own beside DIR. */
/** The producer protocol rows' options (bench/protocols.ts). */
function protocolOptions(): ProtocolBenchOptions {
  return {
    rounds: Number(args['protocol-rounds']),
    langfuseEvents: Number(args['langfuse-events']),
    langsmithRuns: Number(args['langsmith-runs']),
  };
}

function scoresOptions() {
  return {
    spans: Number(args['scores-spans']),
    write: Number(args['scores-write']),
    runs: RUNS,
    perTrace: Number(args['scores-per-trace']),
  };
}

/** The storage rows' options (bench/storage.ts): fresh stores of their own beside DIR. */
function storageOptions() {
  return {
    dir: `${DIR}-storage`,
    spans: Number(args['storage-spans']),
    batch: Number(args['storage-batch']),
    concurrency: CONCURRENCY,
    seed: 7,
    schema:
      (['before', 'before-0013', 'before-0030'] as const).find((s) => s === args['storage-schema']) ??
      ('after' as const),
    steps: args['storage-steps'],
  };
}

function report(results: Record<string, unknown>, rows: Row[], suffix: string): void {
  printTable(rows);
  const out = path.resolve('bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-${suffix}.json`);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ ...results, rows }, null, 2));
  console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
}

function sameSize(d: Dataset, spans = SPANS, corpus = CORPUS): boolean {
  return d.spans === spans && d.projects === PROJECTS && d.days === DAYS && (d.corpus ?? 'default') === corpus;
}

/** The sections a second corpus's pass runs: the rows that ingest or read spans (issue 22, item 1). */
type Section = 'ingest' | 'lists' | 'text' | 'detail' | 'dashboards' | 'detection' | 'alerts';

/**
 * The second corpus (the realistic one, when both run): a data set of `SECOND_SPANS` spans of it in
 * stores of its own beside DIR (reused with --keep), the given sections measured on it, and their
 * rows tagged with the corpus, beside today's rows. Null when one corpus runs.
 */
async function secondCorpus(sections: Section[], rows: Row[]) {
  const corpus = CORPORA[1];
  if (corpus === undefined) return null;
  const spans = SECOND_SPANS;
  const dir = `${DIR}-${corpus}`;
  const marker = path.join(dir, 'bench-dataset.json');
  const reuse =
    args.keep &&
    fs.existsSync(marker) &&
    sameSize(JSON.parse(fs.readFileSync(marker, 'utf8')) as Dataset, spans, corpus);
  if (!reuse) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const ctx = await openRuntime(
    loadConfig({
      DATA_DIR: dir,
      LOG_LEVEL: 'silent',
      SEED_DEMO: 'false',
      WEB_URL: 'http://localhost:3000',
      ALERT_WEBHOOK_ALLOW_PRIVATE: 'true',
    }),
  );
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  const d = reuse
    ? (JSON.parse(fs.readFileSync(marker, 'utf8')) as Dataset)
    : await createDataset(ctx, api, web, spans, marker, corpus);
  const from = rows.length;
  const out: Record<string, unknown> = { corpus, spans };
  for (const section of sections) {
    if (section === 'ingest') out.ingest = await benchIngest(ctx, api, web, d, rows);
    if (section === 'lists') out.list = await benchList(ctx, api, d, rows);
    if (section === 'text' && spans > 0)
      out.text_search = await benchTextSearch(
        ctx,
        (m, u, k) => inject(api, m, u, k),
        d.keys[0]!,
        d.projectIds[0]!,
        DAYS,
        RUNS,
        rows,
      );
    if (section === 'detail' && spans > 0) out.detail = await benchDetail(ctx, api, d, rows);
    if (section === 'dashboards') {
      out.dashboards = await benchDashboards(ctx, api, d.keys[0]!, d.projectIds[0]!, RUNS, rows);
      out.metadata_dashboards = await benchMetadataDashboards(ctx, api, await benchSession(web, d), RUNS, rows);
    }
    if (section === 'detection' && Number(args['detection-samples']) > 0) {
      out.detection = await benchDetection(
        ctx,
        api,
        await benchSession(web, d),
        Number(args['detection-samples']),
        rows,
      );
    }
    if (section === 'alerts') out.alerts = await benchAlerts(ctx, api, web, d, rows);
  }
  await Promise.all([api.close(), web.close()]);
  await ctx.close();
  for (const row of rows.slice(from))
    row.work = `${row.work} [${corpus} corpus, ${spans.toLocaleString()} spans stored]`;
  return out;
}

/**
 * Dashboard cost growth (docs/design.md, "Performance targets": ≤ 2× from 1M to 10M spans over the same projects and days): the
 * 90d default dashboard on a second, smaller data set in its own stores, against the main one.
 */
async function benchGrowth(rows: Row[], main: { '90d': { p50_ms: number } }) {
  const spans = Number(args['growth-spans']);
  if (!spans || spans >= SPANS) return null;
  const dir = `${DIR}-growth-${spans}`;
  const marker = path.join(dir, 'bench-dataset.json');
  const reuse =
    args.keep && fs.existsSync(marker) && sameSize(JSON.parse(fs.readFileSync(marker, 'utf8')) as Dataset, spans);
  if (!reuse) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const ctx = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  const d = reuse
    ? (JSON.parse(fs.readFileSync(marker, 'utf8')) as Dataset)
    : await createDataset(ctx, api, web, spans, marker);
  const small = (await benchDashboards(
    ctx,
    api,
    d.keys[0]!,
    d.projectIds[0]!,
    RUNS,
    rows,
    ` at ${spans.toLocaleString()} spans`,
  )) as { '90d': { p50_ms: number } };
  await Promise.all([api.close(), web.close()]);
  await ctx.close();
  const growth = main['90d'].p50_ms / small['90d'].p50_ms;
  rows.push({
    work: `dashboard cost growth, 90d, ${spans.toLocaleString()} → ${SPANS.toLocaleString()} spans`,
    api: `${growth.toFixed(2)}×`,
    reference: `${(SPANS / spans).toFixed(0)}× the spans`,
    ratio: '',
    target: '≤ 2×',
  });
  return { small_spans: spans, growth };
}

/** A session of the bench user on the first project (dashboard and widget writes need a user). */
async function benchSession(web: ReturnType<typeof buildWebApp>, d: Dataset) {
  const login = await inject(web, 'POST', '/api/auth/login', undefined, { email: d.email, password: d.password });
  return { token: login.session_token as string, projectId: d.projectIds[0]!, key: d.keys[0]! };
}

async function inject(
  app: ReturnType<typeof buildApiApp>,
  method: 'GET' | 'POST',
  url: string,
  token?: string,
  payload?: unknown,
) {
  const res = await app.inject({
    method,
    url,
    payload: payload as never,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

/** A user, `PROJECTS` projects with a key each, and the bulk span history spread over them. */
async function createDataset(
  ctx: Runtime,
  api: ReturnType<typeof buildApiApp>,
  web: ReturnType<typeof buildWebApp>,
  spanCount = SPANS,
  marker = MARKER,
  corpus = CORPUS,
): Promise<Dataset> {
  const email = `bench-${Date.now()}@sightline.local`;
  const password = 'bench password 1';
  const signup = await inject(web, 'POST', '/api/auth/signup', undefined, { email, password, name: 'Bench' });
  const projectIds: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < PROJECTS; i++) {
    const p = await inject(api, 'POST', '/api/v1/public/projects', signup.session_token, {
      name: `bench-${i}`,
      workspace_id: signup.workspace.id,
      trace_ttl_days: 3650,
    });
    projectIds.push(p.id);
    keys.push(
      (await inject(api, 'POST', `/api/v1/public/projects/${p.id}/api-keys`, signup.session_token, { name: 'bench' }))
        .key,
    );
  }
  const nowMs = Date.now();
  const t0 = performance.now();
  const progress = (done: number) => {
    const s = (performance.now() - t0) / 1000;
    process.stdout.write(
      `\rloading spans: ${done.toLocaleString()} in ${s.toFixed(0)} s (${Math.round(done / s).toLocaleString()} rows/s)   `,
    );
  };
  if (spanCount === 0) progress(0);
  else if (corpus === 'realistic')
    await loadRealistic(ctx, { spans: spanCount, projects: projectIds, nowMs }, progress);
  else await loadSpans(ctx.ch.client, { spans: spanCount, projects: projectIds, days: DAYS, nowMs }, progress);
  process.stdout.write('\n');
  const dataset: Dataset = {
    corpus,
    spans: spanCount,
    projects: PROJECTS,
    days: DAYS,
    nowMs,
    keys,
    projectIds,
    email,
    password,
  };
  fs.writeFileSync(marker, JSON.stringify(dataset));
  return dataset;
}

/**
 * `--corpus realistic`: the data set is bench/corpus.ts's agent traces (spans carrying the
 * conversation so far, ~4.7 KB each) spread over the window, each trace to one project in turn,
 * validated and normalised as the API would, and inserted into `spans` (so through its views) in
 * batches as they are generated; far slower than the in-engine load of the default corpus, so it
 * suits 100k-1M spans.
 */
async function loadRealistic(
  ctx: Runtime,
  options: { spans: number; projects: string[]; nowMs: number },
  onProgress: (done: number) => void,
): Promise<void> {
  let batch: object[] = [];
  let done = 0;
  let trace = 0;
  const flush = async () => {
    if (!batch.length) return;
    await ctx.ch.client.insert({ table: 'spans', values: batch, format: 'JSONEachRow' });
    done += batch.length;
    batch = [];
    onProgress(done);
  };
  const window = { spans: options.spans, startMs: options.nowMs - DAYS * 86_400_000, endMs: options.nowMs, seed: 7 };
  for (const spans of realisticTraces(window)) {
    const projectId = options.projects[trace++ % options.projects.length]!;
    const accepted = validateSpans(spans).accepted;
    const startHour = Math.floor(Math.min(...accepted.map((s) => s.start_time)) / 3_600_000) * 3600;
    for (const s of accepted)
      batch.push(withPayload({ ...s, project_id: projectId, trace_start_hour: startHour, ttl_days: 3650 }));
    if (batch.length >= 10_000) await flush();
  }
  await flush();
}

/** The two views clickhouse/0015 dropped, as 0002 and 0006 created them (`--ingest-before-0015`). */
const BEFORE_0015_VIEWS = clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse'))
  .flatMap((m) => m.statements)
  .filter((s) => /^CREATE MATERIALIZED VIEW IF NOT EXISTS (span_rollup_1m_mv|span_rollup_meta_1h_mv) /.test(s));
if (BEFORE_0015_VIEWS.length !== 2) throw new Error('the views of 0002 and 0006 were not found');

/** A plain MergeTree table with the columns of `spans` and no views: the engine's ingest ceiling. */
const PLAIN_TABLE = 'bench_spans_plain';

/**
 * Ingest of the same rows in the same batches (`INGEST_BATCH` spans each), three ways:
 * - api: real HTTP POST /traces into a fresh project, `CONCURRENCY` requests in flight;
 * - spans: `client.insert` of the rows the writer would store into the project's own `spans` table
 *   (its materialized views fire), one batch after another (one engine session runs one at a time);
 * - ceiling: the same inserts into a plain MergeTree table with the spans columns and no views
 *   (docs/design.md, "Performance targets": the API reaches ≥ 50% of this rate, measured in the same run).
 * `INGEST_ROUNDS` rounds interleave the three so a noisy machine's drift hits all alike; the rows
 * report each rate's median over the rounds and the ratio of the medians.
 */
async function benchIngest(
  ctx: Runtime,
  api: ReturnType<typeof buildApiApp>,
  web: ReturnType<typeof buildWebApp>,
  d: Dataset,
  rows: Row[],
) {
  const login = await inject(web, 'POST', '/api/auth/login', undefined, { email: d.email, password: d.password });
  const me = await inject(api, 'GET', '/api/v1/public/workspaces', login.session_token);
  const workspaceId = me.data[0].id;
  const newProject = async (name: string) =>
    inject(api, 'POST', '/api/v1/public/projects', login.session_token, {
      name: `${name}-${Date.now()}`,
      workspace_id: workspaceId,
    });

  const stamp = Date.now();
  const corpus = d.corpus ?? 'default';
  const spans = corpusSpans(corpus, { spans: INGEST_SPANS, startMs: stamp - 86_400_000, endMs: stamp, seed: 7 });
  const batches: unknown[][] = [];
  for (let i = 0; i < spans.length; i += INGEST_BATCH) batches.push(spans.slice(i, i + INGEST_BATCH));
  const bodies = batches.map((b) => JSON.stringify({ spans: b }));
  // The same rows as the writer would insert them (validated and normalised outside the timing).
  const rowsOf = (projectId: string) =>
    batches.map((b) =>
      validateSpans(b).accepted.map((s) =>
        withPayload({
          ...s,
          project_id: projectId,
          trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
          ttl_days: 30,
        }),
      ),
    );

  await ctx.ch.client.command({ query: `DROP TABLE IF EXISTS ${PLAIN_TABLE} SYNC` });
  await ctx.ch.client.command({
    query: `CREATE TABLE ${PLAIN_TABLE} AS spans ENGINE = MergeTree PARTITION BY toYYYYMM(start_time) ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)`,
  });
  const insertAll = (table: string, batchRows: object[][]) =>
    timed(async () => {
      for (const values of batchRows) await ctx.ch.client.insert({ table, values, format: 'JSONEachRow' });
    });
  // Wall time, and the process's CPU time (the embedded engine's threads included), which other
  // processes on a shared machine disturb far less than the wall clock.
  const timed = async (fn: () => Promise<unknown>) => {
    const cpu = process.cpuUsage();
    const ms = await time(fn);
    const used = process.cpuUsage(cpu);
    return { ms, cpuUs: used.user + used.system };
  };

  await api.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/public/traces`;
  const rate = (ms: number) => (spans.length / ms) * 1000;
  // Per measurement kind, one sample a round: spans/s, and process CPU µs per span.
  const samples = () => ({
    api: [] as number[],
    spans: [] as number[],
    plain: [] as number[],
    before: [] as number[],
    worker: [] as number[],
  });
  const rates = samples();
  const cpu = samples();
  // With the workers: seconds from the last answer until the text index holds it, the index's lag
  // (textIndexLagSeconds, as /metrics reports it) sampled every second, and the process CPU per span
  // until then (the API's and every worker's: the sealer, the indexer, detection, …).
  const indexed = { seconds: [] as number[], lag: [] as number[], cpu: [] as number[] };
  const apiKey = async (name: string) => {
    const project = await newProject(name);
    return (
      await inject(api, 'POST', `/api/v1/public/projects/${project.id}/api-keys`, login.session_token, {
        name: 'bench',
      })
    ).key as string;
  };
  const record = (kind: keyof typeof rates, t: { ms: number; cpuUs: number }) => {
    rates[kind].push(rate(t.ms));
    cpu[kind].push(t.cpuUs / spans.length);
  };
  async function ingestBesideWorkers(key: string) {
    // What the other measurements stored is sealed and indexed first: the workers then have this
    // measurement's spans to do, as in a steady state.
    await catchUpSeal(ctx, { lagMs: 0 });
    await catchUpTextIndex(ctx, { lagMs: 0 });
    const workers = startWorkers(ctx);
    const lags: number[] = [];
    const sampler = setInterval(() => {
      void textIndexLagSeconds(ctx.ch).then((lag) => lag !== null && lags.push(lag));
    }, 1000);
    try {
      const cpuAtStart = process.cpuUsage();
      const started = performance.now();
      record('worker', await timed(() => postIngestBodies(url, key, bodies, CONCURRENCY)));
      const lastAnswer = Date.now();
      // Until the indexer's watermark passes the last answer (its lag, TEXT_INDEX_LAG_MS, is the floor).
      for (;;) {
        const [row] = await ctx.ch.rows<{ w: string }>({
          query: `SELECT toUnixTimestamp64Milli(max(watermark)) AS w FROM text_index_marks WHERE project_id = ''`,
        });
        if (Number(row?.w ?? 0) >= lastAnswer) break;
        if (performance.now() - started > 300_000)
          throw new Error('the text index did not reach the ingested spans in 300 s');
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const used = process.cpuUsage(cpuAtStart);
      indexed.seconds.push((Date.now() - lastAnswer) / 1000);
      indexed.cpu.push((used.user + used.system) / spans.length);
      indexed.lag.push(...lags);
    } finally {
      clearInterval(sampler);
      await Promise.all(workers.map((w) => w.close()));
    }
  }
  function workerIngestRows(): Row[] {
    const [rate, plain, cpuApi, cpuPlain] = [
      median(rates.worker),
      median(rates.plain),
      median(cpu.worker),
      median(cpu.plain),
    ];
    const label = `ingest ${spans.length.toLocaleString()} ${corpus} spans, ${INGEST_BATCH}/request, ${CONCURRENCY} in flight, every worker running in the process (npm start)${INGEST_ROUNDS > 1 ? `, median of ${INGEST_ROUNDS}` : ''}`;
    return [
      {
        work: label,
        api: `${Math.round(rate).toLocaleString()} spans/s, ${cpuApi.toFixed(0)} µs CPU/span`,
        reference: `${Math.round(plain).toLocaleString()} spans/s, ${cpuPlain.toFixed(0)} µs CPU/span (plain MergeTree, no views)`,
        ratio: `${((rate / plain) * 100).toFixed(0)}% of ceiling (${((cpuPlain / cpuApi) * 100).toFixed(0)}% by CPU)`,
        target: '≥ 50% of ceiling',
      },
      {
        work: `${label}: the last span's wait to be indexed, and the index's lag (sightline_text_index_lag_seconds) sampled every second`,
        api: `${median(indexed.seconds).toFixed(1)} s to indexed`,
        reference: `lag p50 ${median(indexed.lag).toFixed(1)} s, max ${Math.max(...indexed.lag).toFixed(1)} s; CPU until indexed ${median(indexed.cpu).toFixed(0)} µs/span`,
        ratio: '',
        target: `≤ ${(TEXT_INDEX_LAG_MS + TEXT_INDEX_EVERY_MS) / 1000} s + a pass (the indexer's lag, its interval, its work)`,
      },
    ];
  }
  for (let round = 0; round < INGEST_ROUNDS; round++) {
    if (args['ingest-before-0015']) {
      // Its projects' spans are rolled up by the views and sealed again by the sealer's pass below:
      // their rollups count them twice (bench projects nothing reads).
      const key = await apiKey('ingest-before-0015');
      for (const query of BEFORE_0015_VIEWS) await ctx.ch.client.command({ query });
      try {
        record('before', await timed(() => postIngestBodies(url, key, bodies, CONCURRENCY)));
      } finally {
        for (const view of ['span_rollup_1m_mv', 'span_rollup_meta_1h_mv'])
          await ctx.ch.client.command({ query: `DROP VIEW IF EXISTS ${view} SYNC` });
      }
    }
    const key = await apiKey('ingest-api');
    const apiTime = await timed(() => postIngestBodies(url, key, bodies, CONCURRENCY));
    record('api', apiTime);
    if (args['ingest-worker']) await ingestBesideWorkers(await apiKey('ingest-worker'));
    record('spans', await insertAll('spans', rowsOf((await newProject('ingest-raw')).id)));
    record('plain', await insertAll(PLAIN_TABLE, rowsOf(`plain-${round}`)));
    if (INGEST_ROUNDS > 1) {
      const [a, s, p] = [rates.api.at(-1)!, rates.spans.at(-1)!, rates.plain.at(-1)!];
      const [ac, sc, pc] = [cpu.api.at(-1)!, cpu.spans.at(-1)!, cpu.plain.at(-1)!];
      console.log(
        `ingest round ${round + 1}: api ${Math.round(a)}, spans ${Math.round(s)}, plain ${Math.round(p)} spans/s (api ${((a / p) * 100).toFixed(0)}% of plain); ` +
          `CPU µs/span api ${ac.toFixed(0)}, spans ${sc.toFixed(0)}, plain ${pc.toFixed(0)} (plain/api ${((pc / ac) * 100).toFixed(0)}%)` +
          (cpu.before.length
            ? `; before 0015: ${Math.round(rates.before.at(-1)!)} spans/s, ${cpu.before.at(-1)!.toFixed(0)} µs/span (${((pc / cpu.before.at(-1)!) * 100).toFixed(0)}%)`
            : ''),
      );
    }
  }
  await ctx.ch.client.command({ query: `DROP TABLE IF EXISTS ${PLAIN_TABLE} SYNC` });
  const workerRows = indexed.seconds.length ? workerIngestRows() : undefined;
  // The sealer's share, off the insert path (src/rollups/seal.ts): the rollup rows of every span the
  // rounds stored into `spans`, in the passes a running sealer would make.
  let passes: Awaited<ReturnType<typeof catchUpSeal>> = [];
  const sealTime = await timed(async () => {
    passes = await catchUpSeal(ctx, { lagMs: 0 });
  });
  const sealedSpans = passes.reduce((n, p) => n + p.spans, 0);
  const sealCpu = sealedSpans ? sealTime.cpuUs / sealedSpans : 0;

  const [apiRate, spansRate, plainRate] = [median(rates.api), median(rates.spans), median(rates.plain)];
  const work = `ingest ${spans.length.toLocaleString()} ${corpus} spans, ${INGEST_BATCH}/request, ${CONCURRENCY} in flight${INGEST_ROUNDS > 1 ? `, median of ${INGEST_ROUNDS}` : ''}`;
  const spansPerS = (r: number) => `${Math.round(r).toLocaleString()} spans/s`;
  rows.push({
    work,
    api: spansPerS(apiRate),
    reference: `${spansPerS(plainRate)} (client.insert, plain MergeTree, no views)`,
    ratio: `${((apiRate / plainRate) * 100).toFixed(0)}% of ceiling`,
    target: '≥ 50% of ceiling',
  });
  rows.push({
    work: `${work}, against the project's own schema`,
    api: spansPerS(apiRate),
    reference: `${spansPerS(spansRate)} (client.insert into spans, views fire)`,
    ratio: `${((apiRate / spansRate) * 100).toFixed(0)}% of raw`,
    target: '',
  });
  const [apiCpu, spansCpu, plainCpu] = [median(cpu.api), median(cpu.spans), median(cpu.plain)];
  rows.push({
    work: `${work}, process CPU per span (engine threads included)`,
    api: `${apiCpu.toFixed(0)} µs/span`,
    reference: `${plainCpu.toFixed(0)} µs/span plain, ${spansCpu.toFixed(0)} µs/span spans`,
    ratio: `${((plainCpu / apiCpu) * 100).toFixed(0)}% of ceiling`,
    target: '≥ 50% of ceiling',
  });
  if (workerRows) rows.push(...workerRows);
  rows.push({
    work: `${work}, rollup sealer (off the insert path), CPU per span sealed`,
    api: `${sealCpu.toFixed(0)} µs/span`,
    reference: `${sealedSpans.toLocaleString()} spans in ${passes.length} passes, ${sealTime.ms.toFixed(0)} ms`,
    ratio: '',
    target: '',
  });
  const beforeCpu = cpu.before.length ? median(cpu.before) : null;
  if (beforeCpu !== null) {
    const beforeRate = median(rates.before);
    rows.push({
      work: `${work}, before clickhouse/0015 (span rollups fed by views at insert)`,
      api: `${spansPerS(beforeRate)}, ${beforeCpu.toFixed(0)} µs/span`,
      reference: `after: ${spansPerS(apiRate)}, ${apiCpu.toFixed(0)} µs/span (+ sealer ${sealCpu.toFixed(0)})`,
      ratio: `${((beforeRate / plainRate) * 100).toFixed(0)}% of ceiling by rate, ${((plainCpu / beforeCpu) * 100).toFixed(0)}% by CPU`,
      target: '',
    });
  }
  const writerCounts = args['ingest-writers'].split(',').filter(Boolean).map(Number);
  const writers = writerCounts.length
    ? await benchWriters(
        ctx,
        {
          batches: batches.map((b) => validateSpans(b).accepted),
          writers: writerCounts,
          concurrency: CONCURRENCY,
          rounds: INGEST_ROUNDS,
          databaseUrl: args['database-url'] ?? process.env.DATABASE_URL,
          label: `ingest ${spans.length.toLocaleString()} spans, ${INGEST_BATCH}/request`,
        },
        rows,
      )
    : undefined;

  return {
    spans: spans.length,
    rounds: INGEST_ROUNDS,
    api_spans_per_s: apiRate,
    raw_spans_per_s: spansRate,
    plain_spans_per_s: plainRate,
    ratio: apiRate / plainRate,
    ratio_to_raw_spans: apiRate / spansRate,
    cpu_us_per_span: { api: apiCpu, spans: spansCpu, plain: plainCpu, before_0015: beforeCpu, sealer: sealCpu },
    before_0015_spans_per_s: cpu.before.length ? median(rates.before) : null,
    beside_workers: indexed.seconds.length
      ? {
          spans_per_s: median(rates.worker),
          ratio: median(rates.worker) / median(rates.plain),
          cpu_us_per_span: median(cpu.worker),
          seconds_to_indexed: indexed.seconds,
          lag_seconds: { p50: median(indexed.lag), max: Math.max(...indexed.lag) },
          cpu_us_per_span_until_indexed: median(indexed.cpu),
        }
      : null,
    sealer: { spans: sealedSpans, passes: passes.length, ms: sealTime.ms },
    samples: { rates, cpu_us_per_span: cpu },
    writers,
  };
}

const WINDOWS: Record<string, number> = { '24h': 1, '7d': 7, '90d': 90 };

/**
 * List traces, newest 50 of the first project, per window and case (bench/reference-queries.ts:
 * no filter, set and numeric filters, metadata eq and contains, two and three predicates, search),
 * against the hand-written SQL for the same answer.
 */
async function benchList(ctx: Runtime, api: ReturnType<typeof buildApiApp>, d: Dataset, rows: Row[]) {
  const out: Record<string, unknown>[] = [];
  // The closed months merged first, as a running worker would have (src/traces/month-merge.ts).
  for (;;) {
    const pass = await runMonthMergePass(ctx.ch);
    if (!pass.merged) break;
    console.log(
      `month merge: ${pass.merged.partition} (${pass.merged.parts} parts) in ${(pass.ms / 1000).toFixed(1)} s`,
    );
  }
  const nowMs = Date.now();
  for (const [windowName, days] of Object.entries(WINDOWS)) {
    for (const listCase of LIST_CASES) {
      const filterName = listCase.name;
      const startAfter = new Date(nowMs - days * 86_400_000).toISOString();
      const query = new URLSearchParams({ start_after: startAfter, limit: '50' });
      if (listCase.filters) query.set('filters', JSON.stringify(listCase.filters));
      if (listCase.search) query.set('search_query', listCase.search);
      const url = `/api/v1/public/traces?${query}`;
      let total = 0;
      const apiTimes: number[] = [];
      for (let i = 0; i < RUNS + 2; i++) {
        let body: { meta: { total: number } } | undefined;
        const ms = await time(async () => {
          body = await inject(api, 'GET', url, d.keys[0]);
        });
        if (i >= 2) apiTimes.push(ms);
        total = body!.meta.total;
      }
      const refs = args['list-references']
        ? referenceQueries({ projectId: d.projectIds[0]!, startAfterMs: nowMs - days * 86_400_000, listCase })
        : {};
      const refTimes: Record<string, number[]> = {};
      const refTotals: Record<string, number> = {};
      for (const [name, sql] of Object.entries(refs)) {
        refTimes[name] = [];
        for (let i = 0; i < RUNS + 2; i++) {
          const ms = await time(async () => {
            const r = await ctx.ch.client.query({
              query: sql.query,
              query_params: sql.query_params,
              format: 'JSONEachRow',
            });
            const got = await r.json<{ total: string | number }>();
            refTotals[name] = Number(got[0]?.total ?? 0);
          });
          if (i >= 2) refTimes[name]!.push(ms);
        }
      }
      // A reference that answers a different total is not the same answer: say so rather than compare.
      const differing = Object.entries(refTotals)
        .filter(([, t]) => t !== total)
        .map(([n, t]) => `${n}: ${t}`);
      if (differing.length)
        console.warn(`list ${windowName} ${filterName}: API total ${total}, references ${differing.join(', ')}`);
      const [bestName, bestTimes] = Object.entries(refTimes).sort((a, b) => median(a[1]) - median(b[1]))[0] ?? [
        'none run',
        [NaN],
      ];
      const p50 = median(apiTimes);
      const ref = median(bestTimes);
      rows.push({
        work: `list ${windowName}, filter ${filterName} (${total.toLocaleString()} traces)`,
        api: `p50 ${p50.toFixed(1)} ms, p95 ${percentile(apiTimes, 95).toFixed(1)} ms`,
        reference: `${ref.toFixed(1)} ms (${bestName})`,
        ratio: `${(p50 / ref).toFixed(2)}×`,
        target: 'p50 ≤ 50 ms, ≤ 1.5×',
      });
      out.push({
        window: windowName,
        filter: filterName,
        total,
        p50_ms: p50,
        p95_ms: percentile(apiTimes, 95),
        reference: bestName,
        reference_p50_ms: ref,
        references: Object.fromEntries(Object.entries(refTimes).map(([k, v]) => [k, median(v)])),
        ratio: p50 / ref,
      });
    }
  }
  return out;
}

/** GET /traces/{id} for traces spread over the whole window. */
async function benchDetail(ctx: Runtime, api: ReturnType<typeof buildApiApp>, d: Dataset, rows: Row[]) {
  const r = await ctx.ch.client.query({
    query: 'SELECT trace_id FROM traces WHERE project_id = {p:String} ORDER BY sipHash64(trace_id) LIMIT {n:UInt32}',
    query_params: { p: d.projectIds[0], n: RUNS },
    format: 'JSONEachRow',
  });
  const ids = (await r.json<{ trace_id: string }>()).map((x) => x.trace_id);
  const times: number[] = [];
  for (const id of ids) times.push(await time(() => inject(api, 'GET', `/api/v1/public/traces/${id}`, d.keys[0])));
  const p50 = median(times);
  rows.push({
    work: `trace detail (${ids.length} random traces)`,
    api: `p50 ${p50.toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`,
    reference: '',
    ratio: '',
    target: '',
  });
  return { p50_ms: p50, p95_ms: percentile(times, 95) };
}

const GUARD_QUERIES = [
  "SELECT model_name, toStartOfDay(start_time) AS day, quantile(0.95)(duration_ms) AS p95, count() AS n FROM spans WHERE kind = 'llm' AND start_time > now() - INTERVAL 7 DAY GROUP BY model_name, day ORDER BY day, model_name",
  'WITH x AS (SELECT trace_id, count() AS n FROM spans GROUP BY trace_id) SELECT t.name, x.n, t.user_id FROM traces t JOIN x ON x.trace_id = t.trace_id WHERE t.total_cost > 0.01 ORDER BY x.n DESC LIMIT 20',
  'SELECT user_id, sum(total_cost) AS cost, rank() OVER (ORDER BY sum(total_cost) DESC) AS r FROM traces GROUP BY user_id',
  "SELECT kind, countIf(status = 'error') / count() AS error_rate FROM spans GROUP BY kind ORDER BY error_rate DESC",
  "SELECT session_id, count() AS traces, sum(total_cost) AS cost FROM traces WHERE session_id != '' GROUP BY session_id ORDER BY traces DESC LIMIT 10",
];

/** The SQL guard's own cost (parse, check, rewrite, re-parse) per query, first sight and repeated. */
function benchGuard(rows: Row[]) {
  const sample = (fn: (q: string) => unknown) => {
    const times: number[] = [];
    for (let round = 0; round < 60; round++) {
      for (const q of GUARD_QUERIES) {
        const start = performance.now();
        fn(q);
        if (round >= 10) times.push(performance.now() - start);
      }
    }
    return times;
  };
  const cold = sample((q) => guardUncached(q, 'default'));
  const warm = sample((q) => guardSql(q, 'default'));
  rows.push({
    work: `SQL guard, ${GUARD_QUERIES.length} analyst queries (parse + check + rewrite)`,
    api: `p50 ${median(cold).toFixed(2)} ms first sight, ${median(warm).toFixed(3)} ms repeated`,
    reference: '',
    ratio: '',
    target: '≤ 2 ms p50',
  });
  return { first_sight_p50_ms: median(cold), first_sight_p95_ms: percentile(cold, 95), repeated_p50_ms: median(warm) };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
