import type { AppContext } from '../src/context.js';
import { runSealPass, SEAL_EVERY_MS } from '../src/rollups/seal.js';
import { startPeriodicWorker, workerLog } from './periodic.js';

/**
 * The rollup sealer (src/rollups/seal.ts): a pass every SEAL_EVERY_MS, one at a time per process
 * (`npm start` runs it with the API; a worker process does otherwise). Passes of several processes
 * take the sealer's lock in turn. While a backlog remains (a first start after a bulk load) the next
 * pass runs at once, within one interval's time.
 */
export const ROLLUP_SEAL_QUEUE = 'rollup-seal';

export function startRollupSealWorker(ctx: AppContext) {
  const log = workerLog(ctx, 'rollup seal');
  return startPeriodicWorker(ctx, {
    queue: ROLLUP_SEAL_QUEUE,
    everyMs: SEAL_EVERY_MS,
    log,
    what: 'the sealer',
    pass: async (deadline) => {
      for (;;) {
        const pass = await runSealPass(ctx);
        if (pass.redo) log(`redid the range of a pass that failed half-way (${pass.spans} spans)`);
        if (pass.caughtUp || performance.now() > deadline) return;
      }
    },
  });
}
