import type { Queryable } from '../stores/postgres.js';
import { measureOf, type AlertStatus, type NoDataMode, type RenotifyMode, type Severity } from './schema.js';
import type { MeasuredAlert } from './queries.js';

/**
 * Which worker evaluates which alert for which window (docs/design.md, decision 9). A tick claims due
 * alerts with a lease: one short UPDATE over rows picked with FOR UPDATE SKIP LOCKED, so two workers
 * claiming at once never take the same alert, and no transaction stays open while ClickHouse answers
 * (embedded PGlite runs one transaction at a time; a long one would stall the API).
 *
 * An alert is due for window end E when it is not paused, its project is live, no evaluation of E or
 * a later window was committed, and nobody else holds a live lease on it for E. The token is the tick
 * job's id: the same job re-run after a crash takes its own leases back at once; anyone else waits
 * for the lease to expire. The commit (commit.ts) only ever moves `evaluated_window_end` forward, so
 * a slow worker finishing an older window late changes nothing.
 */

export const LEASE_SECONDS = 120;

export type ClaimedAlert = MeasuredAlert & {
  name: string;
  threshold: number;
  no_data_mode: NoDataMode;
  renotify_mode: RenotifyMode;
  renotify_interval_minutes: number;
  severity: Severity;
  webhook_url: string | null;
  status: AlertStatus;
  spec_version: number;
  alerted_at: Date | null;
};

export const EVALUATION_COLUMNS = `id, project_id, name, view, measure, aggregation, threshold, threshold_operator, time_window, predicates,
  group_by, no_data_mode, renotify_mode, renotify_interval_minutes, severity, webhook_url, status, spec_version, alerted_at`;

export type ClaimRequest = {
  windowEndMs: number;
  token: string;
  limit: number;
  /** Alerts this tick already handled (committed, or dropped because they changed meanwhile). */
  exclude: string[];
  /** Only these projects (tests, and a manual "evaluate now"); all when absent. */
  projectIds?: string[];
};

// $1 window end (epoch ms), $2 token, $3 batch size, $4 lease seconds, $5 project ids or null, $6 ids to skip
const CLAIM_SQL = `
UPDATE alerts a SET claim_window_end = to_timestamp($1::double precision / 1000), claim_token = $2,
                    claim_until = now() + make_interval(secs => $4)
 WHERE a.id IN (
   SELECT c.id FROM alerts c JOIN projects p ON p.id = c.project_id AND p.deleted_at IS NULL
    WHERE c.status <> 'PAUSED'
      AND (c.evaluated_window_end IS NULL OR c.evaluated_window_end < to_timestamp($1::double precision / 1000))
      AND (c.claim_until IS NULL OR c.claim_until < now() OR c.claim_token = $2
           OR c.claim_window_end < to_timestamp($1::double precision / 1000))
      AND ($5::uuid[] IS NULL OR c.project_id = ANY($5::uuid[]))
      AND NOT (c.id = ANY($6::uuid[]))
    -- By project, so alerts that share a query tend to land in one batch.
    ORDER BY c.project_id, c.id
    LIMIT $3
    FOR UPDATE OF c SKIP LOCKED)
RETURNING ${EVALUATION_COLUMNS.split(',')
  .map((c) => `a.${c.trim()}`)
  .join(', ')}`;

export async function claimAlerts(db: Queryable, r: ClaimRequest): Promise<ClaimedAlert[]> {
  const { rows } = await db.query<ClaimedAlert>(CLAIM_SQL, [
    r.windowEndMs,
    r.token,
    r.limit,
    LEASE_SECONDS,
    r.projectIds ?? null,
    r.exclude,
  ]);
  // A SCORES alert's stored measure names its score (schema.ts, storedMeasure).
  return rows.map((row) => ({ ...row, ...measureOf(row.view ?? 'SPANS', row.measure) }));
}

/** Gives back leases a stopped tick will not use, so another worker need not wait for them to expire. */
export async function releaseClaims(db: Queryable, token: string, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    'UPDATE alerts SET claim_token = NULL, claim_until = NULL, claim_window_end = NULL WHERE claim_token = $1 AND id = ANY($2::uuid[])',
    [token, ids],
  );
}
