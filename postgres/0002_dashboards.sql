-- Dashboards and their widgets (docs/dashboards.md).
-- Every project has exactly one default dashboard ("Overview"), created with the project or on the
-- first read of a project that predates this table (src/dashboards/service.ts).

CREATE TABLE dashboards (
  id          uuid PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name        text NOT NULL,
  description text NOT NULL DEFAULT '',
  is_default  boolean NOT NULL DEFAULT false,
  created_by  uuid REFERENCES users(id) ON DELETE SET NULL,  -- null: the account was deleted
  create_time timestamptz NOT NULL DEFAULT now(),
  update_time timestamptz NOT NULL DEFAULT now(),
  -- The target of widgets' (dashboard_id, project_id) key: a widget lives in its dashboard's project.
  UNIQUE (id, project_id)
);
-- At most one default per project; the idempotent create conflicts on it (ON CONFLICT ... WHERE is_default).
CREATE UNIQUE INDEX dashboards_one_default_idx ON dashboards (project_id) WHERE is_default;
-- The catalog list: default first, then by creation time.
CREATE INDEX dashboards_project_idx ON dashboards (project_id, create_time, id);

CREATE TABLE widgets (
  id           uuid PRIMARY KEY,
  dashboard_id uuid NOT NULL,
  project_id   uuid NOT NULL,
  title        text NOT NULL,
  type         text NOT NULL,                 -- one of WIDGET_TYPES (src/widgets/spec.ts)
  spec         jsonb NOT NULL,                -- valid for its type (specIssues) when written
  created_by   uuid REFERENCES users(id) ON DELETE SET NULL,
  create_time  timestamptz NOT NULL DEFAULT now(),
  update_time  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (dashboard_id, project_id) REFERENCES dashboards (id, project_id) ON DELETE CASCADE
);
-- A dashboard's widgets in their order: creation time, ties by id.
CREATE INDEX widgets_dashboard_idx ON widgets (dashboard_id, create_time, id);
