import { describe, expect, it } from 'vitest';
import { KeptAnswers } from '../../src/kept-answers.js';

/**
 * The answers kept in front of a store (src/kept-answers.ts), under the verified keys and the prompt
 * fetch: one load a key at a time, a steady reader never waiting on a reload, and nothing kept across
 * a write. (Each cache's own rules: test/auth/key-cache.test.ts, test/prompts/read-cache.test.ts.)
 */
describe('kept answers', () => {
  const TTL = 1_000;

  /** A load that stays open until `release`, counting how often it was started. */
  function gated(value: string) {
    let starts = 0;
    let release!: () => void;
    let gate = new Promise<void>((resolve) => (release = resolve));
    return {
      load: async () => {
        starts++;
        await gate;
        return { value };
      },
      starts: () => starts,
      release: () => {
        release();
        gate = new Promise<void>((resolve) => (release = resolve));
      },
    };
  }

  it('requests that miss together wait for one load', async () => {
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => 0 });
    const source = gated('v1');
    const reads = Array.from({ length: 10 }, () => kept.read('a', source.load));
    source.release();
    expect(await Promise.all(reads)).toEqual(Array(10).fill('v1'));
    expect(source.starts()).toBe(1);
  });

  it('in the second half of its life an answer is given at once and reloaded once in the background', async () => {
    let now = 0;
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => now });
    await kept.read('a', async () => ({ value: 'v1' }));
    const source = gated('v2');
    now = TTL / 2 - 1;
    expect(await kept.read('a', source.load)).toBe('v1');
    expect(source.starts()).toBe(0);
    now = TTL / 2;
    // The reload is under way and not finished: both reads are answered from memory, one reload runs.
    expect(await kept.read('a', source.load)).toBe('v1');
    expect(await kept.read('a', source.load)).toBe('v1');
    expect(source.starts()).toBe(1);
    source.release();
    await new Promise((resolve) => setImmediate(resolve));
    // The reload's answer lives a whole TTL from when it began.
    now = TTL / 2 + TTL - 1;
    expect(await kept.read('a', async () => ({ value: 'not loaded' }))).toBe('v2');
  });

  it('an answer is never given after its until, even while its reload is still running', async () => {
    let now = 0;
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => now });
    await kept.read('a', async () => ({ value: 'v1' }));
    const source = gated('v2');
    now = TTL - 1;
    expect(await kept.read('a', source.load)).toBe('v1');
    now = TTL;
    const waiting = kept.read('a', source.load);
    source.release();
    expect(await waiting).toBe('v2');
    expect(source.starts()).toBe(1);
  });

  it('a forget drops the answer and the load under way: the next read loads afresh and keeps that', async () => {
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => 0 });
    const before = gated('before the write');
    const first = kept.read('a', before.load);
    kept.forget((key) => key === 'a');
    const after = kept.read('a', async () => ({ value: 'after the write' }));
    before.release();
    expect(await first).toBe('before the write');
    expect(await after).toBe('after the write');
    expect(await kept.read('a', async () => ({ value: 'not loaded' }))).toBe('after the write');
  });

  it('a reload that finds nothing or fails keeps nothing: a later read loads again', async () => {
    let now = 0;
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => now });
    await kept.read('a', async () => ({ value: 'v1' }));
    now = TTL / 2;
    expect(await kept.read('a', async () => undefined)).toBe('v1');
    await new Promise((resolve) => setImmediate(resolve));
    expect(await kept.read('a', async () => ({ value: 'v2' }))).toBe('v2');
    await expect(
      kept.read('b', async () => {
        throw new Error('store down');
      }),
    ).rejects.toThrow('store down');
    expect(await kept.read('b', async () => ({ value: 'b1' }))).toBe('b1');
  });

  it('keeps an answer no later than the until its load gives', async () => {
    let now = 0;
    const kept = new KeptAnswers<string>({ ttlMs: TTL, maxEntries: 10, now: () => now });
    await kept.read('a', async () => ({ value: 'expiring', until: 100 }));
    now = 99;
    expect(await kept.read('a', async () => ({ value: 'reloaded' }))).toBe('expiring');
    now = 100;
    expect(await kept.read('a', async () => ({ value: 'reloaded' }))).toBe('reloaded');
  });
});
