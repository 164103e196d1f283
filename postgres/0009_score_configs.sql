-- Score configs (quality.md §1, "Score configs"; src/scores/configs.ts): what a score of a name must be.
-- Type, range and categories never change once made (a new config is made instead); only the
-- description and `archived` do. A name is unique in its project.
CREATE TABLE IF NOT EXISTS score_configs (
  id          uuid PRIMARY KEY,
  project_id  uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name        text NOT NULL,
  data_type   text NOT NULL CHECK (data_type IN ('numeric', 'categorical', 'boolean')),
  min_value   double precision,
  max_value   double precision,
  categories  jsonb,                 -- categorical: [{label, value}]; else null
  description text,
  archived    boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, name)
);
