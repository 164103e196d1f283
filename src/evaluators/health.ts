import { newId } from '../ids.js';
import type { Queryable } from '../stores/postgres.js';

/**
 * What the project sees when an evaluator is in trouble (docs/evaluators.md, "Auto-pause" and
 * "Watchdog"): a signal in the project's signal list, under the project's "Evaluator health"
 * detector (created, disabled, the first time one is needed: a signal belongs to a detector, and a
 * disabled error detector runs no passes). One signal per evaluator and kind (its group key), opened
 * when raised and resolved when the evaluator recovers; raised again, it reopens.
 */

export const HEALTH_DETECTOR_NAME = 'Evaluator health';
export type HealthKind = 'paused' | 'watchdog';

async function healthDetector(db: Queryable, projectId: string): Promise<string> {
  const found = await db.query<{ id: string }>(
    `SELECT id FROM detectors WHERE project_id = $1 AND name = $2 AND type = 'error' AND NOT is_default
      ORDER BY created_at, id LIMIT 1`,
    [projectId, HEALTH_DETECTOR_NAME],
  );
  if (found.rows[0]) return found.rows[0].id;
  const id = newId();
  await db.query(
    `INSERT INTO detectors (id, project_id, name, type, config, enabled, is_default)
     VALUES ($1, $2, $3, 'error', '{}'::jsonb, false, false)`,
    [id, projectId, HEALTH_DETECTOR_NAME],
  );
  return id;
}

const groupKey = (evaluatorId: string, kind: HealthKind) => `evaluator:${evaluatorId}:${kind}`;

/** Opens (or reopens) the evaluator's signal of this kind; answers its id. */
export async function raiseSignal(
  db: Queryable,
  projectId: string,
  evaluator: { id: string; name: string },
  kind: HealthKind,
  title: string,
): Promise<string> {
  const detectorId = await healthDetector(db, projectId);
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO signals (id, project_id, detector_id, group_key, group_fields, title, first_seen_at, last_seen_at, hit_count, rca_state)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, now(), now(), 1, 'none')
     ON CONFLICT (detector_id, group_key) DO UPDATE SET
       title = EXCLUDED.title, last_seen_at = now(), hit_count = signals.hit_count + 1,
       status = CASE WHEN signals.status = 'resolved' THEN 'open' ELSE signals.status END,
       reopen_count = signals.reopen_count + CASE WHEN signals.status = 'resolved' THEN 1 ELSE 0 END,
       resolved_at = CASE WHEN signals.status = 'resolved' THEN NULL ELSE signals.resolved_at END,
       status_changed_at = CASE WHEN signals.status = 'resolved' THEN now() ELSE signals.status_changed_at END,
       update_time = now()
     RETURNING id`,
    [
      newId(),
      projectId,
      detectorId,
      groupKey(evaluator.id, kind),
      JSON.stringify({ evaluator_id: evaluator.id, evaluator_name: evaluator.name, kind }),
      title,
    ],
  );
  return rows[0]!.id;
}

/** Resolves the evaluator's open signal of this kind, if any (it recovered). */
export async function clearSignal(
  db: Queryable,
  projectId: string,
  evaluatorId: string,
  kind: HealthKind,
): Promise<void> {
  await db.query(
    `UPDATE signals SET status = 'resolved', resolved_at = now(), resolution_reason = 'fixed_elsewhere',
            status_changed_at = now(), update_time = now()
      WHERE project_id = $1 AND group_key = $2 AND status = 'open'
        AND detector_id IN (SELECT id FROM detectors WHERE project_id = $1 AND name = $3)`,
    [projectId, groupKey(evaluatorId, kind), HEALTH_DETECTOR_NAME],
  );
}
