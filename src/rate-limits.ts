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
 * behind one address from signing up), and besides per address across e-mails and per e-mail across
 * addresses (issue 20: a new e-mail per attempt must not buy a new budget; each attempt costs a
 * memory-hard hash). Counters live in Redis when REDIS_URL is set, so every API
 * process draws on one budget; in memory otherwise. A 429 answers `{detail}` with Retry-After and
 * the RateLimit-* headers.
 */

type Category = 'ingest' | 'login' | 'signup' | 'api';

const UNLIMITED = /^(\/healthz|\/readyz|\/metrics|\/docs|\/api\/v1\/public\/openapi\.json)/;

function categoryOf(request: FastifyRequest): Category {
  const url = request.routeOptions.url ?? request.url;
  // A password change checks the current password: the same brute-force budget as a login.
  if (url.endsWith('/auth/login') || url === '/cli/login' || url.endsWith('/auth/password')) return 'login';
  if (url.endsWith('/auth/signup')) return 'signup';
  // The LangSmith SDK's run posts, patches and feedback (src/protocols/langsmith/routes.ts).
  if (request.method !== 'GET' && url.startsWith('/api/v1/langsmith/')) return 'ingest';
  if (
    request.method === 'POST' &&
    (url.endsWith('/public/traces') ||
      url.includes('/otel/v1/traces') ||
      url === '/api/public/ingestion' ||
      /\/evaluation-runs\/[^/]+\/results$/.test(url))
  )
    return 'ingest';
  return 'api';
}

function identityOf(request: FastifyRequest, category: Category): string {
  const principal = request.principal;
  if (category === 'login') {
    const email = String((request.body as { email?: unknown } | undefined)?.email ?? '')
      .trim()
      .toLowerCase();
    return `ip:${request.ip}:${email}`;
  }
  if (principal?.kind === 'api_key') return `key:${principal.keyId}`;
  if (principal?.kind === 'user') return `user:${principal.userId}`;
  return `ip:${request.ip}`;
}

/**
 * Failed logins from one address, whatever the e-mails (120 a minute by default): an office's worth
 * of mistyped passwords, yet at most two guesses a second for an attacker behind that address.
 */
export function loginsPerAddress(config: Config): number {
  return config.rateLimits.loginPerMinute * 4;
}

/** Failed logins for one e-mail, whatever the addresses: the per-address-and-e-mail budget again. */
export function loginsPerEmail(config: Config): number {
  return config.rateLimits.loginPerMinute;
}

function loginEmail(request: FastifyRequest): string {
  return String((request.body as { email?: unknown } | undefined)?.email ?? '')
    .trim()
    .toLowerCase();
}

export function registerRateLimits(app: FastifyInstance, config: Config): void {
  const limits = config.rateLimits;
  const budget: Record<Category, number> = {
    api: limits.perMinute,
    ingest: limits.ingestPerMinute,
    login: limits.loginPerMinute,
    signup: limits.signupPerMinute,
  };
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
      new TooManyRequestsError(
        `rate limit exceeded: at most ${context.max} requests per minute for this credential; retry in ${Math.ceil(context.ttl / 1000)} s`,
        Math.max(1, Math.ceil(context.ttl / 1000)),
      ),
  });
  app.after(() => registerLoginBudgets(app, config));
}

type Limit = { remaining: number; max: number; ttl: number };
type Limiter = (request: FastifyRequest, options?: { increment: boolean }) => Promise<Limit>;

/**
 * The two cross budgets of logins, on the same counter store as the rest (Redis when configured).
 * They count failed attempts (a 401, or a 403 for a wrong current password), which is what guessing
 * is made of: a colleague's successful login never uses up an office's budget. An attempt is refused
 * before its password is hashed once either budget is spent.
 */
function registerLoginBudgets(app: FastifyInstance, config: Config): void {
  const create = (app as unknown as { createRateLimit: (options: object) => Limiter }).createRateLimit;
  const perAddress = create({
    max: loginsPerAddress(config),
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `login-address|${request.ip}`,
  });
  const perEmail = create({
    max: loginsPerEmail(config),
    timeWindow: 60_000,
    keyGenerator: (request: FastifyRequest) => `login-email|${loginEmail(request)}`,
  });
  const budgets = (request: FastifyRequest): [Limiter, string][] => {
    const out: [Limiter, string][] = [[perAddress, 'from this address, whatever the e-mail']];
    if (loginEmail(request) !== '') out.push([perEmail, 'to this e-mail, whatever the address']);
    return out;
  };
  const isLogin = (request: FastifyRequest) => request.method === 'POST' && categoryOf(request) === 'login';

  app.addHook('preHandler', async (request, reply) => {
    if (!isLogin(request)) return;
    for (const [limiter, scope] of budgets(request)) {
      // A counter store that is down lets the attempt through uncounted, as the global budget does.
      const state = await limiter(request, { increment: false }).catch(() => null);
      if (!state || state.remaining > 0) continue;
      const retry = Math.max(1, Math.ceil(state.ttl / 1000));
      void reply.header('ratelimit-limit', state.max).header('ratelimit-remaining', 0).header('ratelimit-reset', retry);
      throw new TooManyRequestsError(
        `rate limit exceeded: at most ${state.max} requests per minute for failed logins ${scope}; retry in ${retry} s`,
        retry,
      );
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    if (!isLogin(request) || (reply.statusCode !== 401 && reply.statusCode !== 403)) return;
    await Promise.all(budgets(request).map(([limiter]) => limiter(request).catch(() => null)));
  });
}
