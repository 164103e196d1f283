import type { AppContext } from '../src/context.js';
import { upsertScheduler } from '../src/stores/queue.js';
import { MONTH_MERGE_EVERY_MS, runMonthMergePass } from '../src/traces/month-merge.js';

/**
 * Closed months of the trace rollup merged once (src/traces/month-merge.ts): a pass every
 * MONTH_MERGE_EVERY_MS from a job scheduler, one at a time per process. Two processes' passes may
 * merge one month at once; the engine runs one merge of a partition at a time and the second finds
 * the month settled, so that costs a wait, never answers.
 */
export const MONTH_MERGE_QUEUE = 'month-merge';
const SCHEDULER_ID = 'month-merge-tick';

function schedule(ctx: AppContext): Promise<void> {
  return upsertScheduler(
    ctx.queue,
    MONTH_MERGE_QUEUE,
    SCHEDULER_ID,
    { every: MONTH_MERGE_EVERY_MS },
    { name: 'pass', data: {} },
  );
}

export function startMonthMergeWorker(ctx: AppContext) {
  const log = (line: string) => {
    if (ctx.config.logLevel !== 'silent') process.stderr.write(`month merge: ${line}\n`);
  };
  const upsert = () =>
    void schedule(ctx).catch((error: unknown) =>
      log(`could not schedule the month merge: ${error instanceof Error ? error.message : String(error)}`),
    );
  // Before the worker exists (see startDetectionWorkers), and again after every Redis outage.
  upsert();
  ctx.queue.onReconnect(MONTH_MERGE_QUEUE, upsert);
  const worker = ctx.queue.worker(
    MONTH_MERGE_QUEUE,
    async () => {
      const pass = await runMonthMergePass(ctx.ch);
      if (pass.merged)
        log(`merged month ${pass.merged.partition} (${pass.merged.parts} parts) in ${pass.ms.toFixed(0)} ms`);
      for (const m of pass.waitingForDisk)
        log(`month ${m.partition} waits for disk space (${m.bytes} bytes, twice that free)`);
    },
    { concurrency: 1, drainDelay: 1 },
  );
  worker.on('failed', (job, error) => log(`pass ${job?.id ?? '?'} failed: ${error.message}`));
  return worker;
}
