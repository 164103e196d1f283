import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { UnauthorizedError } from '../errors.js';
import type { SpanWriter } from '../traces/span-writer.js';
import { sampledOutCounter } from '../controls/sampling.js';

/**
 * `/metrics` in Prometheus text format: process metrics and one request histogram labelled by
 * route pattern (never the raw URL, so ids and query strings don't explode the label set). Given the
 * process's span writer, the ingest queue too (docs/operations.md, "What to alert on"): its depth in
 * spans, bytes and requests, requests refused or dropped by reason, and commit and acknowledgement
 * latency. Given a reader of it, the text indexer's lag (src/traces/text-index.ts).
 *
 * Open by default on the api port, as Prometheus scrapers expect (the labels are route patterns and
 * status codes: no tenant's ids or data). With METRICS_TOKEN set it answers only
 * `Authorization: Bearer <token>`, compared in constant time, for deployments whose api port is
 * reachable from outside (docs/running.md, "Configuration"; docs/limits.md).
 */
export function registerMetrics(
  app: FastifyInstance,
  service: string,
  options: { token?: string; spanWriter?: SpanWriter; textIndexLagSeconds?: () => Promise<number | null> } = {},
): void {
  const { token, spanWriter, textIndexLagSeconds } = options;
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Histogram({
    name: 'sightline_http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    requests.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  if (spanWriter) {
    registerIngestMetrics(app, registry, spanWriter);
    // Spans sampled out at ingest (docs/producer-controls.md): per process, no tenant label.
    registry.registerMetric(sampledOutCounter);
  }
  if (textIndexLagSeconds) {
    new Gauge({
      name: 'sightline_text_index_lag_seconds',
      help: "Seconds from now back to the text indexer's watermark: spans stored since are found by a scan, not the index",
      registers: [registry],
      async collect() {
        // NaN (unknown, rather than a reassuring 0) before the first pass, or when the engine can't answer.
        const lag = await textIndexLagSeconds().catch(() => null);
        this.set(lag ?? Number.NaN);
      },
    });
  }
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && !bearerMatches(request, token))
      throw new UnauthorizedError('/metrics needs Authorization: Bearer <METRICS_TOKEN>');
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}

/** The request's bearer token equals `token`: compared as digests, so neither length nor content leaks by timing. */
function bearerMatches(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization;
  const given = typeof header === 'string' && /^Bearer /i.test(header) ? header.slice(7).trim() : '';
  const digest = (v: string) => crypto.createHash('sha256').update(v, 'utf8').digest();
  return crypto.timingSafeEqual(digest(given), digest(token));
}

function registerIngestMetrics(app: FastifyInstance, registry: Registry, writer: SpanWriter): void {
  const depth = (name: string, help: string, read: (d: ReturnType<SpanWriter['depth']>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(writer.depth()));
      },
    });
  depth('sightline_ingest_queue_spans', 'Spans handed to the span writer and not yet stored', (d) => d.spans);
  depth('sightline_ingest_queue_bytes', 'Body bytes of admitted ingest requests not yet answered', (d) => d.bytes);
  depth('sightline_ingest_queue_requests', 'Ingest requests admitted and not yet answered', (d) => d.requests);
  const refused = new Counter({
    name: 'sightline_ingest_refused_total',
    help: 'Ingest requests refused before storing (queue_full: 429; store_down, stopping: 503) or dropped (client_gone)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['queue_full', 'store_down', 'stopping', 'client_gone']) refused.inc({ reason }, 0);
  const commits = new Histogram({
    name: 'sightline_ingest_insert_duration_seconds',
    help: 'Duration of one group commit (existence check and insert into ClickHouse)',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const stored = new Counter({
    name: 'sightline_ingest_spans_committed_total',
    help: 'Spans in successful group commits',
    registers: [registry],
  });
  const acknowledged = new Histogram({
    name: 'sightline_ingest_ack_duration_seconds',
    help: "Time from a request's spans entering the queue to their acknowledgement",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const stop = writer.observe({
    refused: (reason) => refused.inc({ reason }),
    committed: (seconds, spans) => {
      commits.observe(seconds);
      stored.inc(spans);
    },
    acknowledged: (seconds) => acknowledged.observe(seconds),
  });
  app.addHook('onClose', async () => stop());
}
