import type { PostgresStore, Queryable } from '../stores/postgres.js';
import type { NormalizedSpan } from '../traces/span-input.js';
import { DEFAULT_PRICES } from './default-prices.js';
import { PriceTable, type PriceEntry, type Prices } from './matcher.js';
import { overrideEntry, projectOverrides } from './queries.js';
import { forEachInSlices } from '../event-loop-slices.js';

/**
 * Cost at ingest (docs/model-prices.md, "Cost"). A cost the producer
 * sent wins (`cost_source: sent`, left alone); otherwise a span with a model and tokens is priced
 * from the project's table (`computed`); no matching price, or no tokens, leaves cost 0 and `none`.
 */

/** The default table, compiled once per process; every project's table is layered over it. */
export const DEFAULT_TABLE = new PriceTable(
  DEFAULT_PRICES.map((p) => ({ ...p, id: null, source: 'default' as const })),
);

export type TokenCounts = Pick<
  NormalizedSpan,
  'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'reasoning_tokens'
>;

/**
 * USD for the tokens at these prices. The counts are inclusive (span-input.ts): cache reads and writes
 * are parts of input_tokens, reasoning tokens a part of output_tokens, so each part is billed at its
 * own price and the rest at the plain one:
 *   (input − cache_read − cache_write) × input + cache_read × cached_input + cache_write × cache_write
 *   + (output − reasoning) × output + reasoning × reasoning, all per million.
 * A missing cached-input or cache-write price is the input price, a missing reasoning price the output
 * price. Parts larger than their total (a producer's inconsistency) are capped at the total.
 */
export function costOf(prices: Prices, t: TokenCounts): number {
  const cacheRead = Math.min(t.cache_read_tokens, t.input_tokens);
  const cacheWrite = Math.min(t.cache_write_tokens, t.input_tokens - cacheRead);
  const reasoning = Math.min(t.reasoning_tokens, t.output_tokens);
  const input = prices.input_per_million;
  const output = prices.output_per_million;
  const micro =
    (t.input_tokens - cacheRead - cacheWrite) * input +
    cacheRead * (prices.cached_input_per_million ?? input) +
    cacheWrite * (prices.cache_write_per_million ?? input) +
    (t.output_tokens - reasoning) * output +
    reasoning * (prices.reasoning_per_million ?? output);
  return micro / 1e6;
}

/** A span the table should price: no cost sent, a model named, tokens counted. */
function wantsPrice(s: NormalizedSpan): boolean {
  return s.cost_source === 'none' && s.model_name !== '' && (s.input_tokens > 0 || s.output_tokens > 0);
}

/** Prices one span in place from `table`; a span with a sent cost or nothing to price is left as it is. */
function priceSpan(table: PriceTable, span: NormalizedSpan): void {
  if (!wantsPrice(span)) return;
  const entry = table.lookup(span.model_name);
  if (!entry) return;
  span.cost = costOf(entry, span);
  span.cost_source = 'computed';
}

/** Prices the spans in place from `table` (synchronously: for callers that price a few spans). */
export function priceSpans(table: PriceTable, spans: readonly NormalizedSpan[]): void {
  for (const span of spans) priceSpan(table, span);
}

/**
 * How long a process trusts the overrides it read from Postgres. A write through this process
 * invalidates its copy at once (`PriceBook.invalidate`); other processes (another API replica, the web
 * process's /app-api) see the change within this time.
 */
export const PRICE_CACHE_TTL_MS = 15_000;
/** Projects whose tables a process keeps; the least recently loaded go first past it. */
export const MAX_CACHED_PROJECTS = 10_000;

type Cached = { table: PriceTable; loadedAt: number };

/**
 * A process's per-project price tables: the project's overrides (one Postgres read, then cached for
 * PRICE_CACHE_TTL_MS) layered over the default table. A project without overrides shares the default
 * table and its memo. Concurrent loads of one project share one query; a load that a write overtook
 * (`invalidate` during the query) answers its caller but is not kept.
 */
export class PriceBook {
  private readonly cached = new Map<string, Cached>();
  private readonly loading = new Map<string, Promise<PriceTable>>();
  private readonly generation = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs = PRICE_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Prices the spans of one ingest request of `projectId` in place; no Postgres read when none needs a price. */
  async price(projectId: string, spans: readonly NormalizedSpan[]): Promise<void> {
    if (!spans.some(wantsPrice)) return;
    const table = await this.tableFor(projectId);
    // A request's distinct model names are each matched against every pattern of the project: linear
    // work per name, but 10,000 names times 500 patterns is seconds, so other tenants get turns.
    await forEachInSlices(spans, (span) => priceSpan(table, span));
  }

  /** The project's table: cached while fresh, else read again. */
  tableFor(projectId: string): PriceTable | Promise<PriceTable> {
    const hit = this.cached.get(projectId);
    if (hit && this.now() - hit.loadedAt < this.ttlMs) return hit.table;
    let pending = this.loading.get(projectId);
    if (!pending) {
      pending = this.load(projectId, hit).finally(() => this.loading.delete(projectId));
      this.loading.set(projectId, pending);
    }
    return pending;
  }

  /** Forgets the project's table: the next span priced for it reads the overrides again. */
  invalidate(projectId: string): void {
    this.cached.delete(projectId);
    this.loading.delete(projectId);
    this.generation.set(projectId, (this.generation.get(projectId) ?? 0) + 1);
  }

  private async load(projectId: string, stale: Cached | undefined): Promise<PriceTable> {
    const generation = this.generation.get(projectId) ?? 0;
    let rows;
    try {
      rows = await projectOverrides(this.db, projectId);
    } catch (error) {
      // Postgres unreachable for a moment: the last prices read are better than refusing the spans.
      if (stale) return stale.table;
      throw error;
    }
    const table = rows.length === 0 ? DEFAULT_TABLE : new PriceTable(rows.map(overrideEntry), DEFAULT_TABLE);
    if ((this.generation.get(projectId) ?? 0) === generation) {
      this.cached.delete(projectId);
      if (this.cached.size >= MAX_CACHED_PROJECTS) this.cached.delete(this.cached.keys().next().value!);
      this.cached.set(projectId, { table, loadedAt: this.now() });
    }
    return table;
  }
}

const books = new WeakMap<PostgresStore, PriceBook>();

/** The price book of the process's Postgres store: the ingest path reads it, the override writes invalidate it. */
export function priceBookOf(pg: PostgresStore): PriceBook {
  let book = books.get(pg);
  if (!book) {
    book = new PriceBook(pg.pool);
    books.set(pg, book);
  }
  return book;
}

export type { PriceEntry };
