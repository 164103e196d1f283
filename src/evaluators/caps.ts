import type { Queryable } from '../stores/postgres.js';

/**
 * The per-project bounds on judge calls (docs/evaluators.md, "Caps and retries"), kept in Postgres so
 * they hold across worker processes: EVALUATOR_CONCURRENCY_PER_PROJECT call slots, each a row with a
 * lease (a worker that dies mid-call frees its slot when the lease ends), and a count of the calls
 * of each UTC day. Taking a call is one statement (a free slot, the day's count and the execution's
 * attempts together): a judge call costs two statements of its own, take and release, whatever the
 * number of slots. A process wakes its own waiters when it frees a slot, at once; a slot freed by
 * another process (or a lease that ran out) is found by a poll every POLL_MS.
 */

const POLL_MS = 500;
const waiters = new Map<string, Set<() => void>>();

export type TakenCall = { slot: number } | { slot: null; capped: boolean };

/**
 * One statement: takes the project's lowest free slot (none while the day's cap is reached), counts
 * the call in the day's calls and adds one to the execution's attempts. Answers the slot, or why
 * there is none: all held, or the cap reached (then nothing was counted or held).
 */
export async function tryTakeCall(
  db: Queryable,
  projectId: string,
  executionId: string,
  limits: { slots: number; leaseMs: number; dailyCap: number },
): Promise<TakenCall> {
  if (limits.dailyCap <= 0) return { slot: null, capped: true };
  const { rows } = await db.query<{ slot: number | null; counted: boolean; capped: boolean }>(
    `WITH today AS (SELECT (now() AT TIME ZONE 'UTC')::date AS day),
     capped AS (
       SELECT EXISTS (SELECT 1 FROM evaluator_daily_calls d, today
                       WHERE d.project_id = $1 AND d.day = today.day AND d.calls >= $5) AS capped),
     free AS (
       SELECT s AS slot FROM generate_series(0, $3::int - 1) s, capped
        WHERE NOT capped.capped
          AND NOT EXISTS (SELECT 1 FROM evaluator_call_slots c WHERE c.project_id = $1 AND c.slot = s AND c.until >= now())
        ORDER BY s LIMIT 1),
     taken AS (
       INSERT INTO evaluator_call_slots (project_id, slot, execution_id, until)
       SELECT $1, slot, $2, now() + make_interval(secs => $4::double precision / 1000) FROM free
       ON CONFLICT (project_id, slot) DO UPDATE SET execution_id = EXCLUDED.execution_id, until = EXCLUDED.until
        WHERE evaluator_call_slots.until < now()
       RETURNING slot),
     counted AS (
       INSERT INTO evaluator_daily_calls (project_id, day, calls)
       SELECT $1, today.day, 1 FROM taken, today
       ON CONFLICT (project_id, day) DO UPDATE SET calls = evaluator_daily_calls.calls + 1
        WHERE evaluator_daily_calls.calls < $5
       RETURNING calls),
     bumped AS (
       UPDATE evaluator_executions SET attempts = attempts + 1
        WHERE execution_id = $2 AND EXISTS (SELECT 1 FROM counted)
       RETURNING 1)
     SELECT (SELECT slot FROM taken) AS slot, EXISTS (SELECT 1 FROM counted) AS counted,
            (SELECT capped FROM capped) AS capped, (SELECT count(*) FROM bumped) AS bumped`,
    [projectId, executionId, limits.slots, limits.leaseMs, limits.dailyCap],
  );
  const row = rows[0]!;
  if (row.slot !== null && row.counted) return { slot: row.slot };
  if (row.slot !== null) {
    // Another process counted the day's last call between our look and our count: give the slot back.
    await releaseSlot(db, projectId, row.slot, executionId);
    return { slot: null, capped: true };
  }
  return { slot: null, capped: row.capped };
}

/**
 * Waits for a slot of the project and counts the call; answers the slot, `capped` when the day's
 * cap is reached (nothing counted), or null when `stop()` says to give up waiting.
 */
export async function takeCall(
  db: Queryable,
  projectId: string,
  executionId: string,
  limits: { slots: number; leaseMs: number; dailyCap: number },
  stop: () => boolean,
): Promise<number | 'capped' | null> {
  for (;;) {
    const taken = await tryTakeCall(db, projectId, executionId, limits);
    if (taken.slot !== null) return taken.slot;
    if (taken.capped) return 'capped';
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
