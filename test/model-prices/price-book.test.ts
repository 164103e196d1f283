import { describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/stores/postgres.js';
import { DEFAULT_TABLE, PRICE_CACHE_TTL_MS, PriceBook } from '../../src/model-prices/pricing.js';
import { projectWithKey, useHarness } from '../support/harness.js';
import { validateSpans, type NormalizedSpan } from '../../src/traces/span-input.js';

const h = useHarness();

/** The real pool, counting the statements that reach it. */
function counted(pool: Queryable): { db: Queryable; queries: () => number } {
  let n = 0;
  const db = {
    query: (...args: unknown[]) => (n++, (pool.query as (...a: unknown[]) => unknown)(...args)),
  } as unknown as Queryable;
  return { db, queries: () => n };
}

function spans(model: string, extra: Record<string, unknown> = {}): NormalizedSpan[] {
  return validateSpans([
    {
      trace_id: 't',
      span_id: 's',
      name: 'chat',
      start_time: '2025-01-01T00:00:00Z',
      model_name: model,
      input_tokens: 1_000_000,
      ...extra,
    },
  ]).accepted;
}

async function override(projectId: string, pattern: string, input: number) {
  await h().ctx.pg.pool.query(
    `INSERT INTO model_prices (id, project_id, model_pattern, input_per_million, output_per_million) VALUES (gen_random_uuid(), $1, $2, $3, 0)`,
    [projectId, pattern, input],
  );
}

describe('the price book: per-project prices cached in a process', () => {
  it('reads a project once per TTL, sees another process’s change after the TTL, and its own at once', async () => {
    const { project } = await projectWithKey(h());
    let now = 1_000_000;
    const { db, queries } = counted(h().ctx.pg.pool);
    const book = new PriceBook(db, PRICE_CACHE_TTL_MS, () => now);

    const a = spans('gpt-4o');
    await book.price(project.id, a);
    expect(a[0]!.cost).toBeCloseTo(2.5, 9);
    expect(queries()).toBe(1);
    // A project without overrides shares the default table (and its memo).
    expect(await book.tableFor(project.id)).toBe(DEFAULT_TABLE);

    // Another process writes an override: this one keeps its copy until the TTL has passed…
    await override(project.id, 'gpt-4o', 1);
    for (let i = 0; i < 3; i++) {
      const b = spans('gpt-4o');
      await book.price(project.id, b);
      expect(b[0]!.cost).toBeCloseTo(2.5, 9);
    }
    expect(queries()).toBe(1);
    now += PRICE_CACHE_TTL_MS;
    const c = spans('gpt-4o');
    await book.price(project.id, c);
    expect(c[0]!.cost).toBeCloseTo(1, 9);
    expect(queries()).toBe(2);

    // …while a write through this process invalidates at once.
    await h().ctx.pg.pool.query('UPDATE model_prices SET input_per_million = 4 WHERE project_id = $1', [project.id]);
    book.invalidate(project.id);
    const d = spans('gpt-4o');
    await book.price(project.id, d);
    expect(d[0]!.cost).toBeCloseTo(4, 9);
    expect(queries()).toBe(3);
  });

  it('reads nothing when no span needs a price, and loads a project once for concurrent requests', async () => {
    const { project } = await projectWithKey(h());
    await override(project.id, 'acme-*', 3);
    const { db, queries } = counted(h().ctx.pg.pool);
    const book = new PriceBook(db);
    await book.price(project.id, [
      ...spans('gpt-4o', { cost: 1 }),
      ...spans('gpt-4o', { input_tokens: 0 }),
      ...spans(''),
    ]);
    expect(queries()).toBe(0);
    const batches = [spans('acme-large'), spans('acme-small'), spans('gpt-4o-mini')];
    await Promise.all(batches.map((b) => book.price(project.id, b)));
    expect(queries()).toBe(1);
    expect(batches.map((b) => [b[0]!.cost, b[0]!.cost_source])).toEqual([
      [3, 'computed'],
      [3, 'computed'],
      [0.15, 'computed'],
    ]);
  });

  it('does not keep a load that a write overtook', async () => {
    const { project } = await projectWithKey(h());
    const book = new PriceBook(h().ctx.pg.pool);
    const loading = book.tableFor(project.id);
    // The write commits and invalidates while the read is on its way: its answer must not be cached.
    await override(project.id, 'gpt-4o', 7);
    book.invalidate(project.id);
    await loading;
    const e = spans('gpt-4o');
    await book.price(project.id, e);
    expect(e[0]!.cost).toBeCloseTo(7, 9);
  });
});
