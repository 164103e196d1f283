-- Accounts: users, workspaces and their members, projects, API keys, sessions, the audit trail.
-- Secrets (passwords, session tokens, API keys) are stored only as hashes.

CREATE TABLE users (
  id            uuid PRIMARY KEY,
  email         text NOT NULL UNIQUE,           -- stored lower-cased
  name          text NOT NULL,
  password_hash text NOT NULL,                  -- scrypt$N$r$p$salt$hash
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE workspaces (
  id         uuid PRIMARY KEY,
  name       text NOT NULL,
  created_by uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  user_id      uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  role         text NOT NULL CHECK (role IN ('VIEWER', 'MEMBER', 'ADMIN')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE invites (
  id           uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('VIEWER', 'MEMBER', 'ADMIN')),
  invited_by   uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX invites_workspace_idx ON invites (workspace_id);

CREATE TABLE projects (
  id             uuid PRIMARY KEY,
  workspace_id   uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name           text NOT NULL,
  trace_ttl_days integer NOT NULL DEFAULT 30 CHECK (trace_ttl_days BETWEEN 1 AND 3650),
  created_by     uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz
);
-- Project names are unique among the live projects of a workspace (create is idempotent on it).
CREATE UNIQUE INDEX projects_live_name_idx ON projects (workspace_id, name) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name        text NOT NULL,
  key_hash    text NOT NULL UNIQUE,             -- sha256 hex of the whole key
  key_prefix  text NOT NULL,                    -- shown in lists, e.g. sl_1a2b3c4d
  created_by  uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_project_idx ON api_keys (project_id);

CREATE TABLE sessions (
  id          uuid PRIMARY KEY,
  user_id     uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash  text NOT NULL UNIQUE,             -- sha256 hex of the session token
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz NOT NULL,
  revoked_at  timestamptz
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

-- One row per delete (who, what, why, when). No foreign keys: it outlives what it describes.
CREATE TABLE audit_log (
  id            bigserial PRIMARY KEY,
  actor_user_id uuid,
  action        text NOT NULL,
  target_type   text NOT NULL,
  target_id     text NOT NULL,
  target_name   text,
  reason        text,
  details       jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_log_target_idx ON audit_log (target_type, target_id);

-- Process-wide secrets generated on first start (the JWT signing key when JWT_SECRET is unset),
-- so that separately started api, web and worker processes agree.
CREATE TABLE server_secrets (
  name       text PRIMARY KEY,
  value      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
