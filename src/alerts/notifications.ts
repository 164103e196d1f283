import type { AppContext } from '../context.js';
import type { Queryable } from '../stores/postgres.js';
import { windowStart } from './clock.js';
import type { ClaimedAlert } from './claims.js';
import { deliver, signBody } from './webhook.js';

/**
 * Alert webhooks (issue 10, "Webhook notifications"). The evaluation commit writes one
 * `alert_notifications` row per announced transition, keyed by (alert, group, window end); this module
 * turns rows into BullMQ jobs and jobs into signed POSTs.
 *
 * - The job id is derived from the row id, and the row is the truth: a job that runs twice, or is
 *   re-enqueued by the sweeper after a crash between commit and enqueue, finds the row delivered and
 *   does nothing.
 * - An attempt first takes the row (attempts + 1, a short lease), so two runners never POST at once.
 * - Every attempt is recorded on the row and on the alert (`last_notify_at/status/error`): status
 *   `delivered`, `retrying` (this attempt failed, another follows with exponential backoff) or
 *   `failed` (attempts used up, or a refusal no retry can fix: a private address, a 4xx).
 * - Delivery is at least once: when a receiver answers but we crash before recording it, the next
 *   attempt sends the same body again. `X-Sightline-Delivery` (and `id` in the body) lets a receiver
 *   drop a repeat; the signature and the body are the same bytes every time.
 */

export const NOTIFY_QUEUE = 'alert-notifications';
export type NotifyJob = { notification_id: string };

export type NotificationBodyInput = {
  id: string;
  alert: ClaimedAlert;
  groupKey: string;
  state: string;
  previousState: string;
  value: number | null;
  why: string;
  windowEndMs: number;
  webUrl: string;
};

/**
 * The JSON a receiver gets (docs/alerts.md, "Notifications"). A SCORES alert's measure is `value`, and
 * `score_name` follows it naming the score; other alerts' bodies have no `score_name`.
 */
export function notificationBody(n: NotificationBodyInput): string {
  const a = n.alert;
  return JSON.stringify({
    id: n.id,
    alert_id: a.id,
    alert_name: a.name,
    project_id: a.project_id,
    state: n.state,
    previous_state: n.previousState,
    value: n.value,
    threshold: a.threshold,
    threshold_operator: a.threshold_operator,
    measure: a.measure,
    ...(a.view === 'SCORES' ? { score_name: a.score_name ?? null } : {}),
    aggregation: a.aggregation,
    window: a.time_window,
    window_start: new Date(windowStart(a.time_window, n.windowEndMs)).toISOString(),
    window_end: new Date(n.windowEndMs).toISOString(),
    severity: a.severity,
    group: a.group_by ? { field: a.group_by, value: n.groupKey } : null,
    reason: n.why,
    url: `${n.webUrl}/projects/${a.project_id}/alerts/${a.id}`,
  });
}

export function notificationJobId(notificationId: string): string {
  return `alert-notify-${notificationId}`;
}

export async function enqueueNotifications(ctx: AppContext, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const { webhookAttempts, webhookBackoffMs } = ctx.config.alerts;
  await ctx.queue.queue<NotifyJob>(NOTIFY_QUEUE).addBulk(
    ids.map((id) => ({
      name: 'deliver',
      data: { notification_id: id },
      opts: {
        jobId: notificationJobId(id),
        attempts: webhookAttempts,
        backoff: { type: 'exponential', delay: webhookBackoffMs },
        removeOnComplete: 1000,
        removeOnFail: 5000,
      },
    })),
  );
}

/**
 * Pending notifications whose job may have been lost (a crash between the commit and the enqueue):
 * enqueued again under the same job id, which BullMQ ignores while that job exists (waiting, active,
 * or delayed for a retry). A pending row never has a finished job: a job finishes only after it has
 * recorded the row delivered or failed.
 */
export async function sweepNotifications(ctx: AppContext, projectIds?: string[]): Promise<number> {
  const { rows } = await ctx.pg.pool.query<{ id: string }>(
    `SELECT n.id FROM alert_notifications n JOIN alerts a ON a.id = n.alert_id
      WHERE n.status = 'pending' AND (n.sending_until IS NULL OR n.sending_until < now())
        AND ($1::uuid[] IS NULL OR a.project_id = ANY($1::uuid[]))
      ORDER BY n.created_at LIMIT 500`,
    [projectIds ?? null],
  );
  await enqueueNotifications(
    ctx,
    rows.map((r) => r.id),
  );
  // Delivered and failed notifications are kept as long as the history they belong to.
  await ctx.pg.pool.query(
    "DELETE FROM alert_notifications WHERE id IN (SELECT id FROM alert_notifications WHERE status <> 'pending' AND created_at < now() - interval '30 days' LIMIT 1000)",
  );
  return rows.length;
}

export type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'skipped';

/** Thrown to make BullMQ retry the job with backoff; the attempt is already recorded. */
export class RetryDelivery extends Error {}

/** One delivery attempt of a notification. Throws RetryDelivery when another attempt should follow. */
export async function deliverNotification(ctx: AppContext, notificationId: string): Promise<AttemptOutcome> {
  const { webhookTimeoutMs, webhookAttempts, webhookAllowPrivate } = ctx.config.alerts;
  // $1 id, $2 lease seconds: the attempt holds the row while the POST is in flight.
  const { rows } = await ctx.pg.pool.query<{
    attempts: number;
    webhook_url: string;
    body: string;
    secret: string | null;
  }>(
    `UPDATE alert_notifications n SET attempts = attempts + 1, last_attempt_at = now(), sending_until = now() + make_interval(secs => $2)
      WHERE id = $1 AND status = 'pending' AND (sending_until IS NULL OR sending_until < now())
      RETURNING n.attempts, n.webhook_url, n.body, (SELECT webhook_secret FROM alerts WHERE id = n.alert_id) AS secret`,
    [notificationId, Math.ceil(webhookTimeoutMs / 1000) + 30],
  );
  const row = rows[0];
  if (!row) {
    // Pending but held by an attempt that is in flight (or died in flight): try again after the
    // backoff, or the row would stay pending with its job finished. Delivered, given up or deleted: done.
    const { rows: held } = await ctx.pg.pool.query(
      "SELECT 1 FROM alert_notifications WHERE id = $1 AND status = 'pending'",
      [notificationId],
    );
    if (held.length) throw new RetryDelivery('another attempt of this notification is in flight');
    return 'skipped';
  }
  if (row.secret === null) return 'skipped';
  const result = await deliver({
    url: row.webhook_url,
    body: row.body,
    timeoutMs: webhookTimeoutMs,
    allowPrivate: webhookAllowPrivate,
    headers: {
      'x-sightline-signature': signBody(row.secret, row.body),
      'x-sightline-delivery': notificationId,
      'x-sightline-attempt': String(row.attempts),
    },
  });
  const outcome: AttemptOutcome = result.ok
    ? 'delivered'
    : result.retry && row.attempts < webhookAttempts
      ? 'retrying'
      : 'failed';
  const error = result.ok ? null : result.error.slice(0, 500);
  await recordAttempt(ctx.pg.pool, notificationId, outcome, result.statusCode, error);
  if (outcome === 'retrying') throw new RetryDelivery(`webhook attempt ${row.attempts} failed: ${error}`);
  return outcome;
}

/** The attempt on the notification and on its alert, in one statement. */
async function recordAttempt(
  db: Queryable,
  id: string,
  outcome: AttemptOutcome,
  statusCode: number | null,
  error: string | null,
): Promise<void> {
  // $1 id, $2 outcome, $3 HTTP status or null, $4 error or null
  await db.query(
    `WITH n AS (
       UPDATE alert_notifications SET status = CASE WHEN $2 = 'retrying' THEN 'pending' ELSE $2 END, sending_until = NULL,
              last_status_code = $3, last_error = $4, delivered_at = CASE WHEN $2 = 'delivered' THEN now() ELSE delivered_at END
        WHERE id = $1 RETURNING alert_id)
     UPDATE alerts SET last_notify_at = now(), last_notify_status = $2, last_notify_error = $4 WHERE id = (SELECT alert_id FROM n)`,
    [id, outcome, statusCode, error],
  );
}
