-- The online evaluators' runtime (docs/evaluators.md, "How traces are scored"; issue 31 §2): the
-- enrolment watermark of each evaluator, the per-project call slots and daily call counts, the
-- backfills, and the watchdog's state.

-- Enrolment reads the spans stored after `enrol_watermark_ms` (ClickHouse `spans.ingested_at`, epoch
-- ms), or after `enrol_from` before its first tick; `enrol_from` moves to the moment an evaluator is
-- (re)enabled, so an evaluator never scores history unless asked to (a backfill).
ALTER TABLE evaluators ADD COLUMN IF NOT EXISTS enrol_from timestamptz NOT NULL DEFAULT now();
ALTER TABLE evaluators ADD COLUMN IF NOT EXISTS enrol_watermark_ms bigint;
-- The watchdog (src/evaluators/watchdog.ts): whether its signal is raised now, and when it last looked.
ALTER TABLE evaluators ADD COLUMN IF NOT EXISTS watchdog_raised boolean NOT NULL DEFAULT false;
ALTER TABLE evaluators ADD COLUMN IF NOT EXISTS watchdog_checked_at timestamptz;

ALTER TABLE evaluator_executions ADD COLUMN IF NOT EXISTS started_at timestamptz;
ALTER TABLE evaluator_executions ADD COLUMN IF NOT EXISTS backfill_id uuid;
CREATE INDEX IF NOT EXISTS evaluator_executions_backfill_idx
  ON evaluator_executions (backfill_id) WHERE backfill_id IS NOT NULL;

-- A judge call in flight holds one of its project's EVALUATOR_CONCURRENCY_PER_PROJECT slots (0..n-1),
-- across every worker process. `until` is the lease: a worker that dies mid-call frees its slot then.
CREATE TABLE IF NOT EXISTS evaluator_call_slots (
  project_id   uuid NOT NULL,
  slot         integer NOT NULL,
  execution_id uuid NOT NULL,
  until        timestamptz NOT NULL,
  PRIMARY KEY (project_id, slot)
);

-- Judge calls per project and UTC day (retries count): at EVALUATOR_DAILY_CALLS_PER_PROJECT the
-- day's remaining executions are skipped.
CREATE TABLE IF NOT EXISTS evaluator_daily_calls (
  project_id uuid NOT NULL,
  day        date NOT NULL,
  calls      integer NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, day)
);

-- A backfill: the evaluator run over a past window. `total` is set when the worker has enrolled the
-- window's traces (status `pending` until then); progress is counted from the executions it owns.
CREATE TABLE IF NOT EXISTS evaluator_backfills (
  id           uuid PRIMARY KEY,
  evaluator_id uuid NOT NULL REFERENCES evaluators(id) ON DELETE CASCADE,
  project_id   uuid NOT NULL,
  start_time   timestamptz NOT NULL,
  end_time     timestamptz NOT NULL,
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'cancelled')),
  total        integer NOT NULL DEFAULT 0,
  truncated    boolean NOT NULL DEFAULT false,
  created_by   uuid,
  created_at   timestamptz NOT NULL DEFAULT now(),
  finished_at  timestamptz
);
-- One unfinished backfill per evaluator.
CREATE UNIQUE INDEX IF NOT EXISTS evaluator_backfills_running_idx
  ON evaluator_backfills (evaluator_id) WHERE status IN ('pending', 'running');
