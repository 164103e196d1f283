-- Producer controls (quality.md §6; docs/producer-controls.md): a project's masking and quota settings,
-- each replaced whole by its PUT, and the daily usage counters the API processes add to.
CREATE TABLE IF NOT EXISTS project_controls (
  project_id  uuid PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  masking     jsonb,
  quotas      jsonb,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Per project and UTC day: what ingest accepted (spans, request bytes) and masked. Each API process
-- adds what it counted every few seconds (src/controls/usage.ts), so the rows are sums.
CREATE TABLE IF NOT EXISTS usage_daily (
  project_id     uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  day            date NOT NULL,
  spans          bigint NOT NULL DEFAULT 0,
  bytes          bigint NOT NULL DEFAULT 0,
  requests       bigint NOT NULL DEFAULT 0,
  masked_values  bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, day)
);
