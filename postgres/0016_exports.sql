-- Exports (docs/exports.md; src/exports/): bulk copies of a window of spans, traces or scores, the
-- buckets they may be written to, and the daily schedules that start them (quality.md §6, "Exports").

-- An S3-compatible bucket of a project. The keys are sealed by the deployment's secret box
-- (src/secrets/secret-box.ts) and never answered.
CREATE TABLE IF NOT EXISTS export_buckets (
  id                       uuid PRIMARY KEY,
  project_id               uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name                     text NOT NULL,
  endpoint                 text NOT NULL,
  region                   text NOT NULL,
  bucket                   text NOT NULL,
  prefix                   text NOT NULL DEFAULT '',
  access_key_id_sealed     text NOT NULL,
  secret_access_key_sealed text NOT NULL,
  force_path_style         boolean NOT NULL DEFAULT false,
  created_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- A daily export of the previous UTC day, started at `hour_utc` (src/exports/schedules.ts).
-- `last_day` is the last day exported, so a day is exported once however many workers tick.
CREATE TABLE IF NOT EXISTS export_schedules (
  id         uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind       text NOT NULL CHECK (kind IN ('spans', 'traces', 'scores')),
  format     text NOT NULL CHECK (format IN ('parquet', 'jsonl', 'csv')),
  filters    jsonb NOT NULL DEFAULT '[]'::jsonb,
  bucket_id  uuid NOT NULL REFERENCES export_buckets(id) ON DELETE RESTRICT,
  hour_utc   smallint NOT NULL CHECK (hour_utc BETWEEN 0 AND 23),
  last_day   date,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- One export. `parts` is its plan (the windows of rows each part holds, fixed when it first runs) and
-- `parts_done` how many of them are written: a run after a crash starts at the first part not done and
-- writes it under the same name again, so no object is duplicated.
CREATE TABLE IF NOT EXISTS exports (
  id          uuid PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('spans', 'traces', 'scores')),
  format      text NOT NULL CHECK (format IN ('parquet', 'jsonl', 'csv')),
  start_time  timestamptz NOT NULL,
  end_time    timestamptz NOT NULL,
  filters     jsonb NOT NULL DEFAULT '[]'::jsonb,
  bucket_id   uuid REFERENCES export_buckets(id) ON DELETE SET NULL,
  schedule_id uuid REFERENCES export_schedules(id) ON DELETE SET NULL,
  status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  parts       jsonb,
  parts_done  integer NOT NULL DEFAULT 0,
  rows        bigint NOT NULL DEFAULT 0,
  bytes       bigint NOT NULL DEFAULT 0,
  objects     jsonb NOT NULL DEFAULT '[]'::jsonb,
  error       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  started_at  timestamptz,
  finished_at timestamptz,
  -- Downloads are kept 24 hours after they finish, then deleted by the periodic pass.
  expires_at  timestamptz
);
CREATE INDEX IF NOT EXISTS exports_project_created ON exports (project_id, created_at DESC);
CREATE INDEX IF NOT EXISTS exports_unfinished ON exports (status) WHERE status IN ('queued', 'running');

-- The run that holds an export: a worker claims it with a token and a lease it renews after each part;
-- the periodic pass queues an export again once its lease ran out (its worker died), and the next run
-- claims it and goes on from `parts_done`.
ALTER TABLE exports ADD COLUMN IF NOT EXISTS run_token text;
ALTER TABLE exports ADD COLUMN IF NOT EXISTS lease_until timestamptz;
-- Whether the export names a bucket (bucket_id becomes null if the bucket is deleted; the export still
-- wrote there, and a run after that fails rather than writing a download instead).
ALTER TABLE exports ADD COLUMN IF NOT EXISTS to_bucket boolean NOT NULL DEFAULT false;
