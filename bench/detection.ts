import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime.js';
import { runDetectionTick, runPass } from '../src/signals/detection.js';
import { detectorState } from '../src/signals/detector-state.js';
import { DETECTION_QUEUE, DETECTION_SCHEDULER_ID } from '../src/signals/schedule.js';
import { startDetectionWorkers } from '../workers/detection.js';
import { median, percentile, time, type Row } from './measure.js';

/**
 * Detection rows of the benchmark (issue 11):
 * - one detection pass over the data set: an error detector that has never run, over the first
 *   project's whole history (every span was stored after it was created), and the catch-up of the
 *   whole backlog, pass after pass;
 * - detection latency: with every detector caught up and the worker running as `npm start` runs it
 *   (a tick every 2 s from the job scheduler), a failing trace is ingested through the API and the
 *   time until its signal is listed by GET /signals is measured, `samples` times (target: p95 ≤ 10 s).
 */

type Inject = (
  method: 'GET' | 'POST',
  url: string,
  token: string,
  payload?: unknown,
) => Promise<{ status: number; body: unknown }>;

export async function benchDetection(
  ctx: Runtime,
  api: FastifyInstance,
  session: { token: string; projectId: string; key: string },
  samples: number,
  rows: Row[],
) {
  const inject: Inject = async (method, url, token, payload) => {
    const res = await api.inject({
      method,
      url,
      payload: payload as never,
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return { status: res.statusCode, body: res.json() };
  };
  const out: Record<string, unknown> = {};

  // A new error detector reaching back over the whole data set (a fresh one per run, so --keep measures the same work).
  const created = (
    await inject('POST', '/api/v1/public/detectors', session.token, {
      project_id: session.projectId,
      name: `bench errors ${Date.now()}`,
      type: 'error',
      config: {},
    })
  ).body as { id: string };
  // A day after the epoch, not the epoch: the pass's lower bound goes to the engine as seconds, and
  // ClickHouse 26 refuses a DateTime64 parameter of `0` (src/signals/detection-queries.ts).
  await ctx.pg.pool.query("UPDATE detectors SET scan_from = '1970-01-02T00:00:00Z' WHERE id = $1", [created.id]);
  let state = await detectorState(ctx, created.id);
  let firstFindings = 0;
  const first = await time(async () => {
    firstFindings = (await runPass(ctx, state)).findings;
  });
  let findings = firstFindings;
  let passes = 1;
  const catchUp = await time(async () => {
    for (;;) {
      state = await detectorState(ctx, created.id);
      const pass = await runPass(ctx, state);
      if (pass.findings === 0) break;
      findings += pass.findings;
      passes++;
    }
  });
  const spans = (
    await inject('POST', '/api/v1/public/sql', session.key, {
      query: "SELECT count() AS spans, countIf(status = 'error' AND evaluation_run_id = '') AS errors FROM spans",
    })
  ).body as { rows: number[][] };
  const [spanCount, errorCount] = spans.rows[0]!;
  rows.push({
    work: `detection: first pass of a new error detector over one project (${Number(spanCount).toLocaleString()} spans)`,
    api: `${first.toFixed(0)} ms for ${firstFindings.toLocaleString()} findings`,
    reference: `backlog of ${Number(errorCount).toLocaleString()} error spans: ${passes} passes, ${(first + catchUp).toFixed(0)} ms`,
    ratio: '',
    target: 'one query per pass',
  });
  out.first_pass = {
    ms: first,
    first_findings: firstFindings,
    project_spans: Number(spanCount),
    error_spans: Number(errorCount),
    findings,
    passes,
    backlog_ms: first + catchUp,
  };
  // Switched off, not deleted: its signals stay for a look after the run.
  await ctx.pg.pool.query('UPDATE detectors SET enabled = false WHERE id = $1', [created.id]);

  // Every other detector caught up before the latency is measured: the steady state a running worker keeps.
  let ticks = 0;
  const settle = await time(async () => {
    for (;;) {
      ticks++;
      const tick = await runDetectionTick(ctx);
      if (tick.passes.every((p) => p.findings === 0) && tick.rcaAnswered === 0) break;
    }
  });
  rows.push({
    work: 'detection: catch-up of every project before the latency runs',
    api: `${ticks} ticks, ${(settle / 1000).toFixed(1)} s`,
    reference: '',
    ratio: '',
    target: '',
  });

  const workers = startDetectionWorkers(ctx) as Worker[];
  const latencies: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const tag = crypto.randomBytes(4).toString('hex');
      const now = Date.now();
      const trace = `bench-${tag}`;
      const spansOf = [
        {
          trace_id: trace,
          span_id: 'root',
          name: 'agent.run',
          kind: 'agent',
          start_time: new Date(now - 1000).toISOString(),
          end_time: new Date(now).toISOString(),
          status: 'ok',
        },
        {
          trace_id: trace,
          span_id: 'tool',
          parent_span_id: 'root',
          name: 'tool.search',
          kind: 'tool',
          start_time: new Date(now - 900).toISOString(),
          end_time: new Date(now - 100).toISOString(),
          status: 'error',
          error_type: `BenchError${tag}`,
        },
      ];
      const started = performance.now();
      await inject('POST', '/api/v1/public/traces', session.key, { spans: spansOf });
      const title = `BenchError${tag} in tool.search`;
      for (;;) {
        const list = (await inject('GET', '/api/v1/public/signals?limit=5', session.key)).body as {
          data: { title: string }[];
        };
        if (list.data.some((s) => s.title === title)) break;
        if (performance.now() - started > 60_000) throw new Error(`no signal '${title}' within 60 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      latencies.push(performance.now() - started);
      // Samples apart from each other and from the tick's phase.
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 1700));
    }
  } finally {
    await Promise.all(workers.map((w) => w.close()));
    await ctx.queue
      .queue(DETECTION_QUEUE)
      .removeJobScheduler(DETECTION_SCHEDULER_ID)
      .catch(() => {});
  }
  const p50 = median(latencies);
  const p95 = percentile(latencies, 95);
  rows.push({
    work: `detection latency, ingest → signal listed (${samples} failing traces)`,
    api: `p50 ${(p50 / 1000).toFixed(2)} s, p95 ${(p95 / 1000).toFixed(2)} s`,
    reference: `max ${(Math.max(...latencies) / 1000).toFixed(2)} s`,
    ratio: '',
    target: 'p95 ≤ 10 s',
  });
  out.latency = { samples, p50_ms: p50, p95_ms: p95, max_ms: Math.max(...latencies) };
  return out;
}
