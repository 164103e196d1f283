import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from '@fastify/cors';
import helmet, { type HelmetOptions } from 'helmet';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';

/** The API's helmet options: JSON needs no content security policy; `/docs` brings its own. */
const API_HELMET: HelmetOptions = { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } };

/**
 * The headers helmet sets for `options`, found by running helmet's own middleware once against a
 * response that records them. Every header of these options is the same for every request (no CSP
 * nonce), so they are worked out at start; @fastify/helmet built helmet's middleware again for each
 * request and set each header through Node's checks, a tenth of what a prompt fetch allocated.
 */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return headers;
}

/**
 * Security headers (helmet's, worked out once: helmetHeaders) and CORS (@fastify/cors) of the api
 * origin. The API answers JSON to bearer credentials, so browsers may call it from an explicit allow
 * list only: the web app's own origin (WEB_URL) and CORS_ORIGINS; no cookies ride along
 * (credentials: false).
 */
export function registerApiSecurityHeaders(app: FastifyInstance, config: Config): void {
  const headers = helmetHeaders(API_HELMET);
  app.addHook('onRequest', (_request, reply, done) => {
    void reply.headers(headers);
    done();
  });
  const allowed = new Set([new URL(config.webUrl).origin, ...config.corsOrigins]);
  app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'content-encoding', 'idempotency-key'],
    exposedHeaders: ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'idempotent-replayed'],
    credentials: false,
    maxAge: 600,
  });
}
