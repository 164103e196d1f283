import { describe, expect, it } from 'vitest';
import { useMigrationStore } from '../support/migration-store.js';
import { loadSpans } from '../../bench/load-spans.js';

/**
 * clickhouse/0010_span_storage.sql on an installed database: spans stored under 0001-0009, then the
 * migration, twice (a re-run must be harmless), then a merge that rewrites the old parts with the new
 * codecs. Every stored value reads the same before and after, and the new codecs and block size are
 * what the table now holds.
 */
describe('migration 0010 (span storage) on a store that has spans', () => {
  const { migrations, client, run, one } = useMigrationStore('span-storage');
  /** A digest of every column of every span, in a fixed order: equal only if every value is. */
  const digest = () =>
    one(`SELECT count() AS n, toString(groupBitXor(cityHash64(*))) AS xor, toString(sum(cityHash64(*))) AS sum
         FROM spans FINAL`);

  it('keeps every value, is safe to re-run, and the merged parts take the new codecs', async () => {
    expect(migrations.some((m) => m.version === 10 && m.name === 'span_storage')).toBe(true);
    await run((v) => v < 10);
    await loadSpans(client(), {
      spans: 20_000,
      projects: ['p-a', 'p-b'],
      days: 2,
      nowMs: Date.parse('2026-11-01T00:00:00Z'),
    });
    const before = await digest();
    expect(Number(before.n)).toBe(20_000);
    const codec = async (column: string) =>
      (
        await one(
          `SELECT compression_codec AS c FROM system.columns WHERE database = currentDatabase() AND table = 'spans' AND name = '${column}'`,
        )
      ).c;
    expect(await codec('span_id')).toBe('');

    await run((v) => v === 10);
    await run((v) => v === 10);
    expect(await digest()).toEqual(before);
    expect(await codec('span_id')).toBe('CODEC(ZSTD(1))');
    expect(await codec('start_time')).toBe('CODEC(Delta(8), ZSTD(1))');
    expect(await codec('input')).toBe('CODEC(ZSTD(3))');
    const engine = String((await one(`SELECT engine_full AS e FROM system.tables WHERE name = 'spans'`)).e);
    expect(engine).toContain('max_compress_block_size = 4194304');
    expect(engine).toContain('min_compress_block_size = 4194304');

    // The parts stored before take the codecs when a merge rewrites them; the values stay.
    const bytes = async () =>
      Number(
        (
          await one(
            `SELECT sum(column_data_compressed_bytes) AS b FROM system.parts_columns
             WHERE active AND database = currentDatabase() AND table = 'spans' AND column = 'span_id'`,
          )
        ).b,
      );
    const idsBefore = await bytes();
    await client().command({ query: 'OPTIMIZE TABLE spans FINAL' });
    expect(await digest()).toEqual(before);
    expect(await bytes()).toBeLessThan(idsBefore);
  });
});
