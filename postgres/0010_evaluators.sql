-- Online evaluators (docs/evaluators.md; quality spec §2): the LLM connections judges call, the
-- evaluator definitions, and one execution row per evaluator and target.

-- A provider account of a project. `api_key_sealed` is the key sealed by src/secrets/secret-box.ts
-- (never the key itself); `key_preview` its last 4 characters, the only part ever answered.
CREATE TABLE IF NOT EXISTS llm_connections (
  id              uuid PRIMARY KEY,
  project_id      uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name            text NOT NULL,
  provider        text NOT NULL CHECK (provider IN ('openai', 'anthropic', 'openai_compatible')),
  base_url        text,
  api_key_sealed  text NOT NULL,
  key_preview     text NOT NULL,
  default_model   text,
  -- Header names and values as given; values may be credentials too, so they are sealed as one JSON text.
  extra_headers_sealed text,
  extra_header_names   jsonb NOT NULL DEFAULT '[]'::jsonb,
  created_by      uuid,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

CREATE TABLE IF NOT EXISTS evaluators (
  id              uuid PRIMARY KEY,
  project_id      uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name            text NOT NULL,
  target          text NOT NULL CHECK (target IN ('trace', 'span')),
  span_filter     jsonb,
  filters         jsonb NOT NULL DEFAULT '[]'::jsonb,
  sampling_rate   double precision NOT NULL DEFAULT 1 CHECK (sampling_rate > 0 AND sampling_rate <= 1),
  delay_seconds   integer NOT NULL DEFAULT 30 CHECK (delay_seconds BETWEEN 0 AND 86400),
  scorer          jsonb NOT NULL,
  -- The scorer's connection, kept as a column so a connection in use can't be deleted from under it.
  connection_id   uuid REFERENCES llm_connections(id) ON DELETE RESTRICT,
  score_name      text NOT NULL,
  score_config_id text,
  enabled         boolean NOT NULL DEFAULT true,
  paused_reason   text,
  version         integer NOT NULL DEFAULT 1,
  created_by      uuid,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
CREATE INDEX IF NOT EXISTS evaluators_connection_idx ON evaluators (connection_id) WHERE connection_id IS NOT NULL;

-- One row per evaluator and target (a trace, or a span of it): a re-run of the same target updates
-- it, so `score_id` (derived from evaluator and target) stays the one score it writes.
CREATE TABLE IF NOT EXISTS evaluator_executions (
  execution_id      uuid PRIMARY KEY,
  evaluator_id      uuid NOT NULL REFERENCES evaluators(id) ON DELETE CASCADE,
  project_id        uuid NOT NULL,
  trace_id          text NOT NULL,
  span_id           text,
  status            text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'running', 'completed', 'error', 'skipped')),
  attempts          integer NOT NULL DEFAULT 0,
  error             text,
  score_id          text,
  evaluator_version integer NOT NULL DEFAULT 1,
  judge_model       text,
  input_tokens      bigint NOT NULL DEFAULT 0,
  output_tokens     bigint NOT NULL DEFAULT 0,
  cost              double precision NOT NULL DEFAULT 0,
  judge_trace_id    text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  finished_at       timestamptz
);
CREATE UNIQUE INDEX IF NOT EXISTS evaluator_executions_target_idx
  ON evaluator_executions (evaluator_id, trace_id, COALESCE(span_id, ''));
CREATE INDEX IF NOT EXISTS evaluator_executions_recent_idx ON evaluator_executions (evaluator_id, created_at DESC);
CREATE INDEX IF NOT EXISTS evaluator_executions_pending_idx
  ON evaluator_executions (project_id, created_at) WHERE status IN ('pending', 'running');
