import type { AppContext } from '../src/context.js';
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
const ATTEMPT_TIMEOUT_MS = 10_000;

async function schedule(ctx: AppContext, attempts = 8): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let timer: NodeJS.Timeout | undefined;
    try {
      // As scheduleDetection (src/signals/schedule.ts): the embedded queue may fail or never answer
      // an upsert while the workers' connections are being set up, so each attempt has a deadline.
      const upsert = ctx.queue
        .queue(TEXT_INDEX_QUEUE)
        .upsertJobScheduler(
          SCHEDULER_ID,
          { every: TEXT_INDEX_EVERY_MS },
          { name: 'pass', data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
        );
      upsert.catch(() => {});
      await Promise.race([
        upsert,
        new Promise(
          (_, reject) =>
            (timer = setTimeout(() => reject(new Error('the queue did not answer in time')), ATTEMPT_TIMEOUT_MS)),
        ),
      ]);
      return;
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** attempt, 10_000)));
    } finally {
      clearTimeout(timer);
    }
  }
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
