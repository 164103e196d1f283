import { z } from 'zod';
import { parseKey } from './secrets/secret-box.js';

/**
 * The whole environment of a Sightline process, parsed once at start and frozen.
 * Nothing else reads `process.env`; the parsed config is passed down explicitly.
 */
const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** An absolute http(s) URL, or unset: the origins of both apps are derived from these (CSP, CORS, links). */
const optionalUrl = (name: string) =>
  optionalString.refine((v) => {
    if (v === undefined) return true;
    try {
      const url = new URL(v);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, `${name} must be an absolute http(s) URL`);

const envSchema = z.object({
  HOST: z.string().default('localhost'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  WEB_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  BASE_URL: optionalUrl('BASE_URL'),
  WEB_URL: optionalUrl('WEB_URL'),
  DATA_DIR: z.string().default('./data'),
  CLICKHOUSE_URL: optionalString,
  CLICKHOUSE_USER: optionalString,
  CLICKHOUSE_PASSWORD: optionalString,
  CLICKHOUSE_SQL_USER: optionalString,
  CLICKHOUSE_SQL_PASSWORD: optionalString,
  // A cluster of <remote_servers> (or a macro such as {cluster}): quoted into ON CLUSTER '…' and Distributed('…').
  CLICKHOUSE_CLUSTER: optionalString.refine(
    (v) => v === undefined || /^[A-Za-z0-9_.{}-]{1,128}$/.test(v),
    'CLICKHOUSE_CLUSTER must be a cluster name',
  ),
  CORS_ORIGINS: z.string().optional(),
  TRUST_PROXY: optionalString,
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(20_000),
  RATE_LIMIT_INGEST_PER_MINUTE: z.coerce.number().int().min(1).default(60_000),
  RATE_LIMIT_LOGIN_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  RATE_LIMIT_SIGNUP_PER_MINUTE: z.coerce.number().int().min(1).default(1000),
  SQL_SESSIONS: z.coerce.number().int().min(1).max(32).default(3),
  SQL_MAX_CONCURRENT_PER_PROJECT: z.coerce.number().int().min(1).max(32).default(2),
  SQL_QUEUE_PER_PROJECT: z.coerce.number().int().min(0).max(1000).default(4),
  SQL_MAX_CONCURRENT_PER_WORKSPACE: z.coerce.number().int().min(1).max(32).default(2),
  SQL_MAX_CONCURRENT_PER_USER: z.coerce.number().int().min(1).max(32).default(2),
  SQL_TIME_LIMIT_SECONDS: z.coerce.number().int().min(1).max(300).default(10),
  METRICS_TOKEN: optionalString.refine(
    (v) => v === undefined || v.length >= 16,
    'METRICS_TOKEN must be at least 16 characters',
  ),
  CLICKHOUSE_DATABASE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .default('sightline'),
  DATABASE_URL: optionalString,
  REDIS_URL: optionalString,
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('sightline'),
  JWT_SECRET: optionalString.refine(
    (v) => v === undefined || v.length >= 32,
    'JWT_SECRET must be at least 32 characters',
  ),
  SIGNUP_ENABLED: booleanFlag(true),
  SEED_DEMO: booleanFlag(true),
  SESSION_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ALERT_WEBHOOK_ALLOW_PRIVATE: booleanFlag(false),
  ALERT_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  ALERT_WEBHOOK_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(6),
  ALERT_WEBHOOK_BACKOFF_MS: z.coerce.number().int().min(1).max(3_600_000).default(5_000),
  SECRETS_KEY: optionalString.refine(
    (v) => v === undefined || parseKey(v) !== null,
    'SECRETS_KEY must be 32 bytes written as 64 hex digits or in base64',
  ),
  SECRETS_PREVIOUS_KEYS: optionalString.refine(
    (v) => v === undefined || v.split(',').every((k) => parseKey(k) !== null),
    'SECRETS_PREVIOUS_KEYS must be comma-separated 32-byte keys in hex or base64',
  ),
  LLM_CONNECTION_ALLOW_PRIVATE: booleanFlag(false),
  LLM_CONNECTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(60_000),
  EVALUATOR_CONCURRENCY_PER_PROJECT: z.coerce.number().int().min(1).max(1_000).default(4),
  EVALUATOR_DAILY_CALLS_PER_PROJECT: z.coerce.number().int().min(0).max(100_000_000).default(10_000),
  EVALUATOR_RETRY_BACKOFF_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
  SAMPLING_DECISION_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  ANNOTATION_HOLD_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  EXPORT_ALLOW_PRIVATE: booleanFlag(false),
  EXPORT_PART_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(100_000),
  EXPORT_MAX_ROWS: z.coerce.number().int().min(1).default(100_000_000),
  EXPORT_CONCURRENT_PER_PROJECT: z.coerce.number().int().min(1).max(100).default(2),
  EXPORT_LEASE_SECONDS: z.coerce.number().int().min(5).max(3_600).default(120),
  IDEMPOTENCY_TEST_CRASH: z.enum(['before_commit', 'after_commit']).optional(),
  INGEST_QUEUE_MAX_SPANS: z.coerce.number().int().min(1).default(30_000),
  INGEST_QUEUE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .default(32 * 1024 * 1024),
  STOP_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(9_000),
  LIVENESS_MAX_BLOCK_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  LOOP_STALL_EXIT_MS: z.coerce.number().int().min(0).max(3_600_000).default(120_000),
});

export type Config = Readonly<{
  host: string;
  port: number;
  webPort: number;
  baseUrl: string;
  webUrl: string;
  dataDir: string;
  /**
   * `sqlUser`: a read-only ClickHouse user that public SQL runs as on a server (README, "Public SQL").
   * `cluster`: run the clustered migrations (replicated local tables, Distributed tables under the usual
   * names) on that cluster of the server (docs/scaling.md); unset, the single-node schema.
   */
  clickhouse: Readonly<{
    url?: string;
    user?: string;
    password?: string;
    database: string;
    sqlUser?: string;
    sqlPassword?: string;
    cluster?: string;
  }>;
  /**
   * Public SQL's share of the engine (src/sql/scheduler.ts): `sessions` embedded engine sessions run
   * side by side; a project runs at most `perProject` queries at once, `queuePerProject` more wait;
   * a workspace at most `perWorkspace`, a user (or the user who made the key or detector) `perUser`.
   * `timeLimitSeconds`: a query's deadline, enforced by the application too (src/sql/deadline.ts).
   */
  sql: Readonly<{
    sessions: number;
    perProject: number;
    queuePerProject: number;
    perWorkspace: number;
    perUser: number;
    timeLimitSeconds: number;
  }>;
  /** METRICS_TOKEN: when set, `/metrics` answers only `Authorization: Bearer <token>` (docs/limits.md). */
  metricsToken?: string;
  /** Origins besides WEB_URL's whose pages may call the API from a browser (CORS_ORIGINS, comma-separated). */
  corsOrigins: readonly string[];
  /**
   * Which hops' `X-Forwarded-For`/`X-Forwarded-Proto` to believe (TRUST_PROXY: `true`, a hop count, or
   * comma-separated addresses/CIDRs; unset: none): behind a TLS-terminating proxy this is what makes
   * `request.protocol` https (Secure session cookie) and `request.ip` the client's (rate limits).
   */
  trustProxy: boolean | number | readonly string[];
  /** Requests per minute per identity (src/rate-limits.ts): reads and writes, ingest, logins per address and e-mail, sign-ups per address. */
  rateLimits: Readonly<{ perMinute: number; ingestPerMinute: number; loginPerMinute: number; signupPerMinute: number }>;
  databaseUrl?: string;
  redisUrl?: string;
  queuePrefix: string;
  jwtSecret?: string;
  signupEnabled: boolean;
  seedDemo: boolean;
  sessionTtlDays: number;
  logLevel: string;
  /**
   * Alert webhooks: loopback/private targets refused unless `webhookAllowPrivate`; each attempt times
   * out after `webhookTimeoutMs`; up to `webhookAttempts` attempts, `webhookBackoffMs` doubling between.
   */
  alerts: Readonly<{
    webhookAllowPrivate: boolean;
    webhookTimeoutMs: number;
    webhookAttempts: number;
    webhookBackoffMs: number;
  }>;
  /**
   * Secrets at rest (src/secrets/secret-box.ts, docs/operations.md): `key` seals new values, `previousKeys`
   * still open older ones; without `key`, a key generated once into DATA_DIR/secrets.key.
   */
  secrets: Readonly<{ key?: string; previousKeys: readonly string[] }>;
  /**
   * LLM connections (docs/evaluators.md): provider base URLs on loopback/private addresses are refused
   * unless `allowPrivate`; each provider call must answer within `timeoutMs`.
   */
  llmConnections: Readonly<{ allowPrivate: boolean; timeoutMs: number }>;
  /** How long a reviewer's claim on an annotation queue item lasts, renewed by writes (docs/annotation.md); 0 in tests. */
  /** Sampling (quality.md §6): how long spans of a trace out by hash are held for a keep rule's match. */
  samplingDecisionWindowSeconds: number;
  annotationHoldSeconds: number;
  /**
   * Online evaluators' bounds (docs/evaluators.md, "Caps and retries"): judge calls of one project
   * in flight at once and per UTC day, and the first retry's wait (doubled each retry).
   */
  evaluators: Readonly<{ concurrencyPerProject: number; dailyCallsPerProject: number; retryBackoffMs: number }>;
  /**
   * Exports (docs/exports.md): bucket endpoints on loopback/private addresses are refused unless
   * `allowPrivate`; an export is written in parts of at most `partRows` rows (the memory bound of one
   * part on the embedded engine, which answers a query whole); at most `maxRows` rows an export and
   * `concurrentPerProject` queued or running exports a project. A run holds its export for
   * `leaseSeconds` (renewed after each part); a run that died is taken over once that has passed.
   */
  exports: Readonly<{
    allowPrivate: boolean;
    partRows: number;
    maxRows: number;
    concurrentPerProject: number;
    leaseSeconds: number;
  }>;
  /**
   * Tests only (test/faults/idempotency-crash.test.ts): the process SIGKILLs itself in a keyed create,
   * right before or right after its commit, so a test can show what a retry finds. Unset in real use.
   */
  idempotencyTestCrash?: 'before_commit' | 'after_commit';
  /**
   * The span writer's queue bounds (docs/operations.md, "Overload"): spans waiting to be stored and
   * body bytes of ingest requests in progress; past either, ingest answers 429 with Retry-After.
   */
  ingest: Readonly<{ queueMaxSpans: number; queueMaxBytes: number }>;
  /** How long a stop (SIGTERM/SIGINT) may take before the process exits anyway, non-zero (docs/operations.md). */
  stopTimeoutMs: number;
  /**
   * A blocked event loop (docs/operations.md, "A stuck process"): `maxBlockMs`, a block past which
   * `/healthz` answers 503 for a minute; `stallExitMs`, a block past which a watchdog thread ends the
   * process (0: never), since a blocked loop can't serve the SIGTERM that would stop it.
   */
  liveness: Readonly<{ maxBlockMs: number; stallExitMs: number }>;
}>;

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  if (e.CLICKHOUSE_CLUSTER && !e.CLICKHOUSE_URL) {
    throw new ConfigError(
      'invalid configuration:\n  CLICKHOUSE_CLUSTER: needs CLICKHOUSE_URL (the embedded engine is one node)',
    );
  }
  const config: Config = {
    host: e.HOST,
    port: e.PORT,
    webPort: e.WEB_PORT,
    baseUrl: stripSlash(e.BASE_URL ?? `http://localhost:${e.PORT}`),
    webUrl: stripSlash(e.WEB_URL ?? `http://localhost:${e.WEB_PORT}`),
    dataDir: e.DATA_DIR,
    clickhouse: Object.freeze({
      url: e.CLICKHOUSE_URL,
      user: e.CLICKHOUSE_USER,
      password: e.CLICKHOUSE_PASSWORD,
      database: e.CLICKHOUSE_DATABASE,
      sqlUser: e.CLICKHOUSE_SQL_USER,
      sqlPassword: e.CLICKHOUSE_SQL_PASSWORD,
      cluster: e.CLICKHOUSE_CLUSTER,
    }),
    corsOrigins: Object.freeze(parseOrigins(e.CORS_ORIGINS)),
    trustProxy: parseTrustProxy(e.TRUST_PROXY),
    rateLimits: Object.freeze({
      perMinute: e.RATE_LIMIT_PER_MINUTE,
      ingestPerMinute: e.RATE_LIMIT_INGEST_PER_MINUTE,
      loginPerMinute: e.RATE_LIMIT_LOGIN_PER_MINUTE,
      signupPerMinute: e.RATE_LIMIT_SIGNUP_PER_MINUTE,
    }),
    sql: Object.freeze({
      sessions: e.SQL_SESSIONS,
      perProject: e.SQL_MAX_CONCURRENT_PER_PROJECT,
      queuePerProject: e.SQL_QUEUE_PER_PROJECT,
      perWorkspace: e.SQL_MAX_CONCURRENT_PER_WORKSPACE,
      perUser: e.SQL_MAX_CONCURRENT_PER_USER,
      timeLimitSeconds: e.SQL_TIME_LIMIT_SECONDS,
    }),
    metricsToken: e.METRICS_TOKEN,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    jwtSecret: e.JWT_SECRET,
    signupEnabled: e.SIGNUP_ENABLED,
    seedDemo: e.SEED_DEMO,
    sessionTtlDays: e.SESSION_TTL_DAYS,
    logLevel: e.LOG_LEVEL,
    alerts: Object.freeze({
      webhookAllowPrivate: e.ALERT_WEBHOOK_ALLOW_PRIVATE,
      webhookTimeoutMs: e.ALERT_WEBHOOK_TIMEOUT_MS,
      webhookAttempts: e.ALERT_WEBHOOK_ATTEMPTS,
      webhookBackoffMs: e.ALERT_WEBHOOK_BACKOFF_MS,
    }),
    secrets: Object.freeze({
      key: e.SECRETS_KEY,
      previousKeys: Object.freeze(e.SECRETS_PREVIOUS_KEYS?.split(',').map((k) => k.trim()) ?? []),
    }),
    llmConnections: Object.freeze({
      allowPrivate: e.LLM_CONNECTION_ALLOW_PRIVATE,
      timeoutMs: e.LLM_CONNECTION_TIMEOUT_MS,
    }),
    evaluators: Object.freeze({
      concurrencyPerProject: e.EVALUATOR_CONCURRENCY_PER_PROJECT,
      dailyCallsPerProject: e.EVALUATOR_DAILY_CALLS_PER_PROJECT,
      retryBackoffMs: e.EVALUATOR_RETRY_BACKOFF_MS,
    }),
    samplingDecisionWindowSeconds: e.SAMPLING_DECISION_WINDOW_SECONDS,
    annotationHoldSeconds: e.ANNOTATION_HOLD_SECONDS,
    exports: Object.freeze({
      allowPrivate: e.EXPORT_ALLOW_PRIVATE,
      partRows: e.EXPORT_PART_ROWS,
      maxRows: e.EXPORT_MAX_ROWS,
      concurrentPerProject: e.EXPORT_CONCURRENT_PER_PROJECT,
      leaseSeconds: e.EXPORT_LEASE_SECONDS,
    }),
    idempotencyTestCrash: e.IDEMPOTENCY_TEST_CRASH,
    ingest: Object.freeze({ queueMaxSpans: e.INGEST_QUEUE_MAX_SPANS, queueMaxBytes: e.INGEST_QUEUE_MAX_BYTES }),
    stopTimeoutMs: e.STOP_TIMEOUT_MS,
    liveness: Object.freeze({ maxBlockMs: e.LIVENESS_MAX_BLOCK_MS, stallExitMs: e.LOOP_STALL_EXIT_MS }),
  };
  return Object.freeze(config);
}

/** `true`/`false`, a hop count, or a list of proxy addresses (Fastify's `trustProxy` forms). */
function parseTrustProxy(raw: string | undefined): boolean | number | readonly string[] {
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return Object.freeze(
    raw
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
  );
}

/** `https://a.example, http://localhost:5173` → their origins; anything not an http(s) URL is a config error. */
function parseOrigins(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  return raw.split(',').map((item) => {
    const text = item.trim();
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new ConfigError(`invalid configuration:\n  CORS_ORIGINS: ${JSON.stringify(text)} is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConfigError(`invalid configuration:\n  CORS_ORIGINS: ${text} is not http(s)`);
    return url.origin;
  });
}

function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
