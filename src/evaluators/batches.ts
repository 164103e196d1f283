/**
 * Group commit for the executions' own writes (claim, finish, slot release, scores): a call made
 * while the previous one of its kind is running waits for it, then goes out with every call that
 * arrived meanwhile as one statement. A lone call goes out at once, so nothing waits on a quiet
 * worker. The embedded stores run one statement at a time (one PGlite session, one chdb session),
 * each costing about the same whatever its row count, so under load this keeps the judge calls'
 * slots busy (bench/evaluator-throughput.ts).
 */

/** Calls per statement: a backlog is written in several. */
const MAX_BATCH = 200;

type Waiting<I, O> = { item: I; resolve: (out: O) => void; reject: (error: unknown) => void };

/** `run` answers one output per item, in the items' order; batches are per `db` (a pool, a runtime). */
export function batched<D extends object, I, O>(
  run: (db: D, items: I[]) => Promise<O[]>,
): (db: D, item: I) => Promise<O> {
  const byDb = new WeakMap<D, { waiting: Waiting<I, O>[]; running: boolean }>();
  const drain = async (db: D, state: { waiting: Waiting<I, O>[]; running: boolean }) => {
    state.running = true;
    while (state.waiting.length > 0) {
      const batch = state.waiting.splice(0, MAX_BATCH);
      try {
        const out = await run(
          db,
          batch.map((w) => w.item),
        );
        batch.forEach((w, i) => w.resolve(out[i]!));
      } catch (error) {
        for (const w of batch) w.reject(error);
      }
    }
    state.running = false;
  };
  return (db, item) =>
    new Promise<O>((resolve, reject) => {
      let state = byDb.get(db);
      if (!state) byDb.set(db, (state = { waiting: [], running: false }));
      state.waiting.push({ item, resolve, reject });
      if (!state.running) void drain(db, state);
    });
}
