import { Redis } from 'ioredis';

/**
 * A Redis connection for shared counters (rate limits) when REDIS_URL is set. Commands fail fast
 * while Redis is down (no offline queue), so a caller can fall back instead of hanging.
 */
export function openCounterRedis(url: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    lazyConnect: false,
  });
  // Errors surface on the commands that fail; the connection itself retries in the background.
  redis.on('error', () => {});
  return redis;
}
