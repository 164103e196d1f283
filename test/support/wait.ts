/**
 * Waits for a condition the system reaches by itself (a job finishing, a webhook arriving): polls it
 * until true. Tests assert on the state reached, never on how long it took; the bound only turns a
 * hang into a readable failure.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  boundMs = 45_000,
): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
