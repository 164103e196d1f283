/**
 * Waits for a condition the system reaches by itself (a job finishing, a webhook arriving): polls it
 * until true. Tests assert on the state reached, never on how long it took; the bound only turns a
 * hang into a readable failure.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  boundMs = 45_000,
  everyMs = 25,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${boundMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * As waitUntil, for a check that throws while what it asks is still away (a store being stopped or
 * started, a server not yet listening): a throw counts as "not yet".
 */
export function waitFor(check: () => boolean | Promise<boolean>, what: string, boundMs = 30_000): Promise<void> {
  const settled = async () => {
    try {
      return await check();
    } catch {
      return false;
    }
  };
  return waitUntil(settled, what, boundMs, 100);
}
