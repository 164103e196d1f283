-- Detectors, signals and the detection worker's state (docs/signals.md: "Signals",
-- "Signal status"; issue 11). Findings themselves live in ClickHouse (clickhouse/0001's `findings`);
-- Postgres holds what has transitions (docs/design.md, decision 6): detectors with their watermarks, and
-- signals with their status. src/signals/ explains the flow.

CREATE TABLE detectors (
  id           uuid PRIMARY KEY,
  project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name         text NOT NULL,
  type         text NOT NULL CHECK (type IN ('error', 'threshold', 'sql')),
  config       jsonb NOT NULL DEFAULT '{}'::jsonb,      -- valid for its type (src/detectors/config.ts)
  enabled      boolean NOT NULL DEFAULT true,
  is_default   boolean NOT NULL DEFAULT false,          -- the project's "Errors" detector
  created_by   uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  update_time  timestamptz NOT NULL DEFAULT now(),
  -- Detection state (src/signals/detection.ts). error/threshold detectors read spans stored after
  -- `watermark_ms` (ClickHouse `spans.ingested_at`, epoch ms, minus a lateness overlap), or after
  -- `scan_from` before their first pass; `scan_from` moves to the moment a detector is (re)enabled,
  -- so a detector never replays history. `pass_seq` is the compare-and-set token of a pass: a pass
  -- commits only if no other pass of the detector committed since it started.
  scan_from    timestamptz NOT NULL DEFAULT now(),
  watermark_ms bigint,
  pass_seq     bigint NOT NULL DEFAULT 0,
  last_run_at  timestamptz,                              -- sql detectors run every interval_minutes
  last_error   text,
  last_error_at timestamptz,
  -- The target of signals' (detector_id, project_id) key: a signal lives in its detector's project.
  UNIQUE (id, project_id)
);
-- At most one default detector per project; its idempotent create conflicts on it.
CREATE UNIQUE INDEX detectors_one_default_idx ON detectors (project_id) WHERE is_default;
CREATE INDEX detectors_project_idx ON detectors (project_id, created_at, id);
CREATE INDEX detectors_enabled_idx ON detectors (project_id) WHERE enabled;

-- One signal per (detector, group key), for ever: a merged signal keeps its group, and the findings
-- of that group count for the signal it was merged into (`merged_into_id`, never a chain: merging a
-- signal that others were merged into moves those too).
CREATE TABLE signals (
  id               uuid PRIMARY KEY,
  project_id       uuid NOT NULL,
  detector_id      uuid NOT NULL,
  group_key        text NOT NULL,
  group_fields     jsonb NOT NULL DEFAULT '{}'::jsonb,   -- what the key is made of, e.g. {error_type, span_name}
  title            text NOT NULL,
  status           text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'dismissed')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  first_seen_at    timestamptz NOT NULL,
  last_seen_at     timestamptz NOT NULL,
  hit_count        bigint NOT NULL DEFAULT 0,
  reopen_count     integer NOT NULL DEFAULT 0,
  resolved_at      timestamptz,
  resolution_reason text,
  resolution_note  text,
  status_changed_at timestamptz,
  status_changed_by uuid REFERENCES users(id) ON DELETE SET NULL,
  merged_into_id   uuid REFERENCES signals(id) ON DELETE CASCADE,
  merged_at        timestamptz,
  -- Root-cause hints (src/signals/rca.ts): none -> pending -> ready | failed; `rca` holds the answer.
  rca_state        text NOT NULL DEFAULT 'none' CHECK (rca_state IN ('none', 'pending', 'ready', 'failed')),
  rca_requested_at timestamptz,
  rca              jsonb,
  update_time      timestamptz NOT NULL DEFAULT now(),
  CHECK (merged_into_id IS NULL OR merged_into_id <> id),
  FOREIGN KEY (detector_id, project_id) REFERENCES detectors (id, project_id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX signals_group_idx ON signals (detector_id, group_key);
-- Lists: newest first, merged signals left out.
CREATE INDEX signals_list_idx ON signals (project_id, created_at DESC, id DESC) WHERE merged_into_id IS NULL;
CREATE INDEX signals_merged_into_idx ON signals (merged_into_id) WHERE merged_into_id IS NOT NULL;
CREATE INDEX signals_rca_pending_idx ON signals (rca_requested_at) WHERE rca_state = 'pending';

-- Findings a committed pass counted but ClickHouse may not hold yet: written in the pass's
-- transaction, inserted into ClickHouse right after (idempotent: same rows, same keys), then deleted.
-- A worker that stops in between leaves the rows here and the next pass of the detector inserts them
-- first, so a finding is counted once and stored once whatever stops when.
CREATE TABLE finding_outbox (
  detector_id uuid NOT NULL REFERENCES detectors(id) ON DELETE CASCADE,
  pass_seq    bigint NOT NULL,
  project_id  uuid NOT NULL,
  rows        jsonb NOT NULL,                            -- ClickHouse `findings` rows (JSONEachRow)
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (detector_id, pass_seq)
);

-- Projects that predate detectors get their default "Errors" detector here (new ones get it when
-- they are created: src/projects/service.ts).
INSERT INTO detectors (id, project_id, name, type, config, enabled, is_default, created_by)
SELECT gen_random_uuid(), p.id, 'Errors', 'error', '{}'::jsonb, true, true, p.created_by
  FROM projects p
 WHERE p.deleted_at IS NULL;
