import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { AppContext } from '../context.js';
import { TooManyRequestsError } from '../errors.js';
import { apiKeyOf } from '../auth/principal.js';
import { openCounterRedis } from '../stores/redis.js';
import { controlsOf } from './settings.js';
import { usageMeterOf } from './usage.js';

/**
 * A project's ingest quotas (docs/producer-controls.md, "Quotas"), checked on every ingest request
 * after its key is known and before its body is read: past either quota the request is answered 429
 * with a `detail` naming the quota and a `Retry-After` until it resets. Requests per minute are
 * counted in Redis when REDIS_URL is set (every API process draws on one count; never less than the
 * process's own count, which also stands in while Redis can't be reached), in memory otherwise;
 * spans per day from the usage counters (src/controls/usage.ts), so a burst arriving on several
 * processes at once may pass the quota by what they accept in a few seconds.
 */
const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export function spansQuotaDetail(limit: number): string {
  return `the project's quota of ${limit} spans per day is used up; it resets at 00:00 UTC`;
}
export function requestsQuotaDetail(limit: number): string {
  return `the project's quota of ${limit} ingest requests per minute is used up; it resets at the next minute`;
}

class MinuteCounter {
  private readonly counts = new Map<string, number>();
  private minute = 0;
  private redis: Redis | undefined;

  constructor(redisUrl: string | undefined) {
    this.redis = redisUrl ? openCounterRedis(redisUrl) : undefined;
  }

  /**
   * This minute's count for the project, this request included: Redis's count when it answers, and
   * never less than this process's own (so a Redis that was not yet connected, or went away, still
   * leaves every request this process took counted).
   */
  async hit(projectId: string, minute: number): Promise<number> {
    const key = `sightline:quota:rpm:${projectId}:${minute}`;
    if (minute !== this.minute) {
      // A new minute: the last one's counts are done with.
      this.counts.clear();
      this.minute = minute;
    }
    const local = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, local);
    if (!this.redis) return local;
    try {
      const [[, shared]] = (await this.redis
        .multi()
        .incr(key)
        .pexpire(key, 2 * MINUTE_MS)
        .exec()) as [[unknown, number]];
      return Math.max(local, shared);
    } catch {
      // Redis unreachable: this process's count alone.
      return local;
    }
  }

  close(): void {
    this.redis?.disconnect();
  }
}

const counters = new WeakMap<AppContext, MinuteCounter>();

function counterOf(ctx: AppContext): MinuteCounter {
  let counter = counters.get(ctx);
  if (!counter) counters.set(ctx, (counter = new MinuteCounter(ctx.config.redisUrl)));
  return counter;
}

/** Closes the quota counter's Redis connection (the app's onClose). */
export function closeQuotaCounter(ctx: AppContext): void {
  counters.get(ctx)?.close();
  counters.delete(ctx);
}

/** The onRequest hook of every ingest route, after `authenticate(ctx, 'api_key')`. */
export function checkIngestQuotas(ctx: AppContext) {
  return async function quotas(request: FastifyRequest): Promise<void> {
    const projectId = apiKeyOf(request).projectId;
    const { quotas } = await controlsOf(ctx).of(projectId);
    const meter = usageMeterOf(ctx);
    const declared = Number(request.headers['content-length']);
    const now = Date.now();
    if (quotas.ingest_requests_per_minute !== undefined) {
      const minute = Math.floor(now / MINUTE_MS);
      const n = await counterOf(ctx).hit(projectId, minute);
      if (n > quotas.ingest_requests_per_minute)
        throw new TooManyRequestsError(
          requestsQuotaDetail(quotas.ingest_requests_per_minute),
          Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - now) / 1000)),
        );
    }
    if (quotas.spans_per_day !== undefined && (await meter.spansToday(projectId)) >= quotas.spans_per_day)
      throw new TooManyRequestsError(
        spansQuotaDetail(quotas.spans_per_day),
        Math.max(1, Math.ceil((Math.floor(now / DAY_MS + 1) * DAY_MS - now) / 1000)),
      );
    meter.add(projectId, { requests: 1, bytes: Number.isFinite(declared) && declared > 0 ? declared : 0 });
  };
}
