import type { AppContext } from '../context.js';
import { clearSignal, raiseSignal } from './health.js';

/**
 * The watchdog (docs/evaluators.md, "Watchdog"): at most once a minute per enabled evaluator, it looks
 * at the last hour of executions. The evaluator is unwell when more than half of the executions
 * that finished in the hour are errors (at least MIN_FINISHED of them), or when traces were enrolled
 * in the hour but none was scored in it although the evaluator has been running for over an hour.
 * Unwell, its signal is raised once (a signal, like a detector's finding); well again, it is resolved.
 */

export const MIN_FINISHED = 3;
export const WATCHDOG_EVERY_MS = 60_000;

type Health = {
  id: string;
  name: string;
  project_id: string;
  watchdog_raised: boolean;
  finished: string | number;
  errors: string | number;
  completed: string | number;
  enrolled: string | number;
  old_enough: boolean;
};

export async function runWatchdog(
  ctx: AppContext,
  options: { projectIds?: readonly string[]; force?: boolean } = {},
): Promise<{ raised: string[]; cleared: string[] }> {
  const db = ctx.pg.pool;
  const { rows } = await db.query<Health>(
    `WITH due AS (
       UPDATE evaluators SET watchdog_checked_at = now()
        WHERE enabled AND ($1::uuid[] IS NULL OR project_id = ANY($1::uuid[]))
          AND ($2 OR watchdog_checked_at IS NULL OR watchdog_checked_at < now() - make_interval(secs => $3::double precision / 1000))
        RETURNING id, name, project_id, watchdog_raised, enrol_from)
     SELECT d.id, d.name, d.project_id, d.watchdog_raised, d.enrol_from <= now() - interval '1 hour' AS old_enough,
            count(*) FILTER (WHERE x.finished_at >= now() - interval '1 hour' AND x.status IN ('completed', 'error')) AS finished,
            count(*) FILTER (WHERE x.finished_at >= now() - interval '1 hour' AND x.status = 'error') AS errors,
            count(*) FILTER (WHERE x.finished_at >= now() - interval '1 hour' AND x.status = 'completed') AS completed,
            count(*) FILTER (WHERE x.created_at >= now() - interval '1 hour') AS enrolled
       FROM due d LEFT JOIN evaluator_executions x
         ON x.evaluator_id = d.id AND (x.created_at >= now() - interval '1 hour' OR x.finished_at >= now() - interval '1 hour')
      GROUP BY d.id, d.name, d.project_id, d.watchdog_raised, d.enrol_from`,
    [options.projectIds ? [...options.projectIds] : null, options.force ?? false, WATCHDOG_EVERY_MS],
  );
  const raised: string[] = [];
  const cleared: string[] = [];
  for (const r of rows) {
    const finished = Number(r.finished);
    const errorShare = finished >= MIN_FINISHED && Number(r.errors) / finished > 0.5;
    const silent = r.old_enough && Number(r.enrolled) > 0 && Number(r.completed) === 0;
    const unwell = errorShare || silent;
    if (unwell && !r.watchdog_raised) {
      const why = errorShare
        ? 'more than half of its executions in the last hour ended in an error'
        : 'it scored none of the traces it enrolled in the last hour';
      await raiseSignal(db, r.project_id, r, 'watchdog', `Evaluator "${r.name}" stopped scoring: ${why}`);
      await db.query('UPDATE evaluators SET watchdog_raised = true WHERE id = $1', [r.id]);
      raised.push(r.id);
    } else if (!unwell && r.watchdog_raised) {
      await clearSignal(db, r.project_id, r.id, 'watchdog');
      await db.query('UPDATE evaluators SET watchdog_raised = false WHERE id = $1', [r.id]);
      cleared.push(r.id);
    }
  }
  return { raised, cleared };
}
