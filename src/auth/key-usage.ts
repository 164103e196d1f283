import type { PostgresStore } from '../stores/postgres.js';

/**
 * `api_keys.last_used_at`, written coalesced: at most one UPDATE per key per `KEY_USAGE_INTERVAL_MS`
 * in each process, never one per request (ingest calls arrive by the thousand a second). The value is
 * therefore "used within the last few minutes", which is what Settings → API keys shows.
 */
export const KEY_USAGE_INTERVAL_MS = 5 * 60_000;

/** Per store (tests run several harnesses in one process): key id → when this process last wrote it. */
const written = new WeakMap<PostgresStore, Map<string, number>>();

export function noteKeyUsed(pg: PostgresStore, keyId: string, now = Date.now()): void {
  let seen = written.get(pg);
  if (!seen) written.set(pg, (seen = new Map()));
  const last = seen.get(keyId);
  if (last !== undefined && now - last < KEY_USAGE_INTERVAL_MS) return;
  // Bounded: a process sees few keys, but never let the map grow without end.
  if (seen.size >= 10_000) seen.clear();
  seen.set(keyId, now);
  // Off the request's path: the answer never waits on (or fails with) this bookkeeping.
  pg.pool.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]).catch(() => {
    seen.delete(keyId);
  });
}
