import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalModel, Glob, PriceTable, type PriceEntry } from '../../src/model-prices/matcher.js';

/** The matcher before the linear one: a pattern's `*` became `.*` in a RegExp (kept here only to compare). */
function oldGlob(pattern: string): RegExp {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${pattern.split('*').map(escape).join('.*')}$`);
}

function entry(model_pattern: string): PriceEntry {
  return {
    model_pattern,
    source: 'project',
    id: `id-${model_pattern}`,
    input_per_million: 1,
    output_per_million: 2,
    cached_input_per_million: null,
    cache_write_per_million: null,
    reasoning_per_million: null,
  };
}

/** Milliseconds one call of `fn` takes: the least of `tries` calls, so a loaded machine's pauses don't count. */
function leastMs(fn: () => unknown, tries = 5): number {
  let least = Infinity;
  for (let i = 0; i < tries; i++) {
    const started = performance.now();
    fn();
    least = Math.min(least, performance.now() - started);
  }
  return least;
}

// Small alphabets make near matches (the old matcher's worst case) common.
const letters = fc.constantFrom('a', 'b', '-', ':');
const patternArb = fc
  .array(fc.oneof({ weight: 3, arbitrary: letters }, { weight: 2, arbitrary: fc.constant('*') }), {
    minLength: 1,
    maxLength: 12,
  })
  .map((cs) => cs.join(''))
  .filter((p) => p.includes('*'));
const idArb = fc.array(letters, { maxLength: 16 }).map((cs) => cs.join(''));

describe('the linear glob matcher', () => {
  it('answers as the old RegExp matcher on random patterns and ids', () => {
    fc.assert(
      fc.property(patternArb, fc.array(idArb, { minLength: 1, maxLength: 8 }), (pattern, ids) => {
        const glob = new Glob(pattern);
        const old = oldGlob(pattern);
        for (const id of ids) expect(glob.test(id), `${pattern} ~ ${id}`).toBe(old.test(id));
      }),
      { numRuns: 3000 },
    );
  });

  it('picks the same price as the old matcher through a whole table', () => {
    fc.assert(
      fc.property(fc.array(patternArb, { minLength: 1, maxLength: 6 }), idArb, (patterns, id) => {
        const table = new PriceTable(patterns.map(entry));
        const canonical = canonicalModel(id);
        // The old rule: the matching glob with the most characters besides `*`, the first listed on a tie.
        let best: { pattern: string; specificity: number } | null = null;
        for (const p of patterns) {
          const c = canonicalModel(p);
          if (!c.includes('*') || canonical === '' || !oldGlob(c).test(canonical)) continue;
          const specificity = c.replace(/\*/g, '').length;
          if (!best || specificity > best.specificity) best = { pattern: p, specificity };
        }
        const plainHit = patterns.some((p) => !canonicalModel(p).includes('*'));
        if (!plainHit) expect(table.lookup(id)?.model_pattern ?? null).toBe(best?.pattern ?? null);
      }),
      { numRuns: 2000 },
    );
  });

  it('matches the attacks on the old matcher in well under 1 ms each', () => {
    const attacks = [
      { pattern: `${'a*'.repeat(30)}b`, id: 'a'.repeat(120) },
      { pattern: `${'a*'.repeat(11)}b`, id: 'a'.repeat(40) },
      { pattern: `${'a*'.repeat(127)}b`, id: 'a'.repeat(1024) },
      { pattern: `*${'a'.repeat(100)}b*${'a'.repeat(100)}b`, id: 'a'.repeat(1024) },
    ];
    for (const { pattern, id } of attacks) {
      const table = new PriceTable([entry(pattern)]);
      const glob = new Glob(canonicalModel(pattern));
      expect(glob.test(id)).toBe(false);
      expect(leastMs(() => glob.test(id))).toBeLessThan(1);
      // Through the table, each time with a name it has not seen (no memo).
      let n = 0;
      expect(leastMs(() => table.lookup(`${id.slice(0, -1)}${n++ % 2 ? 'a' : 'a-'}`))).toBeLessThan(1);
    }
  });

  it('keeps every single match under 1 ms on random long patterns and ids', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(letters, fc.constant('*')), { minLength: 1, maxLength: 256 }).map((cs) => `${cs.join('')}*`),
        fc.array(letters, { maxLength: 1024 }).map((cs) => cs.join('')),
        (pattern, id) => {
          const glob = new Glob(pattern);
          expect(leastMs(() => glob.test(id), 3)).toBeLessThan(1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reads an id of many version boundaries without hashing every prefix', () => {
    const table = new PriceTable([entry('gpt-4o')]);
    const id = `gpt-4o${'-a'.repeat(500)}`;
    expect(table.lookup(id)?.model_pattern).toBe('gpt-4o');
    expect(leastMs(() => new PriceTable([entry('gpt-4o')]).lookup(`${'-b'.repeat(512)}x`))).toBeLessThan(1);
  });
});
