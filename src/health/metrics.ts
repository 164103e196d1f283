import crypto from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { UnauthorizedError } from '../errors.js';

/**
 * `/metrics` in Prometheus text format: process metrics and one request histogram labelled by
 * route pattern (never the raw URL, so ids and query strings don't explode the label set).
 *
 * Open by default on the api port, as Prometheus scrapers expect (the labels are route patterns and
 * status codes: no tenant's ids or data). With METRICS_TOKEN set it answers only
 * `Authorization: Bearer <token>`, compared in constant time, for deployments whose api port is
 * reachable from outside (README, "Configuration"; docs/limits.md).
 */
export function registerMetrics(app: FastifyInstance, service: string, token?: string): void {
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
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && !bearerMatches(request, token)) throw new UnauthorizedError('/metrics needs Authorization: Bearer <METRICS_TOKEN>');
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
