import { describe, expect, it } from 'vitest';
import { useMigrationStore } from '../support/migration-store.js';
import { loadSpans } from '../../bench/load-spans.js';

/**
 * clickhouse/0013_trace_root_codec.sql on an installed database: traces rolled up under 0001-0012,
 * then the migration, twice (a re-run must be harmless), then a merge that rewrites the old parts
 * with the new codec, and more spans stored after it. Every trace's merged root (name, id, start,
 * metadata, input, output) reads the same before and after.
 */
describe('migration 0013 (trace root codec) on a store that has traces', () => {
  const { migrations, client, run, one } = useMigrationStore('trace-root-codec');
  /** A digest of every trace's merged root: equal only if every root is. */
  const digest = () =>
    one(`SELECT count() AS n, toString(groupBitXor(h)) AS xor, toString(sum(h)) AS sum
         FROM (SELECT cityHash64(project_id, trace_id, argMinMerge(root)) AS h FROM traces GROUP BY project_id, trace_id)`);
  const codec = async () =>
    (
      await one(
        `SELECT compression_codec AS c FROM system.columns WHERE database = currentDatabase() AND table = 'traces' AND name = 'root'`,
      )
    ).c;

  it('keeps every root, is safe to re-run, and the merged parts take the new codec', async () => {
    expect(migrations.some((m) => m.version === 13 && m.name === 'trace_root_codec')).toBe(true);
    await run((v) => v < 13);
    const load = (projects: string[]) =>
      loadSpans(client(), { spans: 10_000, projects, days: 2, nowMs: Date.parse('2026-11-01T00:00:00Z') });
    await load(['p-a', 'p-b']);
    const before = await digest();
    expect(Number(before.n)).toBe(1_000);
    expect(await codec()).toBe('');

    await run((v) => v === 13);
    await run((v) => v === 13);
    expect(await codec()).toBe('CODEC(ZSTD(3))');
    expect(await digest()).toEqual(before);

    // The parts stored before are rewritten by a merge (with the new codec); every root stays.
    await client().command({ query: 'OPTIMIZE TABLE traces FINAL' });
    expect(await digest()).toEqual(before);

    // Spans stored after the migration roll up as before: a fresh project's roots, next to the old ones.
    await load(['p-c']);
    const after = await one(
      `SELECT count() AS n FROM (SELECT trace_id FROM traces WHERE project_id = 'p-c' GROUP BY trace_id)`,
    );
    expect(Number(after.n)).toBe(1_000);
    expect(await digest()).not.toEqual(before);
  });
});
