-- Per-hour span rollup keyed by metadata (issue 15, item 4): what a widget that filters by a
-- metadata key or groups by `metadata.<key>` reads over long windows, instead of every span's map.
-- The planner (src/widgets/planner.ts) reads it when the widget names one metadata key (in its
-- filters and/or group-bys), its other filters and group-bys are 0002's dimensions, and its step is
-- a multiple of an hour; raw spans otherwise.
--
-- Every span lands here as one row per metadata entry with a non-empty key and value (meta_key,
-- meta_value; key_set empty), plus one row with meta_key '' whose key_set lists those keys. So:
--   metadata[k] = v, or contains v (v is never empty):  meta_key = k AND meta_value ... v
--   group by metadata[k]:  meta_key = k  (the span's value)  and  meta_key = '' AND NOT has(key_set, k)
--                          (the spans without a value for k: the '' group)
-- Each span counts in exactly one group of a key, so every state (sums, t-digest, uniq) merges as on
-- raw spans. Same measures and dimensions as span_rollup_1h (0002), durations in milliseconds; keys
-- or values that are '' are left out (metadata[k] = '' is the same as no k).
-- Fed by a view from `spans` (each stored span once, as 0002's); the spans stored before this
-- migration are backfilled at its end. Filters with `!=` (alert predicates) are not answerable here.
CREATE TABLE IF NOT EXISTS span_rollup_meta_1h
(
    project_id     LowCardinality(String),
    meta_key       LowCardinality(String),
    bucket         DateTime('UTC'),
    meta_value     String,
    key_set        Array(LowCardinality(String)),
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
-- The key first: a widget reads one key's rows (and the key-set rows) of its project and hours.
ORDER BY (project_id, meta_key, bucket, meta_value, key_set, model_name, environment, kind, status, name, error_type)
TTL bucket + toIntervalDay(ttl_days);

-- The inner SELECT renames the columns the outer aliases reuse (see 0001's traces_mv).
CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_meta_1h_mv TO span_rollup_meta_1h AS
SELECT
    project_id, e.1 AS meta_key, toStartOfHour(s_start) AS bucket, e.2 AS meta_value, e.3 AS key_set,
    model_name, environment, kind, status, name, error_type,
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
           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d,
           arrayFilter((k, v) -> k != '' AND v != '', mapKeys(metadata), mapValues(metadata)) AS s_keys,
           arrayFilter((v, k) -> k != '' AND v != '', mapValues(metadata), mapKeys(metadata)) AS s_values
    FROM spans
)
ARRAY JOIN arrayPushBack(
    arrayMap((k, v) -> (toString(k), v, CAST([], 'Array(String)')), s_keys, s_values),
    ('', '', arraySort(arrayMap((k) -> toString(k), s_keys)))) AS e
GROUP BY project_id, meta_key, bucket, meta_value, key_set, model_name, environment, kind, status, name, error_type;

-- Without dimensions (a widget whose only filters and group-bys are its metadata key), per hour and
-- per day: a few rows per key and hour whatever the volume, whose t-digests hold many spans each, so
-- a grouped quantile over 90 days merges thousands of states, not millions of small ones. Folded
-- from the per-hour blocks as they are inserted (0002's chained views), so the backfill below fills
-- them too.
CREATE TABLE IF NOT EXISTS span_rollup_meta_totals_1h AS span_rollup_meta_1h;
CREATE TABLE IF NOT EXISTS span_rollup_meta_totals_1d AS span_rollup_meta_1h;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_meta_totals_1h_mv TO span_rollup_meta_totals_1h AS
SELECT
    project_id, meta_key, r_bucket AS bucket, meta_value, key_set,
    '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, meta_key, meta_value, key_set, bucket AS r_bucket, spans AS r_spans, errors AS r_errors, cost AS r_cost,
           input_tokens AS r_input_tokens, output_tokens AS r_output_tokens, total_tokens AS r_total_tokens,
           durations AS r_durations, duration_sum AS r_duration_sum, duration_min AS r_duration_min,
           duration_max AS r_duration_max, duration_q AS r_duration_q, users AS r_users, sessions AS r_sessions,
           traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_meta_1h
)
GROUP BY project_id, meta_key, bucket, meta_value, key_set;

CREATE MATERIALIZED VIEW IF NOT EXISTS span_rollup_meta_totals_1d_mv TO span_rollup_meta_totals_1d AS
SELECT
    project_id, meta_key, toStartOfDay(r_bucket) AS bucket, meta_value, key_set,
    '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    sum(r_spans) AS spans, sum(r_errors) AS errors, sum(r_cost) AS cost, sum(r_input_tokens) AS input_tokens,
    sum(r_output_tokens) AS output_tokens, sum(r_total_tokens) AS total_tokens, sum(r_durations) AS durations,
    sum(r_duration_sum) AS duration_sum, min(r_duration_min) AS duration_min, max(r_duration_max) AS duration_max,
    quantileTDigestMergeState(r_duration_q) AS duration_q, uniqMergeState(r_users) AS users,
    uniqMergeState(r_sessions) AS sessions, uniqMergeState(r_traces) AS traces, max(r_ttl_days) AS ttl_days
FROM
(
    SELECT project_id, meta_key, meta_value, key_set, bucket AS r_bucket, spans AS r_spans, errors AS r_errors, cost AS r_cost,
           input_tokens AS r_input_tokens, output_tokens AS r_output_tokens, total_tokens AS r_total_tokens,
           durations AS r_durations, duration_sum AS r_duration_sum, duration_min AS r_duration_min,
           duration_max AS r_duration_max, duration_q AS r_duration_q, users AS r_users, sessions AS r_sessions,
           traces AS r_traces, ttl_days AS r_ttl_days
    FROM span_rollup_meta_1h
)
GROUP BY project_id, meta_key, bucket, meta_value, key_set;

-- When the view started feeding the rollup: the backfill below takes the spans ingested before.
-- (The embedded engine's system.tables has no creation time.) A span another process ingests in
-- the milliseconds between the view's creation and this row would count twice; migrations run at
-- start, under the Postgres migration lock, before this process ingests.
CREATE TABLE IF NOT EXISTS span_rollup_meta_1h_since (created_at DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY tuple();
INSERT INTO span_rollup_meta_1h_since SELECT now64(3);
-- The spans stored before the view existed (the view feeds the ones inserted since it was created).
-- Aggregation spills to disk past 512 MiB: a large history fits in bounded memory.
INSERT INTO span_rollup_meta_1h
SELECT
    project_id, e.1 AS meta_key, toStartOfHour(s_start) AS bucket, e.2 AS meta_value, e.3 AS key_set,
    model_name, environment, kind, status, name, error_type,
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
           toFloat64(if(end_time IS NULL, 0, toUnixTimestamp64Milli(assumeNotNull(end_time)) - toUnixTimestamp64Milli(start_time))) AS d,
           arrayFilter((k, v) -> k != '' AND v != '', mapKeys(metadata), mapValues(metadata)) AS s_keys,
           arrayFilter((v, k) -> k != '' AND v != '', mapValues(metadata), mapKeys(metadata)) AS s_values
    FROM spans
    WHERE ingested_at < (SELECT min(created_at) FROM span_rollup_meta_1h_since)
)
ARRAY JOIN arrayPushBack(
    arrayMap((k, v) -> (toString(k), v, CAST([], 'Array(String)')), s_keys, s_values),
    ('', '', arraySort(arrayMap((k) -> toString(k), s_keys)))) AS e
GROUP BY project_id, meta_key, bucket, meta_value, key_set, model_name, environment, kind, status, name, error_type
SETTINGS max_partitions_per_insert_block = 0, max_bytes_before_external_group_by = 536870912;
