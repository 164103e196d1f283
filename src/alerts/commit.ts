import type { Queryable } from '../stores/postgres.js';
import { newId } from '../ids.js';
import { windowStart } from './clock.js';
import { EVALUATION_COLUMNS, type ClaimedAlert } from './claims.js';
import { notificationBody } from './notifications.js';
import type { AlertAnswer } from './queries.js';
import {
  FRESH,
  nextState,
  overallStatus,
  type Measurement,
  type SeriesState,
  type Settings,
  type Transition,
} from './state-machine.js';

/**
 * Writes one query group's evaluation of window E (docs/design.md, decisions 6 and 9), in ONE short
 * transaction on its own client, after ClickHouse has answered:
 *
 * - the alerts are locked and read again: an alert paused, deleted, already evaluated for E or a later
 *   window, or edited in what it measures (spec_version) since the claim is dropped, unwritten;
 * - transitions are computed by the pure state machine from the states as they are now, with the
 *   settings as they are now (an edited threshold applies at once);
 * - series states, the alert row, the history row and the notifications are written together, the
 *   history and notifications keyed by (alert, window end [, group]) with ON CONFLICT DO NOTHING, so
 *   nothing here can happen twice for one window.
 */

export type GroupOutcome = { ok: true; answers: Map<string, AlertAnswer> } | { ok: false; error: string };
export type CommitResult = { committed: string[]; dropped: string[]; notifications: string[] };

/** History is kept 30 days (issue 10, "History"); trimmed as each alert is evaluated. */
export const HISTORY_DAYS = 30;

type SeriesRow = {
  alert_id: string;
  group_key: string;
  status: SeriesState['status'];
  announced: SeriesState['announced'];
  alerted_at: Date | null;
  last_notified_at: Date | null;
  last_value: number | null;
  last_error: string | null;
  last_error_at: Date | null;
};

const ms = (d: Date | null) => (d ? d.getTime() : null);
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

function stateOf(row: SeriesRow): SeriesState {
  return {
    status: row.status,
    announced: row.announced,
    alertedAt: ms(row.alerted_at),
    lastNotifiedAt: ms(row.last_notified_at),
    lastValue: row.last_value,
    lastError: row.last_error,
    lastErrorAt: ms(row.last_error_at),
  };
}

function settingsOf(a: ClaimedAlert): Settings {
  return {
    operator: a.threshold_operator,
    threshold: a.threshold,
    noDataMode: a.no_data_mode,
    renotify: { mode: a.renotify_mode, intervalMinutes: a.renotify_interval_minutes },
  };
}

/** A group that is OK and has nothing announced needs no row (grouped alerts only). */
const quiet = (s: SeriesState) => s.status === 'OK' && s.announced === 'OK';

export async function commitGroup(
  tx: Queryable,
  claimed: ClaimedAlert[],
  windowEndMs: number,
  outcome: GroupOutcome,
  webUrl: string,
): Promise<CommitResult> {
  const windowEnd = new Date(windowEndMs).toISOString();
  const versions = new Map(claimed.map((a) => [a.id, a.spec_version]));
  const ids = [...versions.keys()];
  const { rows: current } = await tx.query<ClaimedAlert>(
    `SELECT ${EVALUATION_COLUMNS} FROM alerts
      WHERE id = ANY($1::uuid[]) AND status <> 'PAUSED' AND (evaluated_window_end IS NULL OR evaluated_window_end < $2)
      ORDER BY id FOR UPDATE`,
    [ids, windowEnd],
  );
  const live = current.filter((a) => a.spec_version === versions.get(a.id));
  const liveIds = live.map((a) => a.id);
  const dropped = ids.filter((id) => !liveIds.includes(id));
  if (live.length === 0) return { committed: [], dropped, notifications: [] };

  const { rows: seriesRows } = await tx.query<SeriesRow>(
    'SELECT * FROM alert_series WHERE alert_id = ANY($1::uuid[])',
    [liveIds],
  );
  const upserts: Record<string, unknown>[] = [];
  const deletes: { alert_id: string; group_key: string }[] = [];
  const alertRows: Record<string, unknown>[] = [];
  const history: Record<string, unknown>[] = [];
  const notifications: Record<string, unknown>[] = [];

  for (const alert of live) {
    const known = new Map(seriesRows.filter((r) => r.alert_id === alert.id).map((r) => [r.group_key, stateOf(r)]));
    const measurements = measurementsFor(alert, known, outcome);
    const transitions: [string, Transition][] = [...measurements].map(([key, m]) => [
      key,
      nextState(known.get(key) ?? FRESH, m, settingsOf(alert), windowEndMs),
    ]);

    let notified = false;
    for (const [key, t] of transitions) {
      if (!alert.group_by || !quiet(t.next))
        upserts.push({ alert_id: alert.id, group_key: key, ...seriesColumns(t.next) });
      else if (known.has(key)) deletes.push({ alert_id: alert.id, group_key: key });
      if (t.notify && alert.webhook_url) {
        notified = true;
        const id = newId();
        const prev = known.get(key) ?? FRESH;
        const measured = measurements.get(key)!;
        const body = notificationBody({
          id,
          alert,
          groupKey: key,
          state: t.next.status,
          previousState: prev.announced,
          value:
            measured.kind === 'value'
              ? measured.value
              : measured.kind === 'no_data' && alert.no_data_mode === 'ZERO'
                ? 0
                : null,
          why: t.why,
          windowEndMs,
          webUrl,
        });
        notifications.push({ id, alert_id: alert.id, group_key: key, webhook_url: alert.webhook_url, body });
      }
    }

    const status = outcome.ok
      ? overallStatus(transitions.map(([, t]) => t.next.status as Exclude<SeriesState['status'], 'PAUSED'>))
      : 'ERROR';
    const alertedAt = Math.max(ms(alert.alerted_at) ?? 0, ...transitions.map(([, t]) => t.next.alertedAt ?? 0));
    const value = headlineValue(alert, outcome);
    const error = outcome.ok ? null : outcome.error;
    alertRows.push({ id: alert.id, status, alerted_at: alertedAt ? iso(alertedAt) : null, last_value: value, error });
    history.push({
      alert_id: alert.id,
      window_start: new Date(windowStart(alert.time_window, windowEndMs)).toISOString(),
      value,
      state: status,
      previous_state: alert.status,
      notified,
      group_summary: alert.group_by ? groupSummary(alert, outcome, transitions) : null,
      error,
    });
  }

  // $1 rows as JSON; every statement below takes the whole group at once.
  await tx.query(
    `INSERT INTO alert_series (alert_id, group_key, status, announced, alerted_at, last_notified_at, last_value, last_error, last_error_at)
     SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(alert_id uuid, group_key text, status text, announced text, alerted_at timestamptz,
            last_notified_at timestamptz, last_value double precision, last_error text, last_error_at timestamptz)
     ON CONFLICT (alert_id, group_key) DO UPDATE SET status = EXCLUDED.status, announced = EXCLUDED.announced, alerted_at = EXCLUDED.alerted_at,
            last_notified_at = EXCLUDED.last_notified_at, last_value = EXCLUDED.last_value, last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at`,
    [JSON.stringify(upserts)],
  );
  if (deletes.length) {
    await tx.query(
      'DELETE FROM alert_series s USING jsonb_to_recordset($1::jsonb) AS x(alert_id uuid, group_key text) WHERE s.alert_id = x.alert_id AND s.group_key = x.group_key',
      [JSON.stringify(deletes)],
    );
  }
  // $1 rows, $2 window end
  await tx.query(
    `UPDATE alerts a SET status = x.status, alerted_at = x.alerted_at, last_value = x.last_value, last_evaluated_at = now(),
            last_error = COALESCE(x.error, a.last_error), last_error_at = CASE WHEN x.error IS NULL THEN a.last_error_at ELSE now() END,
            evaluated_window_end = $2, claim_token = NULL, claim_until = NULL, claim_window_end = NULL
       FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, status text, alerted_at timestamptz, last_value double precision, error text)
      WHERE a.id = x.id`,
    [JSON.stringify(alertRows), windowEnd],
  );
  // $1 rows, $2 window end, $3 history days
  await tx.query(
    `INSERT INTO alert_evaluations (alert_id, window_end, window_start, value, state, previous_state, notified, group_summary, error)
     SELECT x.alert_id, $2, x.window_start, x.value, x.state, x.previous_state, x.notified, x.group_summary, x.error
       FROM jsonb_to_recordset($1::jsonb) AS x(alert_id uuid, window_start timestamptz, value double precision, state text, previous_state text,
            notified boolean, group_summary jsonb, error text)
     ON CONFLICT (alert_id, window_end) DO NOTHING`,
    [JSON.stringify(history), windowEnd],
  );
  await tx.query(
    `DELETE FROM alert_evaluations WHERE alert_id = ANY($1::uuid[]) AND window_end < $2::timestamptz - make_interval(days => $3)`,
    [liveIds, windowEnd, HISTORY_DAYS],
  );
  let created: string[] = [];
  if (notifications.length) {
    const inserted = await tx.query<{ id: string }>(
      `INSERT INTO alert_notifications (id, alert_id, group_key, window_end, webhook_url, body)
       SELECT x.id, x.alert_id, x.group_key, $2, x.webhook_url, x.body
         FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, alert_id uuid, group_key text, webhook_url text, body text)
       ON CONFLICT (alert_id, group_key, window_end) DO NOTHING
       RETURNING id`,
      [JSON.stringify(notifications), windowEnd],
    );
    created = inserted.rows.map((r) => r.id);
  }
  return { committed: liveIds, dropped, notifications: created };
}

/**
 * What each series measured. Ungrouped: the one series ''. Grouped: the groups answered, and the
 * known groups that were not (no data for them this window). A failed query fails every known series.
 */
function measurementsFor(
  alert: ClaimedAlert,
  known: Map<string, SeriesState>,
  outcome: GroupOutcome,
): Map<string, Measurement> {
  const out = new Map<string, Measurement>();
  if (!outcome.ok) {
    for (const key of alert.group_by ? known.keys() : ['']) out.set(key, { kind: 'error', message: outcome.error });
    return out;
  }
  const answer = outcome.answers.get(alert.id) ?? new Map<string, number>();
  for (const [key, value] of answer) out.set(key, { kind: 'value', value });
  for (const key of alert.group_by ? known.keys() : ['']) if (!out.has(key)) out.set(key, { kind: 'no_data' });
  return out;
}

function seriesColumns(s: SeriesState) {
  return {
    status: s.status,
    announced: s.announced,
    alerted_at: iso(s.alertedAt),
    last_notified_at: iso(s.lastNotifiedAt),
    last_value: s.lastValue,
    last_error: s.lastError,
    last_error_at: iso(s.lastErrorAt),
  };
}

const lowFirst = (a: ClaimedAlert) => a.threshold_operator === '<' || a.threshold_operator === '<=';

/** The value an alert shows: its own, or a grouped alert's most breaching group's. Null without data. */
function headlineValue(alert: ClaimedAlert, outcome: GroupOutcome): number | null {
  if (!outcome.ok) return null;
  const values = [...(outcome.answers.get(alert.id)?.values() ?? [])];
  if (values.length === 0) return null;
  return lowFirst(alert) ? Math.min(...values) : Math.max(...values);
}

function groupSummary(alert: ClaimedAlert, outcome: GroupOutcome, transitions: [string, Transition][]) {
  const answered = outcome.ok ? (outcome.answers.get(alert.id)?.size ?? 0) : 0;
  const notOk = transitions
    .filter(([, t]) => t.next.status !== 'OK')
    .map(([group, t]) => ({
      group,
      value: outcome.ok ? (outcome.answers.get(alert.id)?.get(group) ?? null) : null,
      state: t.next.status,
    }))
    .sort((a, b) => (b.value ?? -Infinity) - (a.value ?? -Infinity))
    .slice(0, 100);
  return { field: alert.group_by, evaluated: answered, not_ok: notOk };
}
