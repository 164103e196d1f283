import type { AppContext } from '../src/context.js';
import { MONTH_MERGE_EVERY_MS, runMonthMergePass } from '../src/traces/month-merge.js';
import { startPeriodicWorker, workerLog } from './periodic.js';

/**
 * Closed months of the trace rollup merged once (src/traces/month-merge.ts): a pass every
 * MONTH_MERGE_EVERY_MS, one at a time per process. Two processes' passes may merge one month at
 * once; the engine runs one merge of a partition at a time and the second finds the month settled,
 * so that costs a wait, never answers.
 */
export const MONTH_MERGE_QUEUE = 'month-merge';

export function startMonthMergeWorker(ctx: AppContext) {
  const log = workerLog(ctx, 'month merge');
  return startPeriodicWorker(ctx, {
    queue: MONTH_MERGE_QUEUE,
    everyMs: MONTH_MERGE_EVERY_MS,
    log,
    what: 'the month merge',
    pass: async () => {
      const pass = await runMonthMergePass(ctx.ch);
      if (pass.merged)
        log(`merged month ${pass.merged.partition} (${pass.merged.parts} parts) in ${pass.ms.toFixed(0)} ms`);
      for (const m of pass.waitingForDisk)
        log(`month ${m.partition} waits for disk space (${m.bytes} bytes, twice that free)`);
    },
  });
}
