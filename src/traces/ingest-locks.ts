import crypto from 'node:crypto';
import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { PostgresStore } from '../stores/postgres.js';

/**
 * The locks behind ingest's exactly-once rule (src/traces/span-writer.ts): a commit checks which of
 * its spans are stored and inserts the rest while it holds one lock per trace it carries, so two
 * commits carrying spans of the same trace (a re-send, or a trace split over requests that reached
 * different processes) check-and-insert one after the other, and commits of different traces run
 * side by side, in one process or many. One lock per project used to serialise a project's whole
 * ingest across API processes (docs/scaling.md).
 *
 * Keys are 64-bit hashes of (project, trace). A commit takes all of its keys at once, in ascending
 * order, so two commits never wait on each other in a cycle. A collision of two traces' hashes only
 * makes them wait for each other, never miscounts.
 *
 * On a Postgres server the locks are advisory locks taken in one statement on a dedicated
 * connection: the server releases them if the process dies or the connection breaks.
 * Embedded (PGlite is one session, and one process owns the data directory) they are in-process locks,
 * shared by every writer of the process, so several writers in one process are safe too.
 */

/** Locks one commit may hold at once; a commit of more traces goes in groups (see `traceGroups`). */
export const MAX_TRACE_LOCKS = 1_000;

/** The lock key of a trace: the first 8 bytes of SHA-1 over project and trace, as a signed 64-bit integer. */
export function traceLockKey(projectId: string, traceId: string): bigint {
  const digest = crypto.createHash('sha1').update(projectId).update('\u0000').update(traceId).digest();
  return digest.readBigInt64BE(0);
}

/**
 * Splits a commit's traces into groups of at most `max` lock keys, each group's keys ascending, so
 * a group's locks fit Postgres's lock table (max_locks_per_transaction × connections is shared by
 * every session; 64 × 100 by default) whatever the commit's size.
 */
export function traceGroups<T>(
  items: { key: bigint; value: T }[],
  max = MAX_TRACE_LOCKS,
): { key: bigint; value: T }[][] {
  const sorted = [...items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const groups: { key: bigint; value: T }[][] = [];
  let keys = 0;
  let previous: bigint | undefined;
  for (const item of sorted) {
    const fresh = item.key !== previous;
    if (fresh && (groups.length === 0 || keys === max)) {
      groups.push([]);
      keys = 0;
    }
    if (fresh) keys++;
    previous = item.key;
    groups.at(-1)!.push(item);
  }
  return groups;
}

export interface TraceLocks {
  /** Runs `fn` holding the locks of `keys` (ascending, distinct), released when it settles. */
  withLocks<R>(keys: bigint[], fn: () => Promise<R>): Promise<R>;
}

/**
 * Session advisory locks on a Postgres server, on a connection of their own. Not transaction locks:
 * the server ends a transaction left idle past its deadline (src/stores/postgres.ts), and a long
 * insert must not lose its locks half-way.
 */
class AdvisoryTraceLocks implements TraceLocks {
  constructor(private readonly pg: PostgresStore) {}

  async withLocks<R>(keys: bigint[], fn: () => Promise<R>): Promise<R> {
    const client = await this.pg.pool.connect();
    let healthy = true;
    try {
      // One statement, the keys in the array's (ascending) order: the lock calls are evaluated after
      // the sort, so two commits never hold each other's next key.
      await client.query('SELECT pg_advisory_lock(k) FROM unnest($1::int8[]) WITH ORDINALITY AS u(k, i) ORDER BY i', [
        keys.map(String),
      ]);
      return await fn();
    } finally {
      try {
        await client.query('SELECT pg_advisory_unlock_all()');
      } catch {
        healthy = false;
      }
      // A connection whose unlock failed is destroyed, which releases its locks with it.
      client.release(!healthy);
    }
  }
}

/** In-process locks: one promise chain per key. */
class LocalTraceLocks implements TraceLocks {
  private readonly held = new Map<bigint, Promise<void>>();

  async withLocks<R>(keys: bigint[], fn: () => Promise<R>): Promise<R> {
    const releases: (() => void)[] = [];
    try {
      for (const key of keys) {
        // Wait until nobody holds the key, then take it (no await between the check and the set).
        for (let held = this.held.get(key); held; held = this.held.get(key)) await held;
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        this.held.set(key, gate);
        releases.push(() => {
          this.held.delete(key);
          release();
        });
      }
      return await fn();
    } finally {
      for (const release of releases) release();
    }
  }
}

/** One in-process lock table per span store, so every writer of the process storing there shares it. */
const localLocks = new WeakMap<ClickHouseStore, LocalTraceLocks>();

/** The trace locks of writers storing into `ch`: advisory locks with a Postgres server, in-process embedded. */
export function traceLocks(ch: ClickHouseStore, pg: PostgresStore): TraceLocks {
  if (!pg.embedded) return new AdvisoryTraceLocks(pg);
  let locks = localLocks.get(ch);
  if (!locks) localLocks.set(ch, (locks = new LocalTraceLocks()));
  return locks;
}

/**
 * Locks as they were before trace locks: every commit of a project takes the same key, so one
 * project's commits run one at a time across writers. For comparison (bench/ingest-writers.ts).
 */
export function projectLocks(locks: TraceLocks, projectId: string): TraceLocks {
  const key = traceLockKey(projectId, '');
  return { withLocks: (_keys, fn) => locks.withLocks([key], fn) };
}
