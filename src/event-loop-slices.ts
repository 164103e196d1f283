/**
 * Long synchronous work on the one event loop, cut into slices (docs/limits.md, "Bounded by cost").
 * Every tenant's requests are served by one loop: a caller-sized loop (10,000 spans of one ingest
 * request, each priced against a project's patterns) yields to the loop every SLICE_MS, so another
 * tenant's request waits at most one slice behind it instead of behind the whole request.
 */

/** How long one slice may hold the loop before it yields. */
export const SLICE_MS = 8;
/** Items between two looks at the clock (a look costs more than a cheap item). */
const CHECK_EVERY = 32;

/** Resolves after the requests that were waiting for the loop have had their turn. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Calls `fn` on each item in order, yielding to the loop whenever a slice has run SLICE_MS. */
export async function forEachInSlices<T>(items: readonly T[], fn: (item: T, index: number) => void): Promise<void> {
  const pause = sliceClock();
  for (let i = 0; i < items.length; i++) {
    fn(items[i]!, i);
    if ((i + 1) % CHECK_EVERY !== 0) continue;
    const due = pause();
    if (due) await due;
  }
}

/**
 * The same slices for work that is not an array walk (a generator feeding a streamed answer, whose
 * consumer runs between its pieces): call the answered function after each piece; once SLICE_MS have
 * passed since the last yield, it answers a promise that yields to the loop (await it).
 */
export function sliceClock(): () => Promise<void> | undefined {
  let sliceStart = performance.now();
  return () => {
    if (performance.now() - sliceStart < SLICE_MS) return undefined;
    return yieldToLoop().then(() => {
      sliceStart = performance.now();
    });
  };
}
