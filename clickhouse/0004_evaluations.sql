-- Evaluation results for public SQL (issue 12; src/sql/contract.ts table `evaluation_results`), so
-- analysts can join results with traces and spans (`trace_id`, `evaluation_run_id`).
--
-- Postgres holds the results and the run summaries (postgres/0005_datasets_evaluations.sql); this is
-- their copy, written by the same request before it commits (src/evaluations/result-mirror.ts).
-- A re-sent result replaces the earlier one: `revision` counts up in Postgres with every replacement,
-- and the replacing engine keeps the highest per (project, run, test case); reads use FINAL.
CREATE TABLE IF NOT EXISTS evaluation_results
(
    project_id         LowCardinality(String),
    evaluation_run_id  String,
    evaluation_id      String,
    dataset_version_id String,
    test_case_id       String,
    trace_id           Nullable(String),
    output             Nullable(String) CODEC(ZSTD(3)),   -- the result's output as JSON text
    error              Nullable(String),
    scores             Map(String, Float64),              -- observed score values (booleans as 1/0)
    metrics            Map(String, Float64),
    passed             Nullable(UInt8),                   -- the result's verdict; null: no score gave one
    revision           UInt32,
    written_at         DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(revision)
ORDER BY (project_id, evaluation_run_id, test_case_id);
