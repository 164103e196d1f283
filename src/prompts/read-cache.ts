import type { AppContext } from '../context.js';
import { KeptAnswers } from '../kept-answers.js';

/**
 * The prompt fetch's cache (docs/prompts.md, "Fetching"): SDKs fetch a prompt before their calls, at
 * hundreds a second, and each fetch would otherwise cost a Postgres statement beside its credential's.
 * An answer is kept for `TTL_MS`; a write of a name through this process (a new version, a label
 * moved, the prompt deleted) drops that name's answers at once, and another API process sees the
 * write within `TTL_MS`. On embedded Postgres this process is the only one on its data directory (as
 * for verified keys, src/auth/key-cache.ts), so every write passes through it and drops what it
 * touched: an answer is kept `EMBEDDED_TTL_MS` there, the bound for a write that bypasses the API, and
 * the reloads, which run on this process's event loop there (PGlite), come five times less often.
 * Bounded: past `MAX_ENTRIES` the oldest answers go first. A name read steadily is reloaded in the
 * background before its answer expires (src/kept-answers.ts), so no fetch waits for Postgres then.
 */
export const TTL_MS = 1_000;
export const EMBEDDED_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

export class PromptReadCache<T> {
  private readonly kept: KeptAnswers<T>;

  constructor(ttlMs = TTL_MS, now: () => number = Date.now) {
    this.kept = new KeptAnswers<T>({ ttlMs, maxEntries: MAX_ENTRIES, now });
  }

  private static key(projectId: string, name: string, selector: string): string {
    return `${projectId}\u0000${name}\u0000${selector}`;
  }

  /** One name's answer for a selector; `load` throws for a name or selector not found (never kept). */
  async read(projectId: string, name: string, selector: string, load: () => Promise<T>): Promise<T> {
    const key = PromptReadCache.key(projectId, name, selector);
    return (await this.kept.read(key, async () => ({ value: await load() }))) as T;
  }

  /** Drops every answer of one name (all its selectors). */
  forget(projectId: string, name: string): void {
    const prefix = PromptReadCache.key(projectId, name, '');
    this.kept.forget((key) => key.startsWith(prefix));
  }
}

const caches = new WeakMap<AppContext, PromptReadCache<unknown>>();

/** The process's cache for one running context. */
export function promptReadCache<T>(ctx: AppContext): PromptReadCache<T> {
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = new PromptReadCache(ctx.pg.embedded ? EMBEDDED_TTL_MS : TTL_MS)));
  return cache as PromptReadCache<T>;
}
