import cors from '@fastify/cors';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.js';

/**
 * Security headers (@fastify/helmet) and CORS (@fastify/cors) of the api origin. The API answers
 * JSON to bearer credentials, so browsers may call it from an explicit allow list only: the web
 * app's own origin (WEB_URL) and CORS_ORIGINS; no cookies ride along (credentials: false). JSON needs
 * no content security policy; `/docs` brings its own.
 */
export function registerApiSecurityHeaders(app: FastifyInstance, config: Config): void {
  app.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } });
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
