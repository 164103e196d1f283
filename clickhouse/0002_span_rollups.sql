-- Per-minute and per-hour span rollups for dashboards and alerts (docs/design.md, decision 4; issue:
-- dashboards). Fed by materialized views from `spans`, so every stored span lands in both once
-- (span-writer.ts never stores a span twice). Keyed by the dimensions widgets group and filter by;
-- the planner (src/widgets/planner.ts) reads them when a widget's filters and group-bys are among
-- these dimensions and its interval is a multiple of the grain, and raw spans otherwise.
-- Durations are in milliseconds; a span without an end counts in `spans` but not in the durations.
CREATE TABLE IF NOT EXISTS span_rollup_1m
(
    project_id     LowCardinality(String),
    bucket         DateTime('UTC'),
    model_name     LowCardinality(String),
    environment    LowCardinality(String),
    kind           LowCardinality(String),
    status         LowCardinality(String),
    name           LowCardinality(String),
    error_type     LowCardinality(String),
    spans          SimpleAggregateFunction(sum, UInt64),
    errors         SimpleAggregateFunction(sum, UInt64),
    cost           SimpleAggregateFunction(sum, Float64),
    input_tokens   SimpleAggregateFunction(sum, UInt64),
    output_tokens  SimpleAggregateFunction(sum, UInt64),
    total_tokens   SimpleAggregateFunction(sum, UInt64),
    durations      SimpleAggregateFunction(sum, UInt64),
    duration_sum   SimpleAggregateFunction(sum, Float64),
    duration_min   SimpleAggregateFunction(min, Nullable(Float64)),
    duration_max   SimpleAggregateFunction(max, Nullable(Float64)),
    duration_q     AggregateFunction(quantileTDigest, Float64),
    users          AggregateFunction(uniq, String),
    sessions       AggregateFunction(uniq, String),
    traces         AggregateFunction(uniq, String),
    ttl_days       SimpleAggregateFunction(max, UInt16)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (project_id, bucket, model_name, environment, kind, status, name, error_type)
TTL bucket + toIntervalDay(ttl_days);

CREATE TABLE IF NOT EXISTS span_rollup_1h AS span_rollup_1m;

-- The inner SELECT renames the columns the outer aliases reuse (see 0001's traces_mv).
CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_1m_mv TO span_rollup_1m AS
SELECT
    project_id, toStartOfMinute(s_start) AS bucket, model_name, environment, kind, status, name, error_type,
    count() AS spans,
    countIf(status = 'error') AS errors,
    sum(s_cost) AS cost,
    sum(s_input_tokens) AS input_tokens,
    sum(s_output_tokens) AS output_tokens,
    sum(s_total_tokens) AS total_tokens,
    countIf(s_end IS NOT NULL) AS durations,
    sumIf(d, s_end IS NOT NULL) AS duration_sum,
    min(if(s_end IS NULL, NULL, d)) AS duration_min,
    max(if(s_end IS NULL, NULL, d)) AS duration_max,
    quantileTDigestStateIf(d, s_end IS NOT NULL) AS duration_q,
    uniqStateIf(s_user, s_user != '') AS users,
    uniqStateIf(s_session, s_session != '') AS sessions,
    uniqState(s_trace) AS traces,
    max(s_ttl) AS ttl_days
FROM
(
    SELECT project_id, model_name, environment, kind, status, name, error_type,
           start_time AS s_start, end_time AS s_end, cost AS s_cost, input_tokens AS s_input_tokens,
           output_tokens AS s_output_tokens, total_tokens AS s_total_tokens, user_id AS s_user, session_id AS s_session,
           trace_id AS s_trace, ttl_days AS s_ttl,
           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d
    FROM spans
)
GROUP BY project_id, bucket, model_name, environment, kind, status, name, error_type;

-- The hourly rollup and the dimension-free totals (what a dashboard without filters or group-bys
-- reads, a few thousand rows for 90 days whatever the volume) are folded from the per-minute
-- blocks as they are inserted: chained views, so a span is read once at ingest, not three times.
CREATE TABLE IF NOT EXISTS span_rollup_totals_1m AS span_rollup_1m;
CREATE TABLE IF NOT EXISTS span_rollup_totals_1h AS span_rollup_1m;
CREATE TABLE IF NOT EXISTS span_rollup_totals_1d AS span_rollup_1m;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_1h_mv TO span_rollup_1h AS
SELECT
    project_id, toStartOfHour(r_bucket) AS bucket, model_name, environment, kind, status, name, error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, model_name, environment, kind, status, name, error_type, bucket AS r_bucket, spans AS r_spans,
           errors AS r_errors, cost AS r_cost, input_tokens AS r_input_tokens, output_tokens AS r_output_tokens,
           total_tokens AS r_total_tokens, durations AS r_durations, duration_sum AS r_duration_sum,
           duration_min AS r_duration_min, duration_max AS r_duration_max, duration_q AS r_duration_q, users AS r_users,
           sessions AS r_sessions, traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_1m
)
GROUP BY project_id, bucket, model_name, environment, kind, status, name, error_type;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_totals_1m_mv TO span_rollup_totals_1m AS
SELECT
    project_id, r_bucket AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, bucket AS r_bucket, spans AS r_spans, errors AS r_errors, cost AS r_cost, input_tokens AS r_input_tokens,
           output_tokens AS r_output_tokens, total_tokens AS r_total_tokens, durations AS r_durations,
           duration_sum AS r_duration_sum, duration_min AS r_duration_min, duration_max AS r_duration_max,
           duration_q AS r_duration_q, users AS r_users, sessions AS r_sessions, traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_1m
)
GROUP BY project_id, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_totals_1h_mv TO span_rollup_totals_1h AS
SELECT
    project_id, toStartOfHour(r_bucket) AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, bucket AS r_bucket, spans AS r_spans, errors AS r_errors, cost AS r_cost, input_tokens AS r_input_tokens,
           output_tokens AS r_output_tokens, total_tokens AS r_total_tokens, durations AS r_durations,
           duration_sum AS r_duration_sum, duration_min AS r_duration_min, duration_max AS r_duration_max,
           duration_q AS r_duration_q, users AS r_users, sessions AS r_sessions, traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_1m
)
GROUP BY project_id, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_totals_1d_mv TO span_rollup_totals_1d AS
SELECT
    project_id, toStartOfDay(r_bucket) AS bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, bucket AS r_bucket, spans AS r_spans, errors AS r_errors, cost AS r_cost, input_tokens AS r_input_tokens,
           output_tokens AS r_output_tokens, total_tokens AS r_total_tokens, durations AS r_durations,
           duration_sum AS r_duration_sum, duration_min AS r_duration_min, duration_max AS r_duration_max,
           duration_q AS r_duration_q, users AS r_users, sessions AS r_sessions, traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_1m
)
GROUP BY project_id, bucket;
