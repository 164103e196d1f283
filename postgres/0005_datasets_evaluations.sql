-- Datasets with immutable versions of test cases, evaluations with runs, results and the running
-- aggregates a run summary reads (docs/datasets.md: "Versions and test cases", "Run summary";
-- src/datasets/, src/evaluations/).

CREATE TABLE datasets (
  id            uuid PRIMARY KEY,
  project_id    uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name          text NOT NULL,
  description   text NOT NULL DEFAULT '',
  -- The last version number handed out. Bumped by the version create in its own transaction: the
  -- UPDATE's row lock serialises concurrent creates, and a rolled-back create gives its number back,
  -- so numbers run 1..N without gaps or duplicates.
  version_count integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX datasets_project_idx ON datasets (project_id, created_at DESC, id);

-- A version never changes once created: no route updates it, and the triggers below refuse it.
CREATE TABLE dataset_versions (
  id              uuid PRIMARY KEY,
  dataset_id      uuid NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
  project_id      uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  version_number  integer NOT NULL,
  label           text NOT NULL,
  test_case_count integer NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (dataset_id, version_number)
);

-- input / expected / metadata are the caller's JSON as sent: jsonb keeps numbers as numeric, so
-- 9007199254740993 and 0.30000000000000004 come back digit for digit (reads splice ::text).
-- SQL NULL means "not sent" and reads as JSON null.
CREATE TABLE dataset_test_cases (
  version_id      uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
  ordinal         integer NOT NULL,            -- position in the version, 1-based; the read order and cursor key
  id              uuid NOT NULL UNIQUE,
  input           jsonb,
  expected        jsonb,
  metadata        jsonb,
  source_trace_id text,
  source_span_id  text,
  PRIMARY KEY (version_id, ordinal)
);

CREATE FUNCTION refuse_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'dataset versions are immutable' USING ERRCODE = 'raise_exception';
END $$;
CREATE TRIGGER dataset_versions_immutable BEFORE UPDATE ON dataset_versions FOR EACH ROW EXECUTE FUNCTION refuse_version_change();
CREATE TRIGGER dataset_test_cases_immutable BEFORE UPDATE ON dataset_test_cases FOR EACH ROW EXECUTE FUNCTION refuse_version_change();

CREATE TABLE evaluations (
  id          uuid PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name        text NOT NULL,
  key         text,
  -- The last run number handed out; bumped like datasets.version_count.
  run_count   integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX evaluations_key_idx ON evaluations (project_id, key) WHERE key IS NOT NULL;
CREATE INDEX evaluations_name_idx ON evaluations (project_id, name, created_at);
CREATE INDEX evaluations_project_idx ON evaluations (project_id, updated_at DESC, id);

-- A run and its counts. The counts are maintained by every result write in the same transaction
-- (src/evaluations/result-writer.ts), so the summary reads one row here plus one per scorer.
CREATE TABLE evaluation_runs (
  id                 uuid PRIMARY KEY,
  evaluation_id      uuid NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  project_id         uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  dataset_version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
  run_number         integer NOT NULL,
  candidate_version  text NOT NULL,
  environment        text NOT NULL,
  status             text NOT NULL DEFAULT 'running'
                     CHECK (status IN ('running', 'completed', 'completed_with_errors', 'failed', 'incomplete', 'cancelled')),
  started_at         timestamptz NOT NULL DEFAULT now(),
  completed_at       timestamptz,
  result_count       bigint NOT NULL DEFAULT 0,
  scored_count       bigint NOT NULL DEFAULT 0,
  passed_count       bigint NOT NULL DEFAULT 0,
  failed_count       bigint NOT NULL DEFAULT 0,
  errored_count      bigint NOT NULL DEFAULT 0,
  scorer_error_count bigint NOT NULL DEFAULT 0,
  task_error_count   bigint NOT NULL DEFAULT 0,
  UNIQUE (evaluation_id, run_number)
);
CREATE INDEX evaluation_runs_evaluation_idx ON evaluation_runs (evaluation_id, run_number DESC);

-- One row per (run, test case); a re-sent result replaces it and bumps `revision` (the version the
-- ClickHouse copy for public SQL keeps). The flags are the result's contribution to the run's counts,
-- kept so a replacement subtracts exactly what the old result added.
CREATE TABLE evaluation_results (
  run_id        uuid NOT NULL REFERENCES evaluation_runs(id) ON DELETE CASCADE,
  test_case_id  uuid NOT NULL,
  revision      integer NOT NULL DEFAULT 1,
  output        jsonb,
  trace_id      text,
  error         text,
  scores        jsonb NOT NULL DEFAULT '[]'::jsonb,   -- normalised entries (src/evaluations/result-input.ts)
  metrics       jsonb NOT NULL DEFAULT '[]'::jsonb,
  passed        boolean,                             -- null: no score gave a verdict
  scored        boolean NOT NULL,
  task_error    boolean NOT NULL,
  scorer_errors integer NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, test_case_id)
);

-- Per run and score or metric name: sums kept in numeric, so adding and later subtracting a replaced
-- value is exact, and the mean is sum / observed_count rounded once.
CREATE TABLE evaluation_run_aggregates (
  run_id           uuid NOT NULL REFERENCES evaluation_runs(id) ON DELETE CASCADE,
  kind             text NOT NULL CHECK (kind IN ('score', 'metric')),
  name             text NOT NULL,
  occurrence_count bigint NOT NULL DEFAULT 0,   -- results naming it at all (an entry shows while > 0)
  observed_count   bigint NOT NULL DEFAULT 0,   -- results with a value and no scorer error
  boolean_count    bigint NOT NULL DEFAULT 0,   -- of those, values sent as booleans
  value_sum        numeric NOT NULL DEFAULT 0,
  direction        text,
  unit             text,
  PRIMARY KEY (run_id, kind, name)
);
