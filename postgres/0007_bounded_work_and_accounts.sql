-- Issue 20: dataset versions bounded by what they cost, and accounts nobody is trapped in.
-- Idempotent: every statement may run again.

-- The text copied from traces into a version, once per distinct trace or span referenced (a version
-- naming one trace 100 times stores its input once). A case that copied from a source points to it
-- by `source_ordinal` and keeps SQL NULL in the columns it took from there; reads take
-- COALESCE(case value, source value), so answers are the same as when every case held a copy.
CREATE TABLE IF NOT EXISTS dataset_version_sources (
  version_id uuid NOT NULL REFERENCES dataset_versions(id) ON DELETE CASCADE,
  ordinal    integer NOT NULL,
  input      jsonb,
  output     jsonb,
  PRIMARY KEY (version_id, ordinal)
);
ALTER TABLE dataset_test_cases ADD COLUMN IF NOT EXISTS source_ordinal integer;

-- A large version is written in chunks, each its own short transaction, so no caller holds the store
-- (embedded PGlite is one session) for the whole write. Until its last chunk is in, the version row
-- has no number: every read and run skips it, and the final step numbers it in one short transaction.
ALTER TABLE dataset_versions ALTER COLUMN version_number DROP NOT NULL;
CREATE INDEX IF NOT EXISTS dataset_versions_pending_idx ON dataset_versions (created_at) WHERE version_number IS NULL;

CREATE OR REPLACE FUNCTION refuse_numbered_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Numbering a pending version is the one change allowed; a numbered version never changes.
  IF OLD.version_number IS NULL THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'dataset versions are immutable' USING ERRCODE = 'raise_exception';
END $$;
DROP TRIGGER IF EXISTS dataset_versions_immutable ON dataset_versions;
CREATE TRIGGER dataset_versions_immutable BEFORE UPDATE ON dataset_versions FOR EACH ROW EXECUTE FUNCTION refuse_numbered_version_change();

-- The landing project (GET /projects lists it first): the one the user last created or read.
ALTER TABLE users ADD COLUMN IF NOT EXISTS last_project_id uuid;
CREATE INDEX IF NOT EXISTS workspaces_created_by_idx ON workspaces (created_by);
