import type { AppContext } from '../context.js';

/**
 * The prompt fetch's cache (docs/prompts.md, "Fetching"): SDKs fetch a prompt before their calls, at
 * hundreds a second, and each fetch would otherwise cost a Postgres statement beside its credential's.
 * An answer is kept for `TTL_MS`; a write of a name through this process (a new version, a label
 * moved, the prompt deleted) drops that name's answers at once, and another API process sees the
 * write within `TTL_MS`. Bounded: past `MAX_ENTRIES` the oldest answers go first.
 */
export const TTL_MS = 1_000;
const MAX_ENTRIES = 10_000;

type Entry<T> = { value: T; expires: number };

export class PromptReadCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /** Counts writes: an answer loaded across a write is answered but not kept (it may predate the write). */
  private writes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  private static key(projectId: string, name: string, selector: string): string {
    return `${projectId}\u0000${name}\u0000${selector}`;
  }

  async read(projectId: string, name: string, selector: string, load: () => Promise<T>): Promise<T> {
    const key = PromptReadCache.key(projectId, name, selector);
    const found = this.entries.get(key);
    if (found && found.expires > this.now()) return found.value;
    const writes = this.writes;
    const value = await load();
    if (writes !== this.writes) return value;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: this.now() + TTL_MS });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return value;
  }

  /** Drops every answer of one name (all its selectors). */
  forget(projectId: string, name: string): void {
    this.writes++;
    const prefix = PromptReadCache.key(projectId, name, '');
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

const caches = new WeakMap<AppContext, PromptReadCache<unknown>>();

/** The process's cache for one running context. */
export function promptReadCache<T>(ctx: AppContext): PromptReadCache<T> {
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = new PromptReadCache()));
  return cache as PromptReadCache<T>;
}
