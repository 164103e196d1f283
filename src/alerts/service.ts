import crypto from 'node:crypto';
import { isUuid, newId } from '../ids.js';
import type { AppContext } from '../context.js';
import { requireProjectRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { zodIssuesToValidation } from '../zod-issues.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { closedWindowEnd } from './clock.js';
import { ALERT_COLUMNS, ALERT_FROM, alertRecord, type AlertRecord, type AlertRow } from './record.js';
import {
  defaultAggregation,
  definitionIssues,
  DEFAULT_RENOTIFY_MINUTES,
  measureOf,
  normalizeFilters,
  storedMeasure,
  type AlertStatus,
  type CreateAlertInput,
  type UpdateAlertInput,
} from './schema.js';
import { literalAddressRefusal } from './webhook.js';

/**
 * The alert catalog (docs/alerts.md). Reads take a project
 * already resolved by `resolveReadProject`; writes check MEMBER+ in the project's workspace inside
 * their transaction. Evaluation is evaluation.ts; this file only edits definitions and the state an
 * edit resets.
 */

/** The catalog's size bound (docs/limits.md, "Catalogs"): one project's evaluation cost (409 beyond). */
export const MAX_ALERTS_PER_PROJECT = 500;
const ALERT_NOT_FOUND = 'alert not found';

export type CreatedAlert = { alert: AlertRecord; created: true; webhook_secret: string };
export type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };
export type AlertDetail = AlertRecord & {
  groups?: { group: string; status: string; value: number | null; alerted_at: string | null }[];
};

function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64url')}`;
}

function checkWebhook(ctx: AppContext, body: { notify?: { webhook_url: string } | null }): void {
  const url = body.notify?.webhook_url;
  if (!url) return;
  const refusal = literalAddressRefusal(url, ctx.config.alerts.webhookAllowPrivate);
  if (refusal)
    throw new RequestValidationError([
      { loc: ['body', 'notify', 'webhook_url'], msg: refusal, type: 'value_error', input: url },
    ]);
}

async function findRow(db: Queryable, projectId: string, alertId: string, lock = false): Promise<AlertRow> {
  if (!isUuid(alertId)) throw new NotFoundError(ALERT_NOT_FOUND);
  const { rows } = await db.query<AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM ${ALERT_FROM} WHERE a.id = $1 AND a.project_id = $2${lock ? ' FOR UPDATE OF a' : ''}`,
    [alertId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(ALERT_NOT_FOUND);
  return rows[0];
}

// ---------------------------------------------------------------------------------------------
// Reads

export async function listAlerts(
  db: Queryable,
  projectId: string,
  q: { status?: AlertStatus; limit: number; page: number },
): Promise<Page<AlertRecord>> {
  const { rows } = await db.query<AlertRow & { total: number }>(
    `SELECT ${ALERT_COLUMNS}, count(*) OVER ()::int AS total FROM ${ALERT_FROM}
      WHERE a.project_id = $1 AND ($2::text IS NULL OR a.status = $2)
      ORDER BY a.create_time, a.id LIMIT $3 OFFSET $4`,
    [projectId, q.status ?? null, q.limit, q.page * q.limit],
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    // A page past the end: the total still answers.
    const count = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM alerts WHERE project_id = $1 AND ($2::text IS NULL OR status = $2)',
      [projectId, q.status ?? null],
    );
    total = count.rows[0]!.n;
  }
  return { data: rows.map(alertRecord), meta: { page: q.page, limit: q.limit, total } };
}

/** One alert; a grouped alert also lists its groups that are not quietly OK (at most 100). */
export async function getAlert(db: Queryable, projectId: string, alertId: string): Promise<AlertDetail> {
  const row = await findRow(db, projectId, alertId);
  if (!row.group_by) return alertRecord(row);
  const { rows } = await db.query<{
    group_key: string;
    status: string;
    last_value: number | null;
    alerted_at: Date | null;
  }>(
    `SELECT group_key, status, last_value, alerted_at FROM alert_series WHERE alert_id = $1
      ORDER BY status = 'ALERTING' DESC, last_value DESC NULLS LAST, group_key LIMIT 100`,
    [row.id],
  );
  return {
    ...alertRecord(row),
    groups: rows.map((r) => ({
      group: r.group_key,
      status: r.status,
      value: r.last_value,
      alerted_at: r.alerted_at?.toISOString() ?? null,
    })),
  };
}

export type EvaluationItem = {
  window_start: string;
  window_end: string;
  value: number | null;
  state: string;
  previous_state: string;
  notified: boolean;
  groups: unknown;
  error: string | null;
  evaluated_at: string;
};

/** An alert's evaluations, newest window first, over the 30 days they are kept. */
export async function listEvaluations(
  db: Queryable,
  projectId: string,
  alertId: string,
  q: { limit: number; page: number },
): Promise<Page<EvaluationItem>> {
  const alert = await findRow(db, projectId, alertId);
  const where = "alert_id = $1 AND window_end >= now() - interval '30 days'";
  const [{ rows }, count] = await Promise.all([
    db.query<{
      window_start: Date;
      window_end: Date;
      value: number | null;
      state: string;
      previous_state: string;
      notified: boolean;
      group_summary: unknown;
      error: string | null;
      evaluated_at: Date;
    }>(
      `SELECT window_start, window_end, value, state, previous_state, notified, group_summary, error, evaluated_at
         FROM alert_evaluations WHERE ${where} ORDER BY window_end DESC LIMIT $2 OFFSET $3`,
      [alert.id, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_evaluations WHERE ${where}`, [alert.id]),
  ]);
  const data = rows.map((r) => ({
    window_start: r.window_start.toISOString(),
    window_end: r.window_end.toISOString(),
    value: r.value,
    state: r.state,
    previous_state: r.previous_state,
    notified: r.notified,
    groups: r.group_summary ?? null,
    error: r.error,
    evaluated_at: r.evaluated_at.toISOString(),
  }));
  return { data, meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

// ---------------------------------------------------------------------------------------------
// Writes (MEMBER or higher; docs/authentication.md)

/** Strict create: alerts have no unique name, so every call inserts (docs/alerts.md, "Routes"). */
export async function createAlert(
  ctx: AppContext,
  user: UserPrincipal,
  input: CreateAlertInput,
): Promise<CreatedAlert> {
  checkWebhook(ctx, input);
  const secret = newWebhookSecret();
  const alert = await withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    // The project row lock serialises concurrent creates, so the count below stays true until commit.
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [input.project_id]);
    const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM alerts WHERE project_id = $1', [
      input.project_id,
    ]);
    if (rows[0]!.n >= MAX_ALERTS_PER_PROJECT)
      throw new ConflictError(
        `a project holds at most ${MAX_ALERTS_PER_PROJECT} alerts; delete one before creating another`,
      );
    const id = newId();
    const values: Record<string, unknown> = {
      id,
      project_id: input.project_id,
      name: input.name,
      view: input.view,
      measure: storedMeasure(input.view, input.measure, input.score_name),
      aggregation: input.aggregation ?? defaultAggregation(input.measure),
      threshold: input.threshold,
      threshold_operator: input.threshold_operator,
      time_window: input.window,
      filters: JSON.stringify(input.filters),
      predicates: JSON.stringify(normalizeFilters(input.filters)),
      group_by: input.group_by ?? null,
      renotify_mode: input.renotify?.mode ?? 'OFF',
      renotify_interval_minutes: input.renotify?.interval_minutes ?? DEFAULT_RENOTIFY_MINUTES,
      severity: input.severity,
      webhook_url: input.notify?.webhook_url ?? null,
      webhook_secret: secret,
      created_by: user.userId,
    };
    // Omitted, no_data_mode takes the column's default.
    if (input.no_data_mode !== undefined) values.no_data_mode = input.no_data_mode;
    const columns = Object.keys(values);
    await tx.query(
      `INSERT INTO alerts (${columns.join(', ')}, severity_changed_at) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}, now())`,
      Object.values(values),
    );
    return alertRecord(await findRow(tx, input.project_id, id));
  });
  return { alert, created: true, webhook_secret: secret };
}

/**
 * The parts of a definition whose change means the state measured so far no longer applies. Keys
 * are sorted: predicates read back from jsonb come in jsonb's key order, fresh ones in the code's.
 */
function measuredKey(row: {
  view: string;
  measure: string;
  aggregation: string;
  time_window: string;
  predicates: unknown;
  group_by: string | null;
}): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  return JSON.stringify(
    sorted([row.view, row.measure, row.aggregation, row.time_window, row.predicates, row.group_by]),
  );
}

/**
 * Edits any field. The merged definition is checked as a create would be (422 at the body field). An
 * edit that changes what is measured (view, measure, aggregation, window, filters, group_by) resets the
 * state to OK pending the next evaluation, and discards an evaluation already under way (spec_version).
 * What receivers were last told is kept, so the next evaluation announces only a real change.
 */
export async function updateAlert(
  ctx: AppContext,
  user: UserPrincipal,
  alertId: string,
  input: UpdateAlertInput,
): Promise<AlertRecord> {
  checkWebhook(ctx, input);
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    const row = await findRow(tx, input.project_id, alertId, true);
    const current = measureOf(row.view, row.measure);
    const view = input.view ?? row.view;
    const measure = input.measure ?? current.measure;
    // Another view forgets the score name unless the edit names one.
    const scoreName = input.score_name !== undefined ? input.score_name : view === row.view ? current.score_name : null;
    // A new measure without an aggregation takes that measure's default, not the old one's.
    const aggregation =
      input.aggregation ??
      (input.measure !== undefined && input.measure !== current.measure
        ? defaultAggregation(measure)
        : row.aggregation);
    const filters = input.filters ?? row.filters;
    const groupBy = input.group_by !== undefined ? input.group_by : row.group_by;
    const issues = definitionIssues({ view, score_name: scoreName, measure, aggregation, filters, group_by: groupBy });
    if (issues.length > 0)
      throw new RequestValidationError(
        zodIssuesToValidation('body', issues, { ...input, measure, aggregation, filters, group_by: groupBy }),
      );
    const predicates = normalizeFilters(filters);
    const next = {
      view,
      measure: storedMeasure(view, measure, scoreName),
      aggregation,
      time_window: input.window ?? row.time_window,
      predicates,
      group_by: groupBy,
    };
    const remeasured = measuredKey(next) !== measuredKey(row);
    const webhook = input.notify !== undefined ? (input.notify?.webhook_url ?? null) : row.webhook_url;
    await tx.query(
      `UPDATE alerts SET name = $2, view = $3, measure = $4, aggregation = $5, threshold = $6, threshold_operator = $7, time_window = $8,
              filters = $9::jsonb, predicates = $10::jsonb, group_by = $11, no_data_mode = $12, renotify_mode = $13,
              renotify_interval_minutes = $14, severity = $15, webhook_url = $16, update_time = now(),
              severity_changed_at = CASE WHEN severity IS DISTINCT FROM $15 THEN now() ELSE severity_changed_at END,
              status = CASE WHEN $17 AND status <> 'PAUSED' THEN 'OK' ELSE status END,
              last_value = CASE WHEN $17 THEN NULL ELSE last_value END,
              spec_version = spec_version + CASE WHEN $17 THEN 1 ELSE 0 END
        WHERE id = $1`,
      [
        row.id,
        input.name ?? row.name,
        next.view,
        next.measure,
        aggregation,
        input.threshold ?? row.threshold,
        input.threshold_operator ?? row.threshold_operator,
        next.time_window,
        JSON.stringify(filters),
        JSON.stringify(predicates),
        groupBy,
        input.no_data_mode ?? row.no_data_mode,
        input.renotify?.mode ?? row.renotify_mode,
        input.renotify?.interval_minutes ?? row.renotify_interval_minutes,
        input.severity ?? row.severity,
        webhook,
        remeasured,
      ],
    );
    if (remeasured) {
      // Another dimension's groups say nothing about the new ones.
      if (groupBy !== row.group_by) await tx.query('DELETE FROM alert_series WHERE alert_id = $1', [row.id]);
      else await tx.query("UPDATE alert_series SET status = 'OK', last_value = NULL WHERE alert_id = $1", [row.id]);
    }
    return alertRecord(await findRow(tx, input.project_id, row.id));
  });
}

export async function deleteAlert(
  ctx: AppContext,
  user: UserPrincipal,
  alertId: string,
  projectId: string,
): Promise<{ deleted: true; id: string }> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (!isUuid(alertId)) throw new NotFoundError(ALERT_NOT_FOUND);
    // Its series, history and notifications go with it (ON DELETE CASCADE); a queued delivery finds nothing.
    const deleted = await tx.query('DELETE FROM alerts WHERE id = $1 AND project_id = $2', [alertId, projectId]);
    if (deleted.rowCount === 0) throw new NotFoundError(ALERT_NOT_FOUND);
    return { deleted: true as const, id: alertId };
  });
}

/** PAUSED is never evaluated; pausing a paused alert changes nothing. */
export async function pauseAlert(
  ctx: AppContext,
  user: UserPrincipal,
  alertId: string,
  projectId: string,
): Promise<AlertRecord> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    const row = await findRow(tx, projectId, alertId, true);
    if (row.status !== 'PAUSED')
      await tx.query("UPDATE alerts SET status = 'PAUSED', update_time = now() WHERE id = $1", [row.id]);
    return alertRecord(await findRow(tx, projectId, row.id));
  });
}

/**
 * Resuming starts from the next tick: the windows that closed while paused count as evaluated, so no
 * catch-up evaluations and no burst of notifications. The status is OK pending that evaluation; what
 * receivers were last told is kept, so a change during the pause is announced once.
 */
export async function resumeAlert(
  ctx: AppContext,
  user: UserPrincipal,
  alertId: string,
  projectId: string,
  nowMs = Date.now(),
): Promise<AlertRecord> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    const row = await findRow(tx, projectId, alertId, true);
    if (row.status === 'PAUSED') {
      await tx.query(
        `UPDATE alerts SET status = 'OK', update_time = now(),
                evaluated_window_end = GREATEST(evaluated_window_end, to_timestamp($2::double precision / 1000))
          WHERE id = $1`,
        [row.id, closedWindowEnd(nowMs)],
      );
    }
    return alertRecord(await findRow(tx, projectId, row.id));
  });
}
