import { describe, expect, it } from 'vitest';
import { SLICE_MS, sliceClock } from '../../src/event-loop-slices.js';

/** Holds the loop for `ms`, as a piece of a streamed answer does while its consumer writes it. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('sliceClock (src/event-loop-slices.ts)', () => {
  it('answers nothing to wait for within a slice', () => {
    const pause = sliceClock();
    expect(pause()).toBeUndefined();
  });

  it('once a slice has run, lets the callbacks waiting for the loop run before the work goes on', async () => {
    const pause = sliceClock();
    let othersRan = 0;
    setImmediate(() => othersRan++);
    busy(SLICE_MS + 2);
    const wait = pause();
    expect(wait).toBeInstanceOf(Promise);
    expect(othersRan).toBe(0);
    await wait;
    expect(othersRan).toBe(1);
    // A new slice starts at the yield.
    expect(pause()).toBeUndefined();
  });

  it('a generator of pieces that each hold the loop yields between them, not only at its end', async () => {
    async function* pieces() {
      const pause = sliceClock();
      for (let i = 0; i < 20; i++) {
        busy(3);
        yield i;
        await pause();
      }
    }
    let turns = 0;
    const counter = setInterval(() => turns++, 0);
    let seen = 0;
    for await (const _ of pieces()) seen++;
    clearInterval(counter);
    expect(seen).toBe(20);
    // 60 ms of work in slices of SLICE_MS: the interval had several turns while it ran.
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
