// Evaluator throughput (issue 31): judge calls a minute through the real worker path (the tick
// enrols, executions run as queue jobs under the per-project call slots, each scored through
// writeScores with its judge trace), against the fake OpenAI-compatible judge on loopback answering in
// 200 ms. Target: 1,000 judge calls a minute on this machine, memory flat (RSS before and after).
//
// Alone, on fresh embedded stores:
//   `npx tsx bench/evaluator-throughput.ts [--traces 600] [--projects 2] [--delay-ms 200]`
// In `npm run bench` it runs after the evaluations rows (bench/run.ts).
// Profiling: BENCH_PROGRESS=1 prints the finished count each second, BENCH_COUNT_SQL=1 the Postgres
// statements of the run (count, summed wait+run ms, text), BENCH_CPU_PROFILE=<file> a CPU profile of it.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';
import { runEvaluatorTick } from '../src/evaluators/runtime.js';
import { startEvaluatorWorkers } from '../workers/evaluators.js';
import { startFakeJudge } from '../test/support/fake-judge.js';
import { printTable, type Row } from './measure.js';

const PUBLIC = '/api/v1/public';
const TARGET_PER_MINUTE = 1_000;

async function inject(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  token: string | undefined,
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

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

export async function benchEvaluatorThroughput(
  ctx: Runtime,
  api: FastifyInstance,
  web: FastifyInstance,
  options: { traces: number; projects: number; delayMs: number },
  rows: Row[],
) {
  if (!ctx.config.llmConnections.allowPrivate) throw new Error('set LLM_CONNECTION_ALLOW_PRIVATE=true for this bench');
  const judge = await startFakeJudge();
  judge.delayMs = options.delayMs;
  judge.fallback = {
    kind: 'judgement',
    score: 0.8,
    reasoning: 'Clear and correct.',
    inputTokens: 600,
    outputTokens: 40,
  };
  const signup = await inject(web, 'POST', '/api/auth/signup', undefined, {
    email: `bench-eval-${Date.now()}@sightline.local`,
    password: 'bench password 1',
    name: 'Bench',
  });
  const projects: { id: string; key: string; evaluatorId: string }[] = [];
  for (let i = 0; i < options.projects; i++) {
    const p = await inject(api, 'POST', `${PUBLIC}/projects`, signup.session_token, {
      name: `bench-eval-${i}-${Date.now()}`,
      workspace_id: signup.workspace.id,
    });
    const key = (
      await inject(api, 'POST', `${PUBLIC}/projects/${p.id}/api-keys`, signup.session_token, { name: 'bench' })
    ).key as string;
    const conn = await inject(api, 'POST', `${PUBLIC}/llm-connections`, signup.session_token, {
      project_id: p.id,
      name: 'fake judge',
      provider: 'openai_compatible',
      base_url: judge.baseUrl,
      api_key: 'sk-bench-0000',
      default_model: 'gpt-4o-mini',
    });
    const ev = await inject(api, 'POST', `${PUBLIC}/evaluators`, key, {
      name: 'helpfulness',
      target: 'trace',
      delay_seconds: 0,
      scorer: {
        type: 'llm_judge',
        connection_id: conn.id,
        prompt: 'Question: {{Q}}\nAnswer: {{A}}\nScore 0-1 how helpful the answer is.',
        variables: { Q: 'input', A: 'output' },
        output: { data_type: 'numeric', min_value: 0, max_value: 1 },
      },
      score_name: 'helpfulness',
    });
    projects.push({ id: p.id, key, evaluatorId: ev.id });
  }
  const perProject = Math.ceil(options.traces / options.projects);
  for (const p of projects) {
    const t = Date.now() - 60_000;
    const spans = Array.from({ length: perProject }, (_, i) => ({
      trace_id: `bench-eval-${p.id.slice(0, 8)}-${i}`,
      span_id: 'root',
      name: 'support-agent',
      start_time: new Date(t + i).toISOString(),
      end_time: new Date(t + i + 900).toISOString(),
      input: `How do I reset my password? (${i})`,
      output: 'Click "Forgot password" on the login page and follow the link we email you.',
    }));
    for (let i = 0; i < spans.length; i += 1000)
      await inject(api, 'POST', `${PUBLIC}/traces`, p.key, { spans: spans.slice(i, i + 1000) });
  }
  const projectIds = projects.map((p) => p.id);
  const total = perProject * projects.length;
  const done = async () =>
    Number(
      (
        await ctx.pg.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM evaluator_executions WHERE project_id = ANY($1::uuid[]) AND status IN ('completed', 'error', 'skipped')`,
          [projectIds],
        )
      ).rows[0]!.n,
    );
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  const inspector = process.env.BENCH_CPU_PROFILE ? new (await import('node:inspector')).Session() : null;
  if (inspector) {
    inspector.connect();
    await new Promise((r) => inspector.post('Profiler.enable', () => inspector.post('Profiler.start', r)));
  }
  const stmtCounts = new Map<string, { n: number; ms: number }>();
  if (process.env.BENCH_COUNT_SQL) {
    const orig = ctx.pg.pool.query.bind(ctx.pg.pool) as (...a: unknown[]) => Promise<unknown>;
    (ctx.pg.pool as unknown as { query: unknown }).query = async (...a: unknown[]) => {
      const t0 = performance.now();
      try {
        return await orig(...a);
      } finally {
        const k = String(typeof a[0] === 'string' ? a[0] : (a[0] as { text: string }).text)
          .replace(/\s+/g, ' ')
          .slice(0, 90);
        const c = stmtCounts.get(k) ?? { n: 0, ms: 0 };
        c.n++;
        c.ms += performance.now() - t0;
        stmtCounts.set(k, c);
      }
    };
  }
  const workers = startEvaluatorWorkers(ctx, { schedule: false, projectIds });
  const started = performance.now();
  const { created } = await runEvaluatorTick(ctx, { projectIds, latenessMs: 0, watchdog: false });
  let finished = 0;
  let rssPeak = rssBefore;
  while ((finished = await done()) < created.length) {
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    if (process.env.BENCH_PROGRESS)
      console.log(((performance.now() - started) / 1000).toFixed(1), finished, judge.requests.length);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const seconds = (performance.now() - started) / 1000;
  if (inspector)
    await new Promise<void>((r) =>
      inspector.post('Profiler.stop', (_e, res) => {
        fs.writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(res.profile));
        r();
      }),
    );
  await Promise.all(workers.map((w) => w.close()));
  if (process.env.BENCH_COUNT_SQL)
    for (const [k, v] of [...stmtCounts].sort((a, b) => b[1].ms - a[1].ms)) console.log(v.n, v.ms.toFixed(0), k);
  global.gc?.();
  const rssAfter = process.memoryUsage().rss;
  const completed = Number(
    (
      await ctx.pg.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM evaluator_executions WHERE project_id = ANY($1::uuid[]) AND status = 'completed'`,
        [projectIds],
      )
    ).rows[0]!.n,
  );
  await judge.close();
  const perMinute = (judge.requests.length / seconds) * 60;
  const result = {
    traces: total,
    enrolled: created.length,
    finished,
    completed,
    judge_calls: judge.requests.length,
    max_in_flight: judge.maxInFlight,
    seconds,
    calls_per_minute: perMinute,
    rss_before: rssBefore,
    rss_peak: rssPeak,
    rss_after: rssAfter,
  };
  rows.push({
    work: `evaluator throughput: ${result.judge_calls} judge calls (${options.projects} projects x ${ctx.config.evaluators.concurrencyPerProject} slots, judge ${options.delayMs} ms), ${completed} scored`,
    api: `${perMinute.toFixed(0)} calls/min`,
    reference: `RSS ${mib(rssBefore)} -> peak ${mib(rssPeak)} -> ${mib(rssAfter)}`,
    ratio: '',
    target: `>= ${TARGET_PER_MINUTE}/min: ${perMinute >= TARGET_PER_MINUTE ? 'met' : 'MISSED'}`,
  });
  return result;
}

/** Fresh embedded stores in `dir` (loopback judge allowed), then the throughput row. */
export async function benchEvaluatorThroughputAlone(
  dir: string,
  options: { traces: number; projects: number; delayMs: number },
  rows: Row[],
) {
  fs.rmSync(dir, { recursive: true, force: true });
  const { loadConfig } = await import('../src/config.js');
  const { openRuntime } = await import('../src/runtime.js');
  const { buildApiApp } = await import('../src/app.js');
  const { buildWebApp } = await import('../src/web/app.js');
  const ctx = await openRuntime(
    loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false', LLM_CONNECTION_ALLOW_PRIVATE: 'true' }),
  );
  const api = buildApiApp(ctx);
  const web = buildWebApp(ctx);
  await Promise.all([api.ready(), web.ready()]);
  try {
    return await benchEvaluatorThroughput(ctx, api, web, options, rows);
  } finally {
    await Promise.all([api.close(), web.close()]);
    await ctx.close();
  }
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      traces: { type: 'string', default: '600' },
      projects: { type: 'string', default: '2' },
      'delay-ms': { type: 'string', default: '200' },
      dir: { type: 'string', default: 'bench/data/evaluator-throughput' },
    },
  });
  const rows: Row[] = [];
  const results = await benchEvaluatorThroughputAlone(
    path.resolve(args.dir),
    { traces: Number(args.traces), projects: Number(args.projects), delayMs: Number(args['delay-ms']) },
    rows,
  );
  printTable(rows);
  console.log(JSON.stringify(results, null, 2));
  const outFile = path.resolve(
    'bench/results',
    `${new Date().toISOString().replace(/[:.]/g, '-')}-evaluator-throughput.json`,
  );
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify({ ...results, rows }, null, 2));
  console.log(`\nresults: ${path.relative(process.cwd(), outFile)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
