import type { AppContext } from '../src/context.js';
import { runTextIndexPass, TEXT_INDEX_EVERY_MS } from '../src/traces/text-index.js';
import { startPeriodicWorker, workerLog } from './periodic.js';

/**
 * The text indexer (src/traces/text-index.ts): a pass every TEXT_INDEX_EVERY_MS, one at a time per
 * process (`npm start` runs it with the API; a worker process does otherwise). Two worker processes
 * may each run a pass at once: postings and tokens written twice fold on merge, so that costs work,
 * never answers. While a backlog remains (a first start on an existing database) it is worked off in
 * chunks within one job, up to about one interval's time.
 */
export const TEXT_INDEX_QUEUE = 'text-index';

export function startTextIndexWorker(ctx: AppContext) {
  const log = workerLog(ctx, 'text index');
  return startPeriodicWorker(ctx, {
    queue: TEXT_INDEX_QUEUE,
    everyMs: TEXT_INDEX_EVERY_MS,
    log,
    what: 'the indexer',
    pass: async (deadline) => {
      for (;;) {
        const pass = await runTextIndexPass(ctx);
        if (pass.collisions) log(`${pass.collisions} hours with two traces sharing a key; the search scans them`);
        if (pass.caughtUp || performance.now() > deadline) return;
      }
    },
  });
}
