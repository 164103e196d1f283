import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Worker } from 'bullmq';
import type { Runtime } from '../src/runtime.js';
import { generateSpans } from '../src/demo/generate-spans.js';
import { runTick } from '../src/alerts/evaluation.js';
import { catchUpSeal } from '../src/rollups/seal.js';
import { closedWindowEnd, LATENESS_MS, MINUTE_MS } from '../src/alerts/clock.js';
import { startAlertWorkers } from '../workers/alerts.js';
import { median, percentile, type Row } from './measure.js';

/**
 * Alert rows of the benchmark (issue 10, "Bench"): 1,000 active alerts over 50 projects (the data
 * set's projects and new ones, each given two hours of recent spans) evaluated in one tick, seconds
 * per tick (target under 60 s on 2 cores, aiming at under 10 s); and notification latency, from the
 * moment a tick fires to the webhook arriving at a local receiver, through the real workers (the
 * tick fires LATENESS_MS after the window ends, by design; the row adds it back).
 *
 * The alerts mix windows, measures, filters (rollup dimensions and raw-span ones) and a few
 * per-group alerts, so queries are shared the way a real catalog shares them, not all in one.
 */

export type AlertBenchAccount = { email: string; password: string; projectIds: string[]; keys: string[] };

const WINDOWS = ['1m', '5m', '10m', '30m', '1h', '2h'];
const MEASURES: [string, string][] = [
  ['count', 'count'],
  ['latency', 'p95'],
  ['cost', 'sum'],
  ['error_rate', 'avg'],
  ['total_tokens', 'sum'],
  ['user_id', 'uniq'],
  ['cost', 'max'],
];
const FILTERS: Record<string, unknown>[][] = [
  [],
  [{ field: 'model_name', value: 'gpt-4o' }],
  [{ field: 'environment', op: '=', value: 'production' }],
  [{ field: 'span_kind', op: 'in', value: ['llm'] }],
  [{ field: 'metadata.region', op: '=', value: 'eu-west-1' }],
  [{ field: 'cost', op: '>', value: 0.001 }],
];

async function inject(app: FastifyInstance, method: 'GET' | 'POST', url: string, token?: string, payload?: unknown) {
  const res = await app.inject({
    method,
    url,
    payload: payload as never,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  return res.json();
}

/** The i-th alert of a project: about half breach at once (threshold 0), the rest never. */
function alertBody(projectId: string, i: number, webhookUrl: string) {
  const [measure, aggregation] = MEASURES[i % MEASURES.length]!;
  const breaching = i % 2 === 0;
  return {
    name: `bench ${i}`,
    project_id: projectId,
    view: 'SPANS',
    measure,
    aggregation,
    threshold: breaching ? -1 : 1e12,
    window: WINDOWS[i % WINDOWS.length],
    filters: FILTERS[Math.floor(i / 2) % FILTERS.length],
    ...(i % 10 === 9 ? { group_by: 'model_name' } : {}),
    no_data_mode: 'HOLD',
    renotify: { interval_minutes: 60 },
    notify: { webhook_url: webhookUrl },
  };
}

export async function benchAlerts(
  ctx: Runtime,
  api: FastifyInstance,
  web: FastifyInstance,
  account: AlertBenchAccount,
  rows: Row[],
  options = { alerts: 1000, projects: 50 },
) {
  const received: number[] = [];
  const receiver = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(Date.now());
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  const login = await inject(web, 'POST', '/api/auth/login', undefined, {
    email: account.email,
    password: account.password,
  });
  const token = login.session_token as string;
  const workspaceId = (await inject(api, 'GET', '/api/v1/public/workspaces', token)).data[0].id as string;

  // 50 projects: the data set's, then new ones; each gets two hours of recent spans.
  const projects = account.projectIds.slice(0, options.projects).map((id, i) => ({ id, key: account.keys[i]! }));
  const stamp = Date.now();
  for (let i = projects.length; i < options.projects; i++) {
    const p = await inject(api, 'POST', '/api/v1/public/projects', token, {
      name: `alerts-bench-${stamp}-${i}`,
      workspace_id: workspaceId,
    });
    projects.push({
      id: p.id,
      key: (await inject(api, 'POST', `/api/v1/public/projects/${p.id}/api-keys`, token, { name: 'bench' })).key,
    });
  }
  const now = Date.now();
  for (const [i, p] of projects.entries()) {
    const spans = generateSpans({
      traces: 60,
      startMs: now - 2 * 3_600_000,
      endMs: now - 60_000,
      seed: 1000 + i,
      errorShare: 0.1,
    });
    await inject(api, 'POST', '/api/v1/public/traces', p.key, { spans });
  }
  // Sealed as a running sealer would have by now (src/rollups/seal.ts): the ticks read sealed rollups.
  await catchUpSeal(ctx, { lagMs: 0 });
  const perProject = Math.ceil(options.alerts / projects.length);
  let created = 0;
  for (const p of projects) {
    for (let i = 0; i < perProject && created < options.alerts; i++, created++)
      await inject(api, 'POST', '/api/v1/public/alerts', token, alertBody(p.id, i, hookUrl));
  }
  const projectIds = projects.map((p) => p.id);

  // Seconds per tick: three consecutive closed windows, every alert each time. The first also sends
  // the webhooks of the alerts that breach at once, through the real workers: their latency is taken
  // before the next tick starts.
  const workers = startAlertWorkers(ctx, { schedule: false }) as Worker[];
  const lastWindow = closedWindowEnd(Date.now());
  const ticks: { seconds: number; queries: number; committed: number; notifications: number }[] = [];
  let latencies: number[] = [];
  for (const windowEndMs of [lastWindow - 2 * MINUTE_MS, lastWindow - MINUTE_MS, lastWindow]) {
    const firedAt = Date.now();
    const start = performance.now();
    const report = await runTick(ctx, { token: `bench-${windowEndMs}`, windowEndMs, projectIds });
    ticks.push({
      seconds: (performance.now() - start) / 1000,
      queries: report.queries,
      committed: report.committed,
      notifications: report.notifications,
    });
    if (ticks.length > 1) continue;
    for (let i = 0; i < 1200 && received.length < report.notifications; i++)
      await new Promise((r) => setTimeout(r, 50));
    latencies = received.map((t) => t - firedAt);
  }
  await Promise.all(workers.map((w) => w.close()));
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  const expected = ticks[0]!.notifications;

  const seconds = ticks.map((t) => t.seconds);
  const p50 = median(latencies);
  rows.push({
    work: `alert tick: ${created.toLocaleString()} alerts over ${projects.length} projects (${ticks[0]!.queries} queries)`,
    api: `${median(seconds).toFixed(2)} s per tick (${seconds.map((s) => s.toFixed(2)).join(', ')})`,
    reference: '',
    ratio: '',
    target: '< 60 s, aim < 10 s',
  });
  rows.push({
    work: `alert webhooks: ${latencies.length} of ${expected} sent by one tick, tick fired → received`,
    api: `p50 ${(p50 / 1000).toFixed(2)} s, p95 ${(percentile(latencies, 95) / 1000).toFixed(2)} s`,
    reference: `window end → received: p50 ${((p50 + LATENESS_MS) / 1000).toFixed(1)} s`,
    ratio: '',
    target: '',
  });
  return {
    alerts: created,
    projects: projects.length,
    ticks,
    notifications: {
      expected,
      received: latencies.length,
      p50_ms: p50,
      p95_ms: percentile(latencies, 95),
      window_end_p50_ms: p50 + LATENESS_MS,
    },
  };
}
