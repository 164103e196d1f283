// Producer protocol rows of the benchmark (issue 32, "Done when"): a 10,000-event Langfuse ingestion
// batch (`POST /api/public/ingestion`) and a 1,000-run LangSmith batch (`POST /runs/multipart`, gzip,
// as the SDK sends it once /info advertises multipart and gzip), each against the native ingest of the
// very spans it becomes (`POST /api/v1/public/traces`), measured in one run, rounds interleaved.
//
// What is counted: from the first request until every request is answered AND every span its pieces
// make is settled (src/protocols/span-parts.ts: merged and written through the span writer, rows in
// `spans`). The settling is the same `settleSpanParts` pass the sweeper makes, called with a zero quiet
// window (a producer's pieces are otherwise held for quiet time, 10 s, which is waiting, not work).
// The native reference counts until its requests are answered (its spans are written by then).
//
// Alone, on fresh embedded stores: `npx tsx bench/protocols.ts [--rounds 3] [--langfuse-events 10000]
// [--langsmith-runs 1000]`; or `npm run bench -- --only protocols` (bench/run.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';
import { envelopeOf, mapEvent } from '../src/protocols/langfuse/events.js';
import { runToSpanPart, type RunPayload } from '../src/protocols/langsmith/run-mapping.js';
import { mergeSpanParts, settleSpanParts, type SpanPart } from '../src/protocols/span-parts.js';
import { LANGSMITH_PREFIX, SDK_BATCH_OPERATIONS } from '../src/protocols/langsmith/routes.js';
import { median, printTable, time, type Row } from './measure.js';
import { benchAccount, openBenchServer, saveResults } from './bench-server.js';

const PUBLIC = '/api/v1/public';
/** Events per Langfuse request: the native ingest's 1,000 a request (the SDK caps a batch at 2.5 MB; these are ~1 MB). */
const LANGFUSE_BATCH = 1000;
/** Runs per multipart request: /info's `size_limit` counts operations, and each run is a post and a patch. */
const LANGSMITH_BATCH = SDK_BATCH_OPERATIONS / 2;
/** Spans per native request, as the ingest rows (bench/run.ts). */
const NATIVE_BATCH = 1000;
const CONCURRENCY = 4;
/** The target: a protocol takes its events (runs) at ≥ 70% of the native spans/s of the same spans. */
const TARGET = 0.7;

export type ProtocolBenchOptions = { langfuseEvents: number; langsmithRuns: number; rounds: number };
type Project = { projectId: string; key: string };

// ---- realistic payloads ------------------------------------------------------------------------

const TOPICS = ['refund policy', 'shipping delays', 'password reset', 'invoice totals', 'API rate limits'];
const SYSTEM =
  'You are a support agent for Acme. Answer from the retrieved documents only; cite them by number. ' +
  'If the documents do not answer, say so and offer to open a ticket. Keep answers under 120 words.';

function sentence(seed: number, words: number): string {
  const vocab = [
    'the',
    'order',
    'customer',
    'refund',
    'within',
    'days',
    'account',
    'shipping',
    'invoice',
    'policy',
    'support',
    'ticket',
    'document',
    'limit',
    'request',
    'answer',
    'team',
    'update',
    'status',
    'plan',
  ];
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(vocab[(seed * 31 + i * 17 + ((seed >> 3) ^ i)) % vocab.length]!);
  return out.join(' ');
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * `traces` agent traces as the Langfuse v3 SDK sends them, 8 events a trace (4 spans): the trace,
 * an agent span, a generation (model, parameters, chat messages, prompt link) and its update (output,
 * usage, cost, completion start), a tool span and its update, the agent's end, the trace's output.
 */
function langfuseEvents(traces: number, startMs: number): unknown[] {
  const events: unknown[] = [];
  for (let t = 0; t < traces; t++) {
    const at = startMs + t * 50;
    const traceId = crypto.randomUUID();
    const agent = crypto.randomUUID();
    const gen = crypto.randomUUID();
    const tool = crypto.randomUUID();
    const question = `About ${TOPICS[t % TOPICS.length]}: ${sentence(t, 24)}?`;
    const answer = `${sentence(t + 1, 60)} [1]`;
    const event = (type: string, ms: number, body: Record<string, unknown>) =>
      events.push({ id: crypto.randomUUID(), type, timestamp: iso(ms), body });
    event('trace-create', at, {
      id: traceId,
      timestamp: iso(at),
      name: 'support-chat',
      userId: `user-${t % 97}`,
      sessionId: `session-${t % 311}`,
      input: { question },
      metadata: { tenant: `tenant-${t % 20}`, channel: 'web' },
      tags: ['support'],
      release: 'v1.4.2',
    });
    event('span-create', at + 1, {
      id: agent,
      traceId,
      name: 'answer-agent',
      startTime: iso(at + 1),
      input: { question },
      metadata: { step: 'plan' },
    });
    const messages = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Documents:\n[1] ${sentence(t + 2, 80)}\n[2] ${sentence(t + 3, 80)}` },
      { role: 'user', content: question },
    ];
    event('generation-create', at + 5, {
      id: gen,
      traceId,
      parentObservationId: agent,
      name: 'chat-completion',
      startTime: iso(at + 5),
      model: t % 3 === 0 ? 'gpt-4o-mini' : 'gpt-4o',
      modelParameters: { temperature: 0.2, max_tokens: 400 },
      input: messages,
      promptName: 'support-answer',
      promptVersion: 3,
    });
    event('generation-update', at + 905, {
      id: gen,
      traceId,
      endTime: iso(at + 905),
      completionStartTime: iso(at + 300),
      output: { role: 'assistant', content: answer },
      usageDetails: { input: 420 + (t % 50), output: 80 + (t % 30), total: 500 + (t % 50) + (t % 30) },
      costDetails: { input: 0.00105, output: 0.0008, total: 0.00185 },
      ...(t % 40 === 0 ? { level: 'WARNING', statusMessage: 'content filter: borderline' } : {}),
    });
    event('tool-create', at + 910, {
      id: tool,
      traceId,
      parentObservationId: agent,
      name: 'open-ticket',
      startTime: iso(at + 910),
      input: { subject: question.slice(0, 60), priority: 'normal' },
    });
    event('tool-update', at + 960, {
      id: tool,
      traceId,
      endTime: iso(at + 960),
      output: t % 25 === 0 ? undefined : { ticket: `T-${100000 + t}` },
      ...(t % 25 === 0 ? { level: 'ERROR', statusMessage: 'ticket service timed out' } : {}),
    });
    event('span-update', at + 970, { id: agent, traceId, endTime: iso(at + 970), output: { answer } });
    event('trace-create', at + 971, { id: traceId, output: { answer }, tags: ['answered'] });
  }
  return events;
}

/** One LangChain message as `@langchain/core` serialises it into a run's inputs. */
const lcMessage = (type: 'SystemMessage' | 'HumanMessage' | 'AIMessage', content: string) => ({
  lc: 1,
  type: 'constructor',
  id: ['langchain_core', 'messages', type],
  kwargs: { content, additional_kwargs: {}, response_metadata: {} },
});

const dotted = (ms: number, id: string) => `${iso(ms).replace(/[-:.]/g, '').replace('Z', '')}000Z${id}`;

/**
 * `traces` LangChain agent traces as `langsmith` sends them, 4 runs a trace: the chain, a chat model
 * run (messages in, generations with usage_metadata out, model in metadata), a tool run, a second
 * chat model run. Each run is its post (inputs) and its patch (outputs, epoch-ms end), as parts.
 */
export function langsmithRuns(traces: number, startMs: number): { post: RunPayload; patch: RunPayload }[] {
  const runs: { post: RunPayload; patch: RunPayload }[] = [];
  for (let t = 0; t < traces; t++) {
    const at = startMs + t * 50;
    const root = crypto.randomUUID();
    const rootOrder = dotted(at, root);
    const question = `About ${TOPICS[t % TOPICS.length]}: ${sentence(t, 24)}?`;
    const answer = `${sentence(t + 1, 60)} [1]`;
    const run = (
      id: string,
      order: string,
      parent: string | undefined,
      name: string,
      runType: string,
      start: number,
      end: number,
      inputs: unknown,
      outputs: unknown,
      extra: Record<string, unknown> = {},
      error?: string,
    ) =>
      runs.push({
        post: {
          id,
          trace_id: root,
          dotted_order: order,
          ...(parent ? { parent_run_id: parent } : {}),
          name,
          run_type: runType,
          start_time: `${iso(start).replace('Z', '')}000Z`,
          session_name: 'support-bot',
          extra: { runtime: { sdk: 'langsmith-js', sdk_version: '0.12.0' }, ...extra },
          tags: ['support'],
          inputs,
        },
        patch: {
          id,
          trace_id: root,
          dotted_order: order,
          ...(parent ? { parent_run_id: parent } : {}),
          end_time: end,
          outputs,
          ...(error ? { error } : {}),
        },
      });
    const llm = (id: string, start: number, messages: unknown[], reply: string) => {
      const model = t % 3 === 0 ? 'gpt-4o-mini' : 'gpt-4o';
      const usage = { input_tokens: 420 + (t % 50), output_tokens: 80 + (t % 30), total_tokens: 500 + (t % 80) };
      run(
        id,
        `${rootOrder}.${dotted(start, id)}`,
        root,
        'ChatOpenAI',
        'llm',
        start,
        start + 900,
        { messages: [messages] },
        {
          generations: [[{ text: reply, message: lcMessage('AIMessage', reply) }]],
          llm_output: { model_name: model },
          usage_metadata: usage,
        },
        {
          metadata: {
            ls_provider: 'openai',
            ls_model_name: model,
            ls_model_type: 'chat',
            ls_temperature: 0.2,
            thread_id: `thread-${t % 311}`,
            user_id: `user-${t % 97}`,
          },
          invocation_params: { model, temperature: 0.2, max_tokens: 400 },
        },
      );
    };
    const messages = [
      lcMessage('SystemMessage', SYSTEM),
      lcMessage('HumanMessage', `Documents:\n[1] ${sentence(t + 2, 80)}\n[2] ${sentence(t + 3, 80)}`),
      lcMessage('HumanMessage', question),
    ];
    run(
      rootOrder.slice(rootOrder.indexOf('Z') + 1),
      rootOrder,
      undefined,
      'AgentExecutor',
      'chain',
      at,
      at + 2000,
      { input: question },
      { output: answer },
      { metadata: { thread_id: `thread-${t % 311}` } },
    );
    llm(crypto.randomUUID(), at + 5, messages, 'Calling open_ticket');
    const tool = crypto.randomUUID();
    run(
      tool,
      `${rootOrder}.${dotted(at + 910, tool)}`,
      root,
      'open_ticket',
      'tool',
      at + 910,
      at + 960,
      { input: question.slice(0, 60) },
      { output: `T-${100000 + t}` },
      {},
      t % 25 === 0 ? 'Error: ticket service timed out' : undefined,
    );
    llm(crypto.randomUUID(), at + 970, [...messages, lcMessage('AIMessage', 'T-1')], answer);
  }
  return runs;
}

/** A multipart body as the SDK builds it: `post.{id}`, `post.{id}.inputs`, `patch.{id}`, `patch.{id}.outputs`. */
export function multipartBody(runs: { post: RunPayload; patch: RunPayload }[]): {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
} {
  const boundary = `----sightline-bench-${crypto.randomUUID()}`;
  const chunks: string[] = [];
  const part = (name: string, value: unknown) =>
    chunks.push(
      `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(value)}\r\n`,
    );
  for (const { post, patch } of runs) {
    const { inputs, ...postRest } = post;
    part(`post.${String(post.id)}`, postRest);
    part(`post.${String(post.id)}.inputs`, inputs);
    const { outputs, ...patchRest } = patch;
    part(`patch.${String(patch.id)}`, patchRest);
    part(`patch.${String(patch.id)}.outputs`, outputs);
  }
  chunks.push(`--${boundary}--\r\n`);
  return {
    body: new Uint8Array(zlib.gzipSync(Buffer.from(chunks.join('')))),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/** The native spans the pieces become (the same mapping and merge the server runs), for the reference. */
function nativeSpansOf(parts: SpanPart[]): Record<string, unknown>[] {
  const bySpan = new Map<string, SpanPart[]>();
  for (const p of parts) {
    const list = bySpan.get(p.span_id) ?? [];
    list.push(p);
    bySpan.set(p.span_id, list);
  }
  const spans: Record<string, unknown>[] = [];
  for (const [spanId, list] of bySpan) {
    const merged = mergeSpanParts(list);
    if (merged) spans.push({ ...merged, trace_id: list[0]!.trace_id, span_id: spanId });
  }
  return spans;
}

// ---- sending -----------------------------------------------------------------------------------

type Request = { body: string | Uint8Array<ArrayBuffer>; headers: Record<string, string> };

/** Sends the requests, `CONCURRENCY` in flight; a 429/503 is sent again after its Retry-After. */
async function send(url: string, requests: Request[], ok: (status: number, text: string) => boolean): Promise<number> {
  let next = 0;
  let retries = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < requests.length) {
        const r = requests[next++]!;
        for (;;) {
          const res = await fetch(url, { method: 'POST', body: r.body, headers: r.headers });
          const text = await res.text();
          if ((res.status === 429 || res.status === 503) && res.headers.has('retry-after')) {
            retries++;
            await new Promise((resolve) => setTimeout(resolve, Number(res.headers.get('retry-after')) * 1000));
            continue;
          }
          if (!ok(res.status, text)) throw new Error(`${url} answered ${res.status}: ${text.slice(0, 300)}`);
          break;
        }
      }
    }),
  );
  return retries;
}

/** Settles the project's pieces (zero quiet window) until every expected span is in `spans`. */
async function settleAll(ctx: Runtime, projectId: string, expected: number): Promise<number> {
  let passes = 0;
  for (;;) {
    passes++;
    const { written } = await settleSpanParts(ctx, { projectId, quietMs: 0, now: Date.now() });
    if (written > 0) continue;
    const [row] = await ctx.ch.rows<{ n: string }>({
      query: 'SELECT count() AS n FROM spans WHERE project_id = {p:String}',
      query_params: { p: projectId },
    });
    if (Number(row?.n) >= expected) return passes;
    if (passes > 1000) throw new Error(`only ${row?.n} of ${expected} spans settled`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The rows, on the server `api` (listening here) of `ctx`; `newProject` makes a fresh project and key
 * (each measurement writes into its own project, so the rounds don't see each other's ids).
 */
export async function benchProtocols(
  ctx: Runtime,
  api: FastifyInstance,
  newProject: (name: string) => Promise<Project>,
  options: ProtocolBenchOptions,
  rows: Row[],
) {
  if (!api.server.listening) await api.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}`;
  const lfTraces = Math.ceil(options.langfuseEvents / 8);
  const lsTraces = Math.ceil(options.langsmithRuns / 4);
  const samples = {
    langfuse: {
      events_per_s: [] as number[],
      answered_events_per_s: [] as number[],
      native_spans_per_s: [] as number[],
    },
    langsmith: { runs_per_s: [] as number[], answered_runs_per_s: [] as number[], native_spans_per_s: [] as number[] },
  };
  let lfEvents = 0;
  let lfSpans = 0;
  let lsRuns = 0;
  let lfBytes = 0;
  let lsBytes = 0;
  const nativeRequests = (key: string, spans: Record<string, unknown>[]) => {
    const out: Request[] = [];
    for (let i = 0; i < spans.length; i += NATIVE_BATCH)
      out.push({
        body: JSON.stringify({ spans: spans.slice(i, i + NATIVE_BATCH) }),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      });
    return out;
  };
  const native = async (spans: Record<string, unknown>[]) => {
    const p = await newProject('native');
    const requests = nativeRequests(p.key, spans);
    const ms = await time(() => send(`${origin}${PUBLIC}/traces`, requests, (s) => s === 200));
    return (spans.length / ms) * 1000;
  };

  for (let round = 0; round < options.rounds; round++) {
    // Langfuse: the events, their native spans, then both measured (native first, then Langfuse).
    const events = langfuseEvents(lfTraces, Date.now() - 3_600_000).slice(0, options.langfuseEvents);
    const receivedAt = Date.now();
    const parts: SpanPart[] = [];
    for (const e of events) {
      const env = envelopeOf(e);
      if ('error' in env) throw new Error(env.error);
      const m = mapEvent(env, receivedAt);
      if ('part' in m) parts.push(m.part);
    }
    const lfNative = nativeSpansOf(parts);
    lfEvents = events.length;
    lfSpans = lfNative.length;
    samples.langfuse.native_spans_per_s.push(await native(lfNative));
    const lf = await newProject('langfuse');
    const auth = `Basic ${Buffer.from(`pk-lf-bench:${lf.key}`).toString('base64')}`;
    const lfRequests: Request[] = [];
    for (let i = 0; i < events.length; i += LANGFUSE_BATCH) {
      const body = JSON.stringify({ batch: events.slice(i, i + LANGFUSE_BATCH), metadata: { sdk_name: 'javascript' } });
      lfBytes = Math.max(lfBytes, body.length);
      lfRequests.push({ body, headers: { 'content-type': 'application/json', authorization: auth } });
    }
    let answeredMs = 0;
    const lfMs = await time(async () => {
      const t0 = performance.now();
      await send(`${origin}/api/public/ingestion`, lfRequests, (s, text) => {
        return s === 207 && (JSON.parse(text) as { errors: unknown[] }).errors.length === 0;
      });
      answeredMs = performance.now() - t0;
      await settleAll(ctx, lf.projectId, lfNative.length);
    });
    samples.langfuse.events_per_s.push((events.length / lfMs) * 1000);
    samples.langfuse.answered_events_per_s.push((events.length / answeredMs) * 1000);

    // LangSmith: the runs (post and patch of each in one body), their native spans, both measured.
    const runs = langsmithRuns(lsTraces, Date.now() - 3_600_000).slice(0, options.langsmithRuns);
    lsRuns = runs.length;
    const lsParts: SpanPart[] = [];
    for (const r of runs)
      for (const [op, payload] of [
        ['post', r.post],
        ['patch', r.patch],
      ] as const) {
        const part = runToSpanPart({ ...payload }, op, receivedAt);
        if (typeof part === 'string') throw new Error(part);
        lsParts.push(part);
      }
    const lsNative = nativeSpansOf(lsParts);
    samples.langsmith.native_spans_per_s.push(await native(lsNative));
    const ls = await newProject('langsmith');
    const lsRequests: Request[] = [];
    for (let i = 0; i < runs.length; i += LANGSMITH_BATCH) {
      const { body, contentType } = multipartBody(runs.slice(i, i + LANGSMITH_BATCH));
      lsBytes = Math.max(lsBytes, body.length);
      lsRequests.push({
        body,
        headers: { 'content-type': contentType, 'content-encoding': 'gzip', 'x-api-key': ls.key },
      });
    }
    let lsAnsweredMs = 0;
    const lsMs = await time(async () => {
      const t0 = performance.now();
      await send(`${origin}${LANGSMITH_PREFIX}/runs/multipart`, lsRequests, (s, text) => {
        return s === 202 && (JSON.parse(text) as { rejected: unknown[] }).rejected.length === 0;
      });
      lsAnsweredMs = performance.now() - t0;
      await settleAll(ctx, ls.projectId, lsNative.length);
    });
    samples.langsmith.runs_per_s.push((runs.length / lsMs) * 1000);
    samples.langsmith.answered_runs_per_s.push((runs.length / lsAnsweredMs) * 1000);
    console.log(
      `protocols round ${round + 1}: langfuse ${Math.round(samples.langfuse.events_per_s.at(-1)!)} events/s ` +
        `(answered ${Math.round(samples.langfuse.answered_events_per_s.at(-1)!)}), native ${Math.round(samples.langfuse.native_spans_per_s.at(-1)!)} spans/s; ` +
        `langsmith ${Math.round(samples.langsmith.runs_per_s.at(-1)!)} runs/s (answered ${Math.round(samples.langsmith.answered_runs_per_s.at(-1)!)}), ` +
        `native ${Math.round(samples.langsmith.native_spans_per_s.at(-1)!)} spans/s`,
    );
  }

  const m = (xs: number[]) => median(xs);
  const per = (n: number, unit: string) => `${Math.round(n).toLocaleString()} ${unit}`;
  const rounds = options.rounds > 1 ? `, median of ${options.rounds}` : '';
  const lfRate = m(samples.langfuse.events_per_s);
  const lfNativeRate = m(samples.langfuse.native_spans_per_s);
  rows.push({
    work: `Langfuse ingestion: ${lfEvents.toLocaleString()} events (${lfSpans.toLocaleString()} spans), ${LANGFUSE_BATCH}/request, ${CONCURRENCY} in flight, until settled${rounds}`,
    api: per(lfRate, 'events/s'),
    reference: `${per(lfNativeRate, 'spans/s')} (POST /traces, the same spans, ${NATIVE_BATCH}/request)`,
    ratio: `${((lfRate / lfNativeRate) * 100).toFixed(0)}% of native`,
    target: `≥ ${TARGET * 100}% of native`,
  });
  rows.push({
    work: `Langfuse ingestion, until answered (pieces stored, not yet settled)`,
    api: per(m(samples.langfuse.answered_events_per_s), 'events/s'),
    reference: `largest request ${(lfBytes / 1e6).toFixed(2)} MB`,
    ratio: `${((m(samples.langfuse.answered_events_per_s) / lfNativeRate) * 100).toFixed(0)}% of native`,
    target: '',
  });
  const lsRate = m(samples.langsmith.runs_per_s);
  const lsNativeRate = m(samples.langsmith.native_spans_per_s);
  rows.push({
    work: `LangSmith /runs/multipart (gzip): ${lsRuns.toLocaleString()} runs (post + patch), ${LANGSMITH_BATCH}/request, ${CONCURRENCY} in flight, until settled${rounds}`,
    api: per(lsRate, 'runs/s'),
    reference: `${per(lsNativeRate, 'spans/s')} (POST /traces, the same spans, ${NATIVE_BATCH}/request)`,
    ratio: `${((lsRate / lsNativeRate) * 100).toFixed(0)}% of native`,
    target: `≥ ${TARGET * 100}% of native`,
  });
  rows.push({
    work: `LangSmith /runs/multipart, until answered (pieces stored, not yet settled)`,
    api: per(m(samples.langsmith.answered_runs_per_s), 'runs/s'),
    reference: `largest request ${(lsBytes / 1e6).toFixed(2)} MB gzip`,
    ratio: `${((m(samples.langsmith.answered_runs_per_s) / lsNativeRate) * 100).toFixed(0)}% of native`,
    target: '',
  });
  return {
    langfuse: {
      events: lfEvents,
      spans: lfSpans,
      events_per_s: lfRate,
      native_spans_per_s: lfNativeRate,
      ratio: lfRate / lfNativeRate,
    },
    langsmith: { runs: lsRuns, runs_per_s: lsRate, native_spans_per_s: lsNativeRate, ratio: lsRate / lsNativeRate },
    target: TARGET,
    samples,
  };
}

/** A signup's session; its `newProject` makes a project (a fresh name each) and an API key. */
export async function benchProjects(api: FastifyInstance, web: FastifyInstance) {
  const account = await benchAccount(api, web);
  return (name: string): Promise<Project> => account.project(`${name}-${crypto.randomUUID().slice(0, 8)}`);
}

/** On fresh embedded stores of its own (`dir`). */
export async function benchProtocolsAlone(dir: string, options: ProtocolBenchOptions, rows: Row[]) {
  const server = await openBenchServer(dir);
  try {
    return await benchProtocols(server.ctx, server.api, await benchProjects(server.api, server.web), options, rows);
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      'langfuse-events': { type: 'string', default: '10000' },
      'langsmith-runs': { type: 'string', default: '1000' },
      dir: { type: 'string', default: 'bench/data/protocols' },
    },
  });
  const rows: Row[] = [];
  const started = new Date().toISOString();
  const results = await benchProtocolsAlone(
    path.resolve(args.dir),
    {
      rounds: Number(args.rounds),
      langfuseEvents: Number(args['langfuse-events']),
      langsmithRuns: Number(args['langsmith-runs']),
    },
    rows,
  );
  printTable(rows);
  saveResults(
    'protocols',
    { started_at: started, loadavg: fs.readFileSync('/proc/loadavg', 'utf8').trim(), ...results, rows },
    new Date(started),
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
