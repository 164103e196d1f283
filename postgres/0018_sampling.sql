-- Sampling at ingest (quality.md §6; docs/producer-controls.md, "Sampling"): the project's setting,
-- the spans of traces out by hash held for the decision window, and a keep marker per trace one of
-- whose spans matched a keep rule (so its held and later spans are stored).
ALTER TABLE project_controls ADD COLUMN IF NOT EXISTS sampling jsonb;
ALTER TABLE usage_daily ADD COLUMN IF NOT EXISTS sampled_out_spans bigint NOT NULL DEFAULT 0;

-- A held span as the ingest path would have stored it (masked and priced): taken out exactly once,
-- by a DELETE that writes it to the span store in the same transaction, or dropped when it expires.
CREATE TABLE IF NOT EXISTS sampling_held (
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  trace_id    text NOT NULL,
  span_id     text NOT NULL,
  ttl_days    integer NOT NULL,
  span        jsonb NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (project_id, trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS sampling_held_expiry ON sampling_held (expires_at);

CREATE TABLE IF NOT EXISTS sampling_keeps (
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  trace_id    text NOT NULL,
  expires_at  timestamptz NOT NULL,
  PRIMARY KEY (project_id, trace_id)
);
CREATE INDEX IF NOT EXISTS sampling_keeps_expiry ON sampling_keeps (expires_at);
