-- Threshold alerts (docs/alerts.md; issue 10).
-- Postgres holds every state with transitions (docs/design.md, decision 6); the worker's evaluation of one
-- window is keyed by (alert, window end) everywhere below (decision 9). src/alerts/ explains the flow.

CREATE TABLE alerts (
  id                 uuid PRIMARY KEY,
  project_id         uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name               text NOT NULL,
  view               text NOT NULL DEFAULT 'SPANS',
  measure            text NOT NULL,
  aggregation        text NOT NULL,
  threshold          double precision NOT NULL,
  threshold_operator text NOT NULL,
  time_window        text NOT NULL,                       -- '1m' … '2h' (WINDOW is a reserved word)
  filters            jsonb NOT NULL DEFAULT '[]'::jsonb,  -- as the caller wrote them, echoed in reads
  predicates         jsonb NOT NULL DEFAULT '[]'::jsonb,  -- the same, normalised (src/widgets/predicates.ts)
  group_by           text,                                -- one dimension, or null
  no_data_mode       text NOT NULL DEFAULT 'HOLD' CHECK (no_data_mode IN ('HOLD', 'ZERO', 'NOTIFY')),
  renotify_mode      text NOT NULL DEFAULT 'OFF' CHECK (renotify_mode IN ('OFF', 'INTERVAL')),
  renotify_interval_minutes integer NOT NULL DEFAULT 60 CHECK (renotify_interval_minutes >= 1),
  severity           text NOT NULL DEFAULT 'warning' CHECK (severity IN ('info', 'warning', 'critical')),
  webhook_url        text,
  -- The per-alert HMAC key, shown once at create. Kept as is: the worker must read it to sign, and it
  -- grants nothing in Sightline (it only lets a receiver tell our webhooks from forgeries).
  webhook_secret     text NOT NULL,
  status             text NOT NULL DEFAULT 'OK' CHECK (status IN ('OK', 'ALERTING', 'NO_DATA', 'ERROR', 'PAUSED')),
  created_by         uuid REFERENCES users(id) ON DELETE SET NULL,
  create_time        timestamptz NOT NULL DEFAULT now(),
  update_time        timestamptz NOT NULL DEFAULT now(),
  alerted_at         timestamptz,
  severity_changed_at timestamptz,
  last_evaluated_at  timestamptz,
  last_value         double precision,
  last_error         text,
  last_error_at      timestamptz,
  last_notify_at     timestamptz,
  last_notify_status text,
  last_notify_error  text,
  -- Bumped by edits that change what is measured: an evaluation begun before the edit is discarded.
  spec_version       integer NOT NULL DEFAULT 1,
  -- The last window end whose evaluation was committed; evaluations only move it forward.
  evaluated_window_end timestamptz,
  -- A worker's lease on the alert for one window (src/alerts/claims.ts). A lease that outlives its
  -- worker expires; the same tick job re-run after a crash takes its own leases back at once.
  claim_window_end   timestamptz,
  claim_token        text,
  claim_until        timestamptz
);
CREATE INDEX alerts_project_idx ON alerts (project_id, create_time, id);
-- The tick's claim scans active alerts by project.
CREATE INDEX alerts_active_idx ON alerts (project_id, id) WHERE status <> 'PAUSED';

-- The state of each series of an alert: '' for an alert without group_by, else one row per group
-- that is not quietly OK (groups that are OK and were never announced otherwise need no row).
CREATE TABLE alert_series (
  alert_id         uuid NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  group_key        text NOT NULL,
  status           text NOT NULL CHECK (status IN ('OK', 'ALERTING', 'NO_DATA', 'ERROR')),
  -- What receivers were last told (OK before any notification): transitions are announced against it.
  announced        text NOT NULL DEFAULT 'OK' CHECK (announced IN ('OK', 'ALERTING', 'NO_DATA')),
  alerted_at       timestamptz,
  last_notified_at timestamptz,   -- logical time (a window end): renotify intervals count whole minutes
  last_value       double precision,
  last_error       text,
  last_error_at    timestamptz,
  PRIMARY KEY (alert_id, group_key)
);

-- History: one row per alert and evaluated window, kept 30 days (trimmed as each alert is evaluated).
CREATE TABLE alert_evaluations (
  alert_id       uuid NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  window_end     timestamptz NOT NULL,
  window_start   timestamptz NOT NULL,
  value          double precision,         -- grouped alerts: the first group's value
  state          text NOT NULL,
  previous_state text NOT NULL,
  notified       boolean NOT NULL,
  group_summary  jsonb,                    -- grouped alerts: {evaluated, not_ok: [{group, value, state}]}
  error          text,
  evaluated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (alert_id, window_end)
);

-- One row per announced transition (or renotification) of a series, keyed by its window end, so a
-- repeated evaluation can never create a second one. The notification job delivers it; `id` is the
-- delivery id receivers see and the job id is derived from it.
CREATE TABLE alert_notifications (
  id              uuid PRIMARY KEY,
  alert_id        uuid NOT NULL REFERENCES alerts(id) ON DELETE CASCADE,
  group_key       text NOT NULL,
  window_end      timestamptz NOT NULL,
  webhook_url     text NOT NULL,
  body            text NOT NULL,           -- the JSON sent, byte for byte (it is what the signature covers)
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  sending_until   timestamptz,             -- a delivery attempt in flight holds the row until then
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  UNIQUE (alert_id, group_key, window_end)
);
-- The tick re-enqueues pending notifications whose job was lost (a crash between commit and enqueue).
CREATE INDEX alert_notifications_pending_idx ON alert_notifications (created_at) WHERE status = 'pending';
