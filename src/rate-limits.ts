import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from './config.js';
import { TooManyRequestsError } from './errors.js';
import { openCounterRedis } from './stores/redis.js';

/**
 * Per-identity request budgets (docs/limits.md, "Rate limits"): the user
 * for user credentials (their sessions and access tokens share one budget), the key for API keys,
 * and the client address for requests without a credential. Ingest has its own, larger budget;
 * logins are counted per address and e-mail (brute-force protection that doesn't stop an office
 * behind one address from signing up). Counters live in Redis when REDIS_URL is set, so every API
 * process draws on one budget; in memory otherwise. A 429 answers `{detail}` with Retry-After and
 * the RateLimit-* headers.
 */

type Category = 'ingest' | 'login' | 'signup' | 'api';

const UNLIMITED = /^(\/healthz|\/readyz|\/metrics|\/docs|\/api\/v1\/public\/openapi\.json)/;

function categoryOf(request: FastifyRequest): Category {
  const url = request.routeOptions.url ?? request.url;
  if (url.endsWith('/auth/login') || url === '/cli/login') return 'login';
  if (url.endsWith('/auth/signup')) return 'signup';
  if (request.method === 'POST' && (url.endsWith('/public/traces') || url.includes('/otel/v1/traces') || /\/evaluation-runs\/[^/]+\/results$/.test(url))) return 'ingest';
  return 'api';
}

function identityOf(request: FastifyRequest, category: Category): string {
  const principal = request.principal;
  if (category === 'login') {
    const email = String((request.body as { email?: unknown } | undefined)?.email ?? '').trim().toLowerCase();
    return `ip:${request.ip}:${email}`;
  }
  if (principal?.kind === 'api_key') return `key:${principal.keyId}`;
  if (principal?.kind === 'user') return `user:${principal.userId}`;
  return `ip:${request.ip}`;
}

export function registerRateLimits(app: FastifyInstance, config: Config): void {
  const limits = config.rateLimits;
  const budget: Record<Category, number> = { api: limits.perMinute, ingest: limits.ingestPerMinute, login: limits.loginPerMinute, signup: limits.signupPerMinute };
  const redis = config.redisUrl ? openCounterRedis(config.redisUrl) : undefined;
  if (redis) app.addHook('onClose', async () => void redis.disconnect());
  app.register(rateLimit, {
    global: true,
    // After authentication, so the identity is the principal the route resolved, not the raw bearer.
    hook: 'preHandler',
    timeWindow: 60_000,
    max: (request, key) => budget[key.split('|', 1)[0] as Category] ?? limits.perMinute,
    keyGenerator: (request) => {
      const category = categoryOf(request);
      return `${category}|${identityOf(request, category)}`;
    },
    allowList: (request) => UNLIMITED.test(request.url),
    redis,
    nameSpace: `${config.queuePrefix}-ratelimit:`,
    // A counter store that is down must not take the API with it: requests pass uncounted meanwhile.
    skipOnError: true,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new TooManyRequestsError(`rate limit exceeded: at most ${context.max} requests per minute for this credential; retry in ${Math.ceil(context.ttl / 1000)} s`, Math.max(1, Math.ceil(context.ttl / 1000))),
  });
}
