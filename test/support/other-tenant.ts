import type { LightMyRequestResponse } from 'fastify';

/**
 * Issue 20's availability tests: while one caller's large work runs, another tenant's requests are
 * answered within this bound (the behaviour under test, kept generous for a loaded machine).
 */
export const OTHER_TENANT_BOUND_MS = 5_000;

/** Runs one injected request and answers its status and how long it took. */
export async function timed(run: () => Promise<LightMyRequestResponse>): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await run();
  return { status: res.statusCode, ms: performance.now() - started };
}
