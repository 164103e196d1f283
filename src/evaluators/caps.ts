import type { Queryable } from '../stores/postgres.js';
import { batched } from './batches.js';

/**
 * The per-project bounds on judge calls (docs/evaluators.md, "Caps and retries"), kept in Postgres so
 * they hold across worker processes: EVALUATOR_CONCURRENCY_PER_PROJECT call slots, each a row with a
 * lease (a worker that dies mid-call frees its slot when the lease ends), and a count of the calls
 * of each UTC day. A process hands a slot it frees to one of its own waiters; others poll. A
 * process holding every slot of a project knows none is free without asking: its waiters then wait
 * for a hand-off or the poll without a statement, and don't race the waiter a slot was handed to.
 */

const POLL_MS = 100;
/** Per project, the waiters of this process; `handed` says a slot freed here is theirs to take. */
const waiters = new Map<string, Set<(handed: boolean) => void>>();
/** Per project, the slots this process holds now, or has handed to a waiter about to take it. */
const held = new Map<string, number>();

function drop(projectId: string): void {
  const left = (held.get(projectId) ?? 1) - 1;
  if (left > 0) held.set(projectId, left);
  else held.delete(projectId);
}

/**
 * One judge call's start, in one statement: takes the lowest free slot of the project, counts the
 * call against the day's cap (only with a slot taken, so a waiting call counts nothing) and adds one
 * to the execution's attempts (only with the call counted). Answers the slot, `capped` when the day's
 * cap is reached (the slot taken is freed again), or null when all slots are held (or
 * another worker took the free one first).
 */
async function tryTakeSlot(
  db: Queryable,
  call: { projectId: string; executionId: string; slots: number; leaseMs: number; dailyCap: number },
  handed: boolean,
): Promise<number | 'capped' | null> {
  const { rows } = await db.query<{ slot: number | null; counted: boolean }>(
    `WITH free AS (
       SELECT s FROM generate_series(0, $3::int - 1) s
        WHERE NOT EXISTS (SELECT 1 FROM evaluator_call_slots c WHERE c.project_id = $1 AND c.slot = s AND c.until >= now())
        ORDER BY s LIMIT 1),
     taken AS (
       INSERT INTO evaluator_call_slots (project_id, slot, execution_id, until)
       SELECT $1, s, $2, now() + make_interval(secs => $4::double precision / 1000) FROM free
       ON CONFLICT (project_id, slot) DO UPDATE SET execution_id = EXCLUDED.execution_id, until = EXCLUDED.until
        WHERE evaluator_call_slots.until < now()
       RETURNING slot),
     counted AS (
       INSERT INTO evaluator_daily_calls (project_id, day, calls)
       SELECT $1, (now() AT TIME ZONE 'UTC')::date, 1 FROM taken WHERE $5::int > 0
       ON CONFLICT (project_id, day) DO UPDATE SET calls = evaluator_daily_calls.calls + 1
        WHERE evaluator_daily_calls.calls < $5::int
       RETURNING calls),
     bumped AS (
       UPDATE evaluator_executions SET attempts = attempts + 1
        WHERE execution_id = $2 AND EXISTS (SELECT 1 FROM counted))
     SELECT (SELECT slot FROM taken) AS slot, EXISTS (SELECT 1 FROM counted) AS counted`,
    [call.projectId, call.executionId, call.slots, call.leaseMs, call.dailyCap],
  );
  const slot = rows[0]?.slot ?? null;
  if (slot === null) return null;
  if (!handed) held.set(call.projectId, (held.get(call.projectId) ?? 0) + 1);
  if (rows[0]!.counted) return slot;
  await releaseSlot(db, call.projectId, slot, call.executionId);
  return 'capped';
}

/** Waits for a slot of the project (see tryTakeSlot); answers it, or `capped`. */
export async function takeSlot(
  db: Queryable,
  call: { projectId: string; executionId: string; slots: number; leaseMs: number; dailyCap: number },
): Promise<number | 'capped'> {
  let handed = false;
  for (;;) {
    if (handed || (held.get(call.projectId) ?? 0) < call.slots) {
      let slot: number | 'capped' | null = null;
      try {
        slot = await tryTakeSlot(db, call, handed);
      } finally {
        // A slot handed here and not taken (another process was first, or the statement failed).
        if (handed && slot === null) drop(call.projectId);
      }
      if (slot !== null) return slot;
    }
    handed = await new Promise<boolean>((resolve) => {
      const set = waiters.get(call.projectId) ?? new Set();
      waiters.set(call.projectId, set);
      const wake = (slotHanded: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(slotHanded);
      };
      const timer = setTimeout(() => wake(false), POLL_MS);
      set.add(wake);
    });
  }
}

/** Frees slots (batches.ts), each only while the execution that took it still holds it. */
const freeSlots = batched(
  async (db: Queryable, slots: { project_id: string; slot: number; execution_id: string }[]): Promise<void[]> => {
    await db.query(
      `DELETE FROM evaluator_call_slots c USING jsonb_to_recordset($1::jsonb) AS f(project_id uuid, slot int, execution_id uuid)
        WHERE c.project_id = f.project_id AND c.slot = f.slot AND c.execution_id = f.execution_id`,
      [JSON.stringify(slots)],
    );
    return slots.map(() => undefined);
  },
);

export async function releaseSlot(db: Queryable, projectId: string, slot: number, executionId: string): Promise<void> {
  try {
    await freeSlots(db, { project_id: projectId, slot, execution_id: executionId });
  } catch (error) {
    // Freed here even so: the row's lease frees it in Postgres.
    drop(projectId);
    throw error;
  }
  const set = waiters.get(projectId);
  const first = set?.values().next().value;
  // The first waiter gets the slot (still counted held); without one, it is free.
  if (first) first(true);
  else drop(projectId);
  if (set && set.size === 0) waiters.delete(projectId);
}
