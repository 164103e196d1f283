import type { PostgresStore } from '../stores/postgres.js';
import { KeptAnswers } from '../kept-answers.js';

/**
 * Verified API keys, kept briefly so that a key's requests don't each cost a Postgres statement (an
 * SDK fetches a prompt before every call, hundreds a second). Only on embedded Postgres: there the
 * statement runs on this process's event loop (PGlite), and this process is the only one on its data
 * directory, so every revoke, project update or delete and workspace delete passes through it and
 * drops the keys it touches at once (`forgetVerifiedKeys`, called after the write commits). A Postgres server
 * is shared by several processes and answers off the event loop: there every request looks its key
 * up, as before, so a revoke in one process stops the key in all of them at once.
 *
 * An entry never outlives the key's `expires_at`, and lasts `VERIFIED_KEY_TTL_MS` at most: the bound
 * for a write that bypasses the API (SQL by hand). Keyed by the key's SHA-256, as stored; refusals
 * are never kept, so a new key works at once.
 */
export const VERIFIED_KEY_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** What a forget matches on (an API key's principal, src/auth/principal.ts, which calls this module). */
type Key = { keyId: string; projectId: string; workspaceId: string };

/** Per store (tests run several harnesses in one process). */
const caches = new WeakMap<PostgresStore, KeptAnswers<Key>>();

function cacheOf(pg: PostgresStore): KeptAnswers<Key> {
  let cache = caches.get(pg);
  if (!cache) caches.set(pg, (cache = new KeptAnswers<Key>({ ttlMs: VERIFIED_KEY_TTL_MS, maxEntries: MAX_ENTRIES })));
  return cache;
}

/**
 * The principal of a key hash, from the cache while fresh, else from `load` (undefined: refused).
 * A load that overlapped a `forgetVerifiedKeys` is answered but not kept: it may have read the row
 * before the write.
 */
export async function verifiedKey<K extends Key>(
  pg: PostgresStore,
  keyHash: string,
  load: () => Promise<{ principal: K; expiresAt: Date | null } | undefined>,
  now: () => number = Date.now,
): Promise<K | undefined> {
  if (!pg.embedded) return (await load())?.principal;
  // Only this function stores entries, each from a `load` of the one caller's principal type.
  const principal = await cacheOf(pg).read(
    keyHash,
    async () => {
      const loaded = await load();
      return loaded && { value: loaded.principal, until: loaded.expiresAt?.getTime() };
    },
    now(),
  );
  return principal as K | undefined;
}

/** Drops the kept keys a committed write touched: one key, a project's, or a workspace's. */
export function forgetVerifiedKeys(
  pg: PostgresStore,
  which: { keyId: string } | { projectId: string } | { workspaceId: string },
): void {
  caches
    .get(pg)
    ?.forget(
      (_hash, principal) =>
        ('keyId' in which && principal.keyId === which.keyId) ||
        ('projectId' in which && principal.projectId === which.projectId) ||
        ('workspaceId' in which && principal.workspaceId === which.workspaceId),
    );
}
