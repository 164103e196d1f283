-- Prompts (docs/prompts.md; src/prompts/): a name with numbered, immutable versions and the labels
-- that point at them.
--
-- `prompts` holds one row per name: its newest version number. A create locks this row while it
-- numbers the next version (INSERT ... ON CONFLICT DO UPDATE), and every label move locks it too, so
-- two writes of one name run one after the other and never read a stale latest.
CREATE TABLE IF NOT EXISTS prompts (
  project_id     uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  -- 1-256 characters; `/` separates folders.
  name           text NOT NULL,
  latest_version integer NOT NULL CHECK (latest_version >= 1),
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, name)
);

-- Versions are never updated: a change is a new version.
CREATE TABLE IF NOT EXISTS prompt_versions (
  project_id     uuid NOT NULL,
  name           text NOT NULL,
  version        integer NOT NULL CHECK (version >= 1),
  type           text NOT NULL CHECK (type IN ('text', 'chat')),
  -- A string (text) or an array of {role, content} (chat).
  prompt         jsonb NOT NULL,
  config         jsonb NOT NULL DEFAULT '{}'::jsonb,
  commit_message text,
  -- 'user:<id>' or 'api_key:<id>': who created the version.
  created_by     text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, name, version),
  FOREIGN KEY (project_id, name) REFERENCES prompts (project_id, name) ON DELETE CASCADE
);

-- A label is on one version of a name at a time: the primary key is the name and the label, so
-- setting it elsewhere moves it (an upsert), and two moves can never leave it on two versions.
-- `latest` is never stored: it is always the newest version.
CREATE TABLE IF NOT EXISTS prompt_labels (
  project_id uuid NOT NULL,
  name       text NOT NULL,
  label      text NOT NULL,
  version    integer NOT NULL,
  PRIMARY KEY (project_id, name, label),
  FOREIGN KEY (project_id, name, version) REFERENCES prompt_versions (project_id, name, version) ON DELETE CASCADE
);
