-- Annotation queues and comments (quality.md §3; src/annotation/, src/comments/; docs/annotation.md).

-- A queue: traces (or spans) for people to score with the queue's score configs.
CREATE TABLE IF NOT EXISTS annotation_queues (
  id               uuid PRIMARY KEY,
  project_id       uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name             text NOT NULL,
  description      text,
  score_config_ids uuid[] NOT NULL,
  created_by       uuid,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);

-- One row per trace (span_id '') or span of a trace in a queue: in a queue once (the unique key).
-- `position` orders the queue (oldest first; items added together keep the order they were given).
-- A claim is `held_by` with `held_until` in the future; an expired hold is no hold.
CREATE TABLE IF NOT EXISTS annotation_queue_items (
  id           uuid PRIMARY KEY,
  queue_id     uuid NOT NULL REFERENCES annotation_queues(id) ON DELETE CASCADE,
  project_id   uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  position     bigint GENERATED ALWAYS AS IDENTITY,
  trace_id     text NOT NULL,
  span_id      text NOT NULL DEFAULT '',
  status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed')),
  held_by      uuid REFERENCES users(id) ON DELETE SET NULL,
  held_until   timestamptz,
  completed_by uuid REFERENCES users(id) ON DELETE SET NULL,
  completed_at timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now(),
  UNIQUE (queue_id, trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS annotation_queue_items_pending_idx
  ON annotation_queue_items (queue_id, position) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS annotation_queue_items_trace_idx ON annotation_queue_items (project_id, trace_id);

-- A comment on a trace or one span of it, by a user.
CREATE TABLE IF NOT EXISTS comments (
  id             uuid PRIMARY KEY,
  project_id     uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  trace_id       text NOT NULL,
  span_id        text,
  text           text NOT NULL,
  author_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS comments_trace_idx ON comments (project_id, trace_id, created_at);
