import type { AppContext } from '../context.js';

/**
 * Tests only (config.idempotencyTestCrash, test/faults/idempotency-crash.test.ts): the process dies
 * here, as a power cut or OOM kill would: right before a keyed create's commit, or right after it
 * (before a byte of the answer goes out).
 */
export async function crashPoint(ctx: AppContext, point: 'before_commit' | 'after_commit'): Promise<void> {
  if (ctx.config.idempotencyTestCrash !== point) return;
  process.kill(process.pid, 'SIGKILL');
  await new Promise(() => {});
}
