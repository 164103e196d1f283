-- Per-project model prices (docs/model-prices.md; src/model-prices/): they override the default price
-- table (src/model-prices/default-prices.ts, which lives in code, not here) for the spans a project
-- ingests afterwards. Prices are USD per million tokens; a null cached_input / cache_write price falls
-- back to the input price and a null reasoning price to the output price.
-- Idempotent (IF NOT EXISTS): the migration may meet a database where it already ran by hand.

CREATE TABLE IF NOT EXISTS model_prices (
  id                       uuid PRIMARY KEY,
  -- Hard deletes of projects (with their workspace) take the overrides along; a soft-deleted project's
  -- keys stop authenticating, so its overrides price nothing more.
  project_id               uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  model_pattern            text NOT NULL,          -- as the user wrote it; matched in canonical form (matcher.ts)
  input_per_million        double precision NOT NULL CHECK (input_per_million >= 0),
  output_per_million       double precision NOT NULL CHECK (output_per_million >= 0),
  cached_input_per_million double precision CHECK (cached_input_per_million >= 0),
  cache_write_per_million  double precision CHECK (cache_write_per_million >= 0),
  reasoning_per_million    double precision CHECK (reasoning_per_million >= 0),
  currency                 text NOT NULL DEFAULT 'USD' CHECK (currency = 'USD'),
  created_at               timestamptz NOT NULL DEFAULT now(),
  updated_at               timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, model_pattern)
);
