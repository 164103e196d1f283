import type { AppContext } from '../src/context.js';
import { upsertScheduler } from '../src/stores/queue.js';
import { runSealPass, SEAL_EVERY_MS } from '../src/rollups/seal.js';

/**
 * The rollup sealer (src/rollups/seal.ts): a pass every SEAL_EVERY_MS from a job scheduler, one at a
 * time per process (`npm start` runs it with the API; a worker process does otherwise). Passes of
 * several processes take the sealer's lock in turn. While a backlog remains (a first start after a
 * bulk load) the next pass runs at once, within one interval's time.
 */
export const ROLLUP_SEAL_QUEUE = 'rollup-seal';
const SCHEDULER_ID = 'rollup-seal-tick';

/** The sealer's job scheduler (upsertScheduler: deadline and retries). */
function schedule(ctx: AppContext): Promise<void> {
  return upsertScheduler(
    ctx.queue,
    ROLLUP_SEAL_QUEUE,
    SCHEDULER_ID,
    { every: SEAL_EVERY_MS },
    { name: 'pass', data: {} },
  );
}

export function startRollupSealWorker(ctx: AppContext) {
  const log = (line: string) => {
    if (ctx.config.logLevel !== 'silent') process.stderr.write(`rollup seal: ${line}\n`);
  };
  const upsert = () =>
    void schedule(ctx).catch((error: unknown) =>
      log(`could not schedule the sealer: ${error instanceof Error ? error.message : String(error)}`),
    );
  // Before the worker exists (see startDetectionWorkers), and again after every Redis outage.
  upsert();
  ctx.queue.onReconnect(ROLLUP_SEAL_QUEUE, upsert);
  const worker = ctx.queue.worker(
    ROLLUP_SEAL_QUEUE,
    async () => {
      const until = performance.now() + SEAL_EVERY_MS;
      for (;;) {
        const pass = await runSealPass(ctx);
        if (pass.redo) log(`redid the range of a pass that failed half-way (${pass.spans} spans)`);
        if (pass.caughtUp || performance.now() > until) return;
      }
    },
    { concurrency: 1, drainDelay: 1 },
  );
  worker.on('failed', (job, error) => log(`pass ${job?.id ?? '?'} failed: ${error.message}`));
  return worker;
}
