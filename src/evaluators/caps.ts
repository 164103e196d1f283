import type { Queryable } from '../stores/postgres.js';

/**
 * The per-project bounds on judge calls (docs/evaluators.md, "Caps and retries"), kept in Postgres so
 * they hold across worker processes: EVALUATOR_CONCURRENCY_PER_PROJECT call slots, each a row with a
 * lease (a worker that dies mid-call frees its slot when the lease ends), and a count of the calls
 * of each UTC day. A process wakes its own waiters when it frees a slot; others poll.
 */

const POLL_MS = 100;
const waiters = new Map<string, Set<() => void>>();

/** Takes a free slot of the project (one statement per slot tried); null when all are held. */
export async function tryClaimSlot(
  db: Queryable,
  projectId: string,
  executionId: string,
  slots: number,
  leaseMs: number,
): Promise<number | null> {
  for (let slot = 0; slot < slots; slot++) {
    const { rows } = await db.query<{ slot: number }>(
      `INSERT INTO evaluator_call_slots (project_id, slot, execution_id, until)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))
       ON CONFLICT (project_id, slot) DO UPDATE SET execution_id = EXCLUDED.execution_id, until = EXCLUDED.until
        WHERE evaluator_call_slots.until < now()
       RETURNING slot`,
      [projectId, slot, executionId, leaseMs],
    );
    if (rows[0]) return slot;
  }
  return null;
}

/** Waits for a slot of the project; answers it, or null when `stop()` says to give up waiting. */
export async function claimSlot(
  db: Queryable,
  projectId: string,
  executionId: string,
  slots: number,
  leaseMs: number,
  stop: () => boolean,
): Promise<number | null> {
  for (;;) {
    const slot = await tryClaimSlot(db, projectId, executionId, slots, leaseMs);
    if (slot !== null) return slot;
    if (stop()) return null;
    await new Promise<void>((resolve) => {
      const set = waiters.get(projectId) ?? new Set();
      waiters.set(projectId, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, POLL_MS);
      set.add(wake);
    });
  }
}

export async function releaseSlot(db: Queryable, projectId: string, slot: number, executionId: string): Promise<void> {
  await db.query('DELETE FROM evaluator_call_slots WHERE project_id = $1 AND slot = $2 AND execution_id = $3', [
    projectId,
    slot,
    executionId,
  ]);
  const set = waiters.get(projectId);
  const first = set?.values().next().value;
  if (first) first();
  if (set && set.size === 0) waiters.delete(projectId);
}

/** Counts one judge call of the project today; false (nothing counted) once the day's cap is reached. */
export async function countCall(db: Queryable, projectId: string, cap: number): Promise<boolean> {
  if (cap <= 0) return false;
  const { rows } = await db.query<{ calls: number }>(
    `INSERT INTO evaluator_daily_calls (project_id, day, calls) VALUES ($1, (now() AT TIME ZONE 'UTC')::date, 1)
     ON CONFLICT (project_id, day) DO UPDATE SET calls = evaluator_daily_calls.calls + 1
      WHERE evaluator_daily_calls.calls < $2
     RETURNING calls`,
    [projectId, cap],
  );
  return rows.length > 0;
}
