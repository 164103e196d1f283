import type { AppContext } from '../src/context.js';
import { upsertScheduler } from '../src/stores/queue.js';
import { runTextIndexPass, TEXT_INDEX_EVERY_MS } from '../src/traces/text-index.js';

/**
 * The text indexer (src/traces/text-index.ts): a pass every TEXT_INDEX_EVERY_MS from a job
 * scheduler, one at a time per process (`npm start` runs it with the API; a worker process does
 * otherwise). Two worker processes may each run a pass at once: postings and tokens written twice
 * fold on merge, so that costs work, never answers. While a backlog remains (a first start on an
 * existing database) the next pass is asked for at once.
 */
export const TEXT_INDEX_QUEUE = 'text-index';
const SCHEDULER_ID = 'text-index-tick';

/** The indexer's job scheduler (upsertScheduler: deadline and retries). */
function schedule(ctx: AppContext): Promise<void> {
  return upsertScheduler(
    ctx.queue,
    TEXT_INDEX_QUEUE,
    SCHEDULER_ID,
    { every: TEXT_INDEX_EVERY_MS },
    { name: 'pass', data: {} },
  );
}

export function startTextIndexWorker(ctx: AppContext) {
  const log = (line: string) => {
    if (ctx.config.logLevel !== 'silent') process.stderr.write(`text index: ${line}\n`);
  };
  const upsert = () =>
    void schedule(ctx).catch((error: unknown) =>
      log(`could not schedule the indexer: ${error instanceof Error ? error.message : String(error)}`),
    );
  // Before the worker exists (see startDetectionWorkers), and again after every Redis outage.
  upsert();
  ctx.queue.onReconnect(TEXT_INDEX_QUEUE, upsert);
  const worker = ctx.queue.worker(
    TEXT_INDEX_QUEUE,
    async () => {
      // A backlog is worked off in chunks within one job, up to about one interval's time.
      const until = performance.now() + TEXT_INDEX_EVERY_MS;
      for (;;) {
        const pass = await runTextIndexPass(ctx);
        if (pass.collisions) log(`${pass.collisions} hours with two traces sharing a key; the search scans them`);
        if (pass.caughtUp || performance.now() > until) return;
      }
    },
    { concurrency: 1, drainDelay: 1 },
  );
  worker.on('failed', (job, error) => log(`pass ${job?.id ?? '?'} failed: ${error.message}`));
  return worker;
}
