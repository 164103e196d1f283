import type { Aggregation } from '../widgets/spec.js';
import type { PredicateInput, SpanPredicate } from '../query/predicates.js';
import { measureOf } from './schema.js';
import type { AlertStatus, AlertView, AlertWindow, NoDataMode, Operator, RenotifyMode, Severity } from './schema.js';

/**
 * An alert row of Postgres and the Alert record the API answers with (docs/alerts.md,
 * "Definition"). The webhook secret is never part of either: it is shown once, at create.
 */

export type AlertRow = {
  id: string;
  project_id: string;
  name: string;
  view: AlertView;
  /** A SCORES alert's is `value:<score name>` (schema.ts, storedMeasure). */
  measure: string;
  aggregation: Aggregation;
  threshold: number;
  threshold_operator: Operator;
  time_window: AlertWindow;
  filters: PredicateInput[];
  predicates: SpanPredicate[];
  group_by: string | null;
  no_data_mode: NoDataMode;
  renotify_mode: RenotifyMode;
  renotify_interval_minutes: number;
  severity: Severity;
  webhook_url: string | null;
  status: AlertStatus;
  creator: string | null;
  create_time: Date;
  update_time: Date;
  alerted_at: Date | null;
  severity_changed_at: Date | null;
  last_evaluated_at: Date | null;
  last_value: number | null;
  last_error: string | null;
  last_error_at: Date | null;
  last_notify_at: Date | null;
  last_notify_status: string | null;
  last_notify_error: string | null;
  spec_version: number;
};

// The creator's display name, or e-mail when the name is empty; null once the account is deleted.
export const ALERT_COLUMNS = `a.id, a.project_id, a.name, a.view, a.measure, a.aggregation, a.threshold, a.threshold_operator,
  a.time_window, a.filters, a.predicates, a.group_by, a.no_data_mode, a.renotify_mode, a.renotify_interval_minutes, a.severity,
  a.webhook_url, a.status, COALESCE(NULLIF(u.name, ''), u.email) AS creator, a.create_time, a.update_time, a.alerted_at,
  a.severity_changed_at, a.last_evaluated_at, a.last_value, a.last_error, a.last_error_at, a.last_notify_at,
  a.last_notify_status, a.last_notify_error, a.spec_version`;
export const ALERT_FROM = 'alerts a LEFT JOIN users u ON u.id = a.created_by';

export type AlertRecord = {
  id: string;
  project_id: string;
  name: string;
  view: AlertView;
  score_name: string | null;
  measure: string;
  aggregation: Aggregation;
  threshold: number;
  threshold_operator: Operator;
  window: AlertWindow;
  filters: PredicateInput[];
  group_by: string | null;
  no_data_mode: NoDataMode;
  renotify: { mode: RenotifyMode; interval_minutes: number };
  severity: Severity;
  notify: { webhook_url: string } | null;
  status: AlertStatus;
  creator: string | null;
  create_time: string;
  update_time: string;
  alerted_at: string | null;
  severity_changed_at: string | null;
  last_evaluated_at: string | null;
  last_value: number | null;
  last_error: string | null;
  last_error_at: string | null;
  last_notify_at: string | null;
  last_notify_status: string | null;
  last_notify_error: string | null;
};

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function alertRecord(row: AlertRow): AlertRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    view: row.view,
    ...measureOf(row.view, row.measure),
    aggregation: row.aggregation,
    threshold: row.threshold,
    threshold_operator: row.threshold_operator,
    window: row.time_window,
    filters: row.filters,
    group_by: row.group_by,
    no_data_mode: row.no_data_mode,
    renotify: { mode: row.renotify_mode, interval_minutes: row.renotify_interval_minutes },
    severity: row.severity,
    notify: row.webhook_url ? { webhook_url: row.webhook_url } : null,
    status: row.status,
    creator: row.creator,
    create_time: row.create_time.toISOString(),
    update_time: row.update_time.toISOString(),
    alerted_at: iso(row.alerted_at),
    severity_changed_at: iso(row.severity_changed_at),
    last_evaluated_at: iso(row.last_evaluated_at),
    last_value: row.last_value,
    last_error: row.last_error,
    last_error_at: iso(row.last_error_at),
    last_notify_at: iso(row.last_notify_at),
    last_notify_status: row.last_notify_status,
    last_notify_error: row.last_notify_error,
  };
}
