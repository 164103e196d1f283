import crypto from 'node:crypto';
import type { ClickHouseStore } from '../stores/clickhouse.js';

/**
 * Public SQL's deadline, kept by the application (issue 20). The engine checks `max_execution_time`
 * only between blocks of rows, so a query whose one block holds expensive per-row work (the issue's
 * editDistance over 40,000-character strings) ran 220 s past a 10 s limit. So:
 *
 * - the caller is answered at the limit, whatever the engine is doing (`withDeadline`);
 * - the engine is told to stop the query: `KILL QUERY` on the tag the query carries in `log_comment`
 *   (`killTagged`). Measured on chdb 3.4: the embedded engine lists every session's queries in
 *   `system.processes` and honours KILL QUERY from another session, as a server does. Neither can
 *   interrupt a block already being computed (chdb's C ABI has no interrupt either; a query's
 *   abort signal only settles the JavaScript promise early), so the kill lands at the next block;
 * - the scheduler's lease is held until the engine has really finished (service.ts), so the
 *   caller's share stays taken by the query it can no longer see, and other tenants keep theirs;
 * - the guard refuses the per-row work whose cost has no bound (costs.ts), and the query's settings
 *   keep blocks small, which is what bounds how long the engine takes to reach the next block.
 *
 * A separate process per query would be the only way to end the embedded engine's work mid-block;
 * it was not taken: a second engine on the same data directory does not see the parts the first
 * writes after it started, and one per query costs a start-up of the engine on every call.
 */

/** A query's tag: `log_comment`, which callers can't set (the guard refuses SETTINGS). */
export function queryTag(): string {
  return `sightline-sql-${crypto.randomUUID()}`;
}

const TAG = /^sightline-sql-[0-9a-f-]{36}$/;

/** Asks the engine to stop the tagged query; returns once the request was made (ASYNC). */
export async function killTagged(ch: ClickHouseStore, tag: string): Promise<void> {
  if (!TAG.test(tag)) throw new Error('unexpected query tag');
  const on = ch.cluster ? ` ON CLUSTER '${ch.cluster}'` : '';
  // A literal, not a query parameter: the embedded engine runs parameterised queries one at a time.
  await ch.client.command({ query: `KILL QUERY${on} WHERE Settings['log_comment'] = '${tag}' ASYNC` });
}

export class DeadlineExceeded extends Error {
  constructor(readonly limitMs: number) {
    super(`deadline of ${limitMs} ms exceeded`);
  }
}

/**
 * `running`'s outcome, or DeadlineExceeded once `limitMs` have passed (then `onExpire` runs, and
 * `running` is left to finish on its own; its failure is not reported twice).
 */
export function withDeadline<T>(running: Promise<T>, limitMs: number, onExpire: () => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      if (done) return;
      done = true;
      reject(new DeadlineExceeded(limitMs));
      onExpire();
    }, limitMs);
    running.then(
      (value) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (done) return;
        done = true;
        reject(error);
      },
    );
  });
}
