/**
 * Answers kept for a short while in front of a store (the verified API keys, the prompt fetch): read
 * at hundreds a second by SDKs, they would otherwise each cost a statement on the store. Three rules
 * keep a kept answer honest and the requests that read it fast:
 *
 * - **Fresh only.** An answer is given until its `until` (at most `ttlMs` after it was loaded), never
 *   after; a write through this process drops what it touched at once (`forget`).
 * - **One load a key.** Requests that miss while the key's answer is loading wait for that load
 *   instead of each starting their own (no burst of identical statements when an answer expires).
 * - **Reloaded ahead.** In the second half of an answer's life, the request that reads it starts one
 *   reload in the background and is answered from what is kept, so no request waits for a reload as
 *   long as the key is read steadily.
 *
 * A load that overlapped a `forget` is answered to its own callers but not kept: it may have read the
 * store before the write. A load that finds nothing (`undefined`) or fails keeps nothing. Bounded:
 * past `maxEntries` the oldest answers go first.
 */
export type Loaded<V> = { value: V; until?: number } | undefined;

export class KeptAnswers<V> {
  private readonly entries = new Map<string, { value: V; loadedAt: number; until: number }>();
  private readonly loading = new Map<string, Promise<V | undefined>>();
  /** Counts forgets: a load begun before one is not kept. */
  private writes = 0;

  constructor(private readonly options: { ttlMs: number; maxEntries: number; now?: () => number }) {}

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The kept answer of `key` while fresh at `now`, else `load`'s (`undefined`: nothing to answer). */
  async read(key: string, load: () => Promise<Loaded<V>>, now = this.now()): Promise<V | undefined> {
    const kept = this.entries.get(key);
    if (kept && kept.until > now) {
      if (now - kept.loadedAt >= this.options.ttlMs / 2 && !this.loading.has(key)) {
        // Nobody waits on this reload; a failure leaves the kept answer to expire.
        this.load(key, load, now).catch(() => undefined);
      }
      return kept.value;
    }
    return this.loading.get(key) ?? this.load(key, load, now);
  }

  private load(key: string, load: () => Promise<Loaded<V>>, loadedAt: number): Promise<V | undefined> {
    const writes = this.writes;
    const pending = load().then(
      (loaded) => {
        if (this.loading.get(key) === pending) this.loading.delete(key);
        if (!loaded) {
          this.entries.delete(key);
          return undefined;
        }
        if (writes === this.writes) {
          const until = Math.min(loadedAt + this.options.ttlMs, loaded.until ?? Infinity);
          this.entries.delete(key);
          this.entries.set(key, { value: loaded.value, loadedAt, until });
          if (this.entries.size > this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
        }
        return loaded.value;
      },
      (error: unknown) => {
        if (this.loading.get(key) === pending) this.loading.delete(key);
        throw error;
      },
    );
    this.loading.set(key, pending);
    return pending;
  }

  /**
   * Drops the kept answers `touched` names (called after a write commits), and the loads under way:
   * a request after the write starts a load of its own rather than wait for one that began before.
   */
  forget(touched: (key: string, value: V) => boolean): void {
    this.writes++;
    this.loading.clear();
    for (const [key, { value }] of this.entries) if (touched(key, value)) this.entries.delete(key);
  }
}
