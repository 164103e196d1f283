import type { AppContext } from '../src/context.js';
import { upsertScheduler } from '../src/stores/queue.js';

/** A worker's log: lines to stderr under its label, none when logging is silent. */
export function workerLog(ctx: AppContext, label: string): (line: string) => void {
  return (line) => {
    if (ctx.config.logLevel !== 'silent') process.stderr.write(`${label}: ${line}\n`);
  };
}

/**
 * A job that runs a pass every `everyMs`, one at a time per process (the rollup sealer, the text
 * indexer, the closed-month merge). Its scheduler (upsertScheduler: deadline and retries) is set
 * before the worker exists (see startDetectionWorkers) and again after every Redis outage, which can
 * lose it. `pass` may loop while a backlog remains, up to `everyMs` of work, so a backlog is worked
 * off without waiting for the next tick. A failed pass leaves a line; the next tick runs again.
 */
export function startPeriodicWorker(
  ctx: AppContext,
  options: {
    queue: string;
    everyMs: number;
    log: (line: string) => void;
    /** What a failed scheduling is about: "could not schedule <what>". */
    what: string;
    pass: (deadline: number) => Promise<void>;
  },
) {
  const { queue, everyMs, log } = options;
  const upsert = () =>
    void upsertScheduler(ctx.queue, queue, `${queue}-tick`, { every: everyMs }, { name: 'pass', data: {} }).catch(
      (error: unknown) =>
        log(`could not schedule ${options.what}: ${error instanceof Error ? error.message : String(error)}`),
    );
  upsert();
  ctx.queue.onReconnect(queue, upsert);
  const worker = ctx.queue.worker(queue, () => options.pass(performance.now() + everyMs), {
    concurrency: 1,
    drainDelay: 1,
  });
  worker.on('failed', (job, error) => log(`pass ${job?.id ?? '?'} failed: ${error.message}`));
  return worker;
}
