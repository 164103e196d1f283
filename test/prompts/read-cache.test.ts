import { describe, expect, it } from 'vitest';
import { PromptReadCache, TTL_MS } from '../../src/prompts/read-cache.js';

/** The prompt fetch's cache (src/prompts/read-cache.ts): kept for TTL_MS, dropped by a write of the name. */
describe('the prompt read cache', () => {
  function counting(value: () => string) {
    let loads = 0;
    return { load: async () => (loads++, value()), loads: () => loads };
  }

  it('answers from memory within the TTL, then loads again', async () => {
    let now = 1_000;
    const cache = new PromptReadCache<string>(TTL_MS, () => now);
    const source = counting(() => 'v1');
    expect(await cache.read('p', 'a/b', 'label:production', source.load)).toBe('v1');
    expect(await cache.read('p', 'a/b', 'label:production', source.load)).toBe('v1');
    expect(source.loads()).toBe(1);
    now += TTL_MS;
    await cache.read('p', 'a/b', 'label:production', source.load);
    expect(source.loads()).toBe(2);
  });

  it('keeps projects, names and selectors apart', async () => {
    const cache = new PromptReadCache<string>(TTL_MS, () => 0);
    await cache.read('p1', 'a', 'label:', async () => 'p1-a');
    await cache.read('p2', 'a', 'label:', async () => 'p2-a');
    await cache.read('p1', 'a', 'version:1', async () => 'p1-a-1');
    await cache.read('p1', 'ab', 'label:', async () => 'p1-ab');
    expect(await cache.read('p1', 'a', 'label:', async () => 'loaded')).toBe('p1-a');
    expect(await cache.read('p2', 'a', 'label:', async () => 'loaded')).toBe('p2-a');
    expect(await cache.read('p1', 'a', 'version:1', async () => 'loaded')).toBe('p1-a-1');
    expect(await cache.read('p1', 'ab', 'label:', async () => 'loaded')).toBe('p1-ab');
  });

  it('a write of a name drops its answers at once, and only its', async () => {
    const cache = new PromptReadCache<string>(TTL_MS, () => 0);
    await cache.read('p', 'a', 'label:', async () => 'old');
    await cache.read('p', 'a', 'version:2', async () => 'old-2');
    await cache.read('p', 'ab', 'label:', async () => 'other');
    cache.forget('p', 'a');
    expect(await cache.read('p', 'a', 'label:', async () => 'new')).toBe('new');
    expect(await cache.read('p', 'a', 'version:2', async () => 'new-2')).toBe('new-2');
    expect(await cache.read('p', 'ab', 'label:', async () => 'loaded')).toBe('other');
  });

  it('an answer loaded across a write is answered but not kept', async () => {
    const cache = new PromptReadCache<string>(TTL_MS, () => 0);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const pending = cache.read('p', 'a', 'label:', async () => (await gate, 'before the write'));
    cache.forget('p', 'a');
    release();
    expect(await pending).toBe('before the write');
    expect(await cache.read('p', 'a', 'label:', async () => 'after the write')).toBe('after the write');
  });

  it('a failed load is not kept', async () => {
    const cache = new PromptReadCache<string>(TTL_MS, () => 0);
    await expect(
      cache.read('p', 'a', 'label:', async () => {
        throw new Error('prompt not found');
      }),
    ).rejects.toThrow('prompt not found');
    expect(await cache.read('p', 'a', 'label:', async () => 'created')).toBe('created');
  });

  it('holds at most 10,000 answers, dropping the oldest', async () => {
    const cache = new PromptReadCache<string>(TTL_MS, () => 0);
    for (let i = 0; i <= 10_000; i++) await cache.read('p', `n${i}`, 'label:', async () => `v${i}`);
    expect(await cache.read('p', 'n0', 'label:', async () => 'reloaded')).toBe('reloaded');
    expect(await cache.read('p', 'n10000', 'label:', async () => 'reloaded')).toBe('v10000');
  });
});
