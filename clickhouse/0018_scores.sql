-- Scores (quality.md §1; src/scores/): one judgement of a trace, one of its spans, or a session.
-- Written like spans (batched inserts, never a Postgres row per score); their definitions (score
-- configs) live in Postgres (postgres/0009_score_configs.sql).
--
-- Replacing a score (a re-sent score_id) and deleting one are cheap writes, not mutations: the key is
-- (project_id, score_id), every write carries `version` (epoch microseconds of the write, so the newest
-- wins), and a delete writes the score again with is_deleted = 1. Reads that must see one row per
-- score use FINAL, which the replacing engine applies per key; reads touch one project, and the skip
-- indexes find a trace's, session's or name's scores without reading the project's others.
-- Retention: ttl_days is the project's trace_ttl_days when the score was written (like spans).
CREATE TABLE IF NOT EXISTS scores
(
    project_id        LowCardinality(String),
    score_id          String,
    trace_id          String,                    -- '' for a session score
    span_id           String,                    -- '' unless the score is about one span
    session_id        String,
    name              LowCardinality(String),
    data_type         LowCardinality(String),    -- numeric | categorical | boolean
    value             Float64,
    string_value      String,                    -- categorical: the label; boolean: 'true'/'false'; numeric: ''
    comment           String CODEC(ZSTD(3)),
    source            LowCardinality(String),    -- api | evaluator | annotation
    evaluator_id      String,
    execution_id      String,
    evaluator_version UInt32,
    author_user_id    String,
    config_id         String,
    metadata          Map(String, String),
    environment       LowCardinality(String),
    created_at        DateTime64(3, 'UTC'),
    updated_at        DateTime64(3, 'UTC'),
    version           UInt64,
    is_deleted        UInt8,
    ttl_days          UInt16,
    INDEX trace_idx trace_id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX session_idx session_id TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX name_idx name TYPE set(256) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(version, is_deleted)
ORDER BY (project_id, score_id)
TTL toDateTime(created_at) + toIntervalDay(ttl_days)
SETTINGS index_granularity = 1024;
