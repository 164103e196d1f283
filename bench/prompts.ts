// Prompt rows of the benchmark (issue 34): the prompt fetch under load (GET /prompts/{name} at a fixed
// rate over real HTTP with autocannon; target p99 <= 20 ms at 200 fetches a second), and the
// per-version comparison (GET /prompts/{name}/metrics) over 90 days of spans naming the prompt's
// versions (target <= 300 ms at 1M spans).
//
// Alone, on fresh embedded stores: `npx tsx bench/prompts.ts [--spans 1000000] [--rate 200] [--duration 10] [--runs 10]`.
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { execFile } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';
import { median, percentile, printTable, time, type Row } from './measure.js';
import { benchAccount, openBenchServer, publicCall, saveResults } from './bench-server.js';

const PUBLIC = '/api/v1/public';
export const PROMPT_NAME = 'bench/support-answer';
const NAME = PROMPT_NAME;
const VERSIONS = 5;
const DAY_MS = 86_400_000;

/** `spans` spans over the 90 days before now, naming the prompt's versions in turn (a tenth none), a tenth of their traces scored. */
export async function loadPromptSpans(ctx: Runtime, projectId: string, spans: number): Promise<void> {
  const end = Date.now() - 60_000;
  await ctx.ch.client.command({
    query: `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status,
                               cost, input_tokens, output_tokens, total_tokens, trace_start_hour, ttl_days,
                               prompt_name, prompt_version)
            SELECT {project:String}, concat('pt-', toString(number)), 's0', '', 'llm-call', 'llm',
                   fromUnixTimestamp64Milli(toInt64({end:Int64} - number * {step:Int64})) AS start,
                   start + toIntervalMillisecond(100 + number % 900),
                   if(number % 50 = 0, 'error', 'ok'), 0.0001 * (number % 7), 100, 20 + number % 30, 120 + number % 30,
                   toStartOfHour(start), 365,
                   if(number % 10 = 0, '', {name:String}), if(number % 10 = 0, 0, 1 + number % ${VERSIONS})
              FROM numbers({spans:UInt64})`,
    query_params: { project: projectId, end, step: Math.max(1, Math.floor((90 * DAY_MS) / spans)), name: NAME, spans },
  });
  // A tenth of the traces carry a score (numeric and boolean in turn), written with their trace.
  await ctx.ch.client.command({
    query: `INSERT INTO scores (project_id, score_id, trace_id, span_id, session_id, name, data_type, value, source,
                                created_at, updated_at, version, ttl_days)
            SELECT {project:String}, concat('ps-', toString(number)), concat('pt-', toString(number * 10 + 3)), '', '',
                   if(number % 2 = 0, 'helpfulness', 'correct'), if(number % 2 = 0, 'numeric', 'boolean'),
                   if(number % 2 = 0, (number % 10) / 10, number % 3 != 0),
                   'api', fromUnixTimestamp64Milli(toInt64({end:Int64} - (number * 10 + 3) * {step:Int64})) AS created,
                   created, 1, 365
              FROM numbers({scores:UInt64})`,
    query_params: {
      project: projectId,
      end,
      step: Math.max(1, Math.floor((90 * DAY_MS) / spans)),
      scores: Math.floor(spans / 10),
    },
  });
}

type AutocannonResult = {
  non2xx: number;
  errors: number;
  requests: { total: number };
  latency: { p50: number; p99: number };
};

/** autocannon's command line, run as a child process; its JSON summary. */
async function loadFromAnotherProcess(args: string[]): Promise<AutocannonResult> {
  const bin = path.resolve('node_modules/autocannon/autocannon.js');
  const { stdout } = await promisify(execFile)(process.execPath, [bin, '--json', ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  // With a warm-up, autocannon prints the warm-up's summary first, each summary on a line of its own.
  const summaries = stdout.trim().split('\n');
  return JSON.parse(summaries[summaries.length - 1]!) as AutocannonResult;
}

export async function benchPrompts(
  ctx: Runtime,
  api: FastifyInstance,
  session: { token: string; projectId: string; key: string },
  options: { spans: number; rate: number; duration: number; runs: number },
  rows: Row[],
) {
  for (let v = 1; v <= VERSIONS; v++) {
    await publicCall(api, 'POST', `/prompts?project_id=${session.projectId}`, session.token, {
      name: NAME,
      type: 'chat',
      prompt: [
        { role: 'system', content: `You answer support questions (v${v}). ${'Be precise. '.repeat(40)}` },
        { role: 'user', content: '{{question}}' },
      ],
      config: { model: 'gpt-4o-mini', temperature: 0.2 },
      labels: v === VERSIONS - 1 ? ['production'] : [],
    });
  }

  // The fetch: a fixed rate over real HTTP, as SDKs fetch before their calls. The load comes from
  // autocannon in a process of its own, as an SDK's fetches come from another process: in this one,
  // its client work would share the server's event loop and be counted as the server's latency.
  // Two seconds of the same fetches go first, not counted: the server here was built a moment ago,
  // and its first requests compile the route's code once (a running service did so long before);
  // the clients are new connections in both parts, as SDKs' cold starts are.
  const address = await api.listen({ port: 0, host: '127.0.0.1' });
  const port = (api.server.address() as AddressInfo).port;
  const fetched = await loadFromAnotherProcess([
    `http://127.0.0.1:${port}${PUBLIC}/prompts/${encodeURIComponent(NAME)}?label=production`,
    '--headers',
    `authorization=Bearer ${session.key}`,
    '--connections',
    '10',
    '--overallRate',
    String(options.rate),
    '--duration',
    String(options.duration),
    '--warmup',
    '[',
    '-c',
    '10',
    '-d',
    '2',
    ']',
  ]);
  const non2xx = fetched.non2xx + fetched.errors;
  const fetch = {
    address,
    rate: options.rate,
    requests: fetched.requests.total,
    p50_ms: fetched.latency.p50,
    p99_ms: fetched.latency.p99,
    failed: non2xx,
  };
  rows.push({
    work: `prompt fetch at ${options.rate}/s (p50 / p99, ${fetch.requests} requests, ${non2xx} failed)`,
    api: `${fetch.p50_ms} / ${fetch.p99_ms} ms`,
    reference: '',
    ratio: '',
    target: `p99 <= 20 ms: ${fetch.p99_ms <= 20 && non2xx === 0 ? 'met' : 'MISSED'}`,
  });

  // The comparison over 90 days.
  await loadPromptSpans(ctx, session.projectId, options.spans);
  const window = `start_time=${new Date(Date.now() - 90 * DAY_MS).toISOString()}&end_time=${new Date().toISOString()}`;
  const url = `/prompts/${encodeURIComponent(NAME)}/metrics?${window}`;
  const first = await publicCall(api, 'GET', url, session.key);
  const times: number[] = [];
  for (let i = 0; i < options.runs; i++) times.push(await time(() => publicCall(api, 'GET', url, session.key)));
  const compare = {
    spans: options.spans,
    versions: first.versions.length,
    p50_ms: median(times),
    p95_ms: percentile(times, 95),
  };
  rows.push({
    work: `prompt version comparison, 90 days, ${options.spans.toLocaleString('en')} spans (p50 / p95)`,
    api: `${compare.p50_ms.toFixed(1)} / ${compare.p95_ms.toFixed(1)} ms`,
    reference: '',
    ratio: '',
    target: `<= 300 ms: ${compare.p50_ms <= 300 ? 'met' : 'MISSED'}`,
  });
  return { fetch, compare };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      spans: { type: 'string', default: '1000000' },
      rate: { type: 'string', default: '200' },
      duration: { type: 'string', default: '10' },
      runs: { type: 'string', default: '10' },
      dir: { type: 'string', default: 'bench/data/prompts' },
    },
  });
  const server = await openBenchServer(path.resolve(args.dir));
  try {
    const account = await benchAccount(server.api, server.web);
    const { projectId, key } = await account.project('bench');
    const rows: Row[] = [];
    const results = await benchPrompts(
      server.ctx,
      server.api,
      { token: account.token, projectId, key },
      { spans: Number(args.spans), rate: Number(args.rate), duration: Number(args.duration), runs: Number(args.runs) },
      rows,
    );
    printTable(rows);
    saveResults('prompts', { ...results, rows });
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
