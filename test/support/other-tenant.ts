import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, PUBLIC, type Harness } from './harness.js';

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

/**
 * Issue 30's event-loop tests: runs `hostile` and, until it is answered, another tenant's
 * `GET /traces?limit=1` one after another (each must answer 200); answers how long the hostile
 * request took and the slowest of the other tenant's answers.
 */
export async function whileHostile(
  harness: Harness,
  bystanderKey: string,
  hostile: () => Promise<{ statusCode: number; body: string }>,
) {
  let done = false;
  const started = performance.now();
  const attack = hostile().finally(() => (done = true));
  const answered: number[] = [];
  do {
    const t = performance.now();
    const res = await call(harness.api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: bystanderKey,
      query: { limit: '1' },
    });
    expect(res.statusCode, res.body).toBe(200);
    answered.push(performance.now() - t);
  } while (!done);
  const res = await attack;
  return { res, hostileMs: performance.now() - started, slowestOther: Math.max(...answered) };
}
