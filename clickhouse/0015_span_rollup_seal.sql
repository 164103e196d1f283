-- The span rollups sealed off the insert path (issue 22, item 3; src/rollups/seal.ts, docs/design.md,
-- "Sealed rollups"). An insert into `spans` used to fire ten materialized views; each costs 10-14 ms of
-- engine work per insert (mostly planning its query) whatever the block size, plus ~25 µs a span for
-- those reading spans. The two views reading spans for the span rollups (0002's span_rollup_1m_mv,
-- 0006's span_rollup_meta_1h_mv) are dropped here. A sealer (workers/rollup-seal.ts; `npm start` runs
-- it) inserts every few seconds the rollup rows of the spans stored since its watermark (by
-- `ingested_at`, minmax-indexed by 0003), so the views chained on span_rollup_1m and span_rollup_meta_1h
-- (hourly, totals; 0002, 0006, 0011) fire once per pass instead of once per ingest request:
--
--   INSERT INTO span_rollup_1m      SELECT * FROM span_rollup_tail(stored_after = wm, stored_until = hi)
--   INSERT INTO span_rollup_meta_1h SELECT * FROM span_rollup_meta_tail(stored_after = wm, stored_until = hi)
--
-- Reads never depend on the sealer having run: each rollup `r` is read through `r_sealed(sealed = wm)`,
-- its rows UNION ALL the same-shaped states of the spans stored after the watermark `wm` (the tail;
-- a read of the recent granules only). So a span counts in the rollup rows or in the tail, once:
--
-- * The pass writes a 'begin' mark (its range) before its inserts and an 'end' mark (the new
--   watermark) after. A reader reads the marks before and after its query (src/rollups/sealed-read.ts)
--   and retries when a pass was under way or the watermark moved: a seqlock, so no reader counts a
--   pass's spans twice (rollup rows visible, watermark not yet moved) or misses them.
-- * A pass that fails half-way (after some of its inserts, before its 'end' mark) leaves its 'begin'
--   mark: the next pass redoes exactly that range, and its inserts carry the range as
--   insert_deduplication_token, so the blocks already stored (in the rollups and the chained ones:
--   deduplicate_blocks_in_dependent_materialized_views) are dropped, the missing ones stored. Hence the
--   deduplication window on every rollup below (the engine keeps the last 1,000 blocks' ids).
--
-- The watermark starts where the dropped views stopped: every span stored before this migration is in
-- the rollups already. As with 0006's `_since` row, a span another API process inserts in the
-- milliseconds between the views' drop and the initial mark below is in neither (migrations run at
-- start, under the Postgres migration lock, before this process ingests). Re-running the file keeps
-- the mark it set the first time.

-- The sealer's marks: one row per pass and kind, folded to the newest by merges (readers take max()).
-- 'begin': the range (range_start, range_end] a pass is sealing; 'end': the range it sealed, whose
-- range_end is the watermark. A pass is under way (or failed half-way) while the newest 'begin' ends
-- after the newest 'end'. `project_id` is '' (one watermark for every project; a purge leaves it).
CREATE TABLE IF NOT EXISTS span_rollup_seal_marks
(
    project_id  LowCardinality(String),
    kind        LowCardinality(String),
    range_start DateTime64(3, 'UTC'),
    range_end   DateTime64(3, 'UTC'),
    written_at  DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(range_end)
ORDER BY (project_id, kind);

ALTER TABLE span_rollup_1m MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_1h MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_totals_1m MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_totals_1h MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_totals_1d MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_meta_1h MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_meta_totals_1h MODIFY SETTING non_replicated_deduplication_window = 1000;
ALTER TABLE span_rollup_meta_totals_1d MODIFY SETTING non_replicated_deduplication_window = 1000;

DROP VIEW IF EXISTS span_rollup_1m_mv;
DROP VIEW IF EXISTS span_rollup_meta_1h_mv;

-- The initial watermark: now, once (a re-run finds the row and adds nothing).
INSERT INTO span_rollup_seal_marks (project_id, kind, range_start, range_end)
SELECT '', 'end', now64(3), now64(3) WHERE (SELECT count() FROM span_rollup_seal_marks) = 0;

-- The rollup rows of the spans stored in (stored_after, stored_until]: 0002's and 0006's view queries
-- over those spans, columns in the tables' order. The sealer inserts them; the `_sealed` views below
-- read them for the spans past the watermark. The inner SELECT renames the columns the outer aliases
-- reuse (see 0001's traces_mv).
CREATE VIEW IF NOT EXISTS span_rollup_tail AS
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
    WHERE ingested_at > {stored_after:DateTime64(3, 'UTC')} AND ingested_at <= {stored_until:DateTime64(3, 'UTC')}
)
GROUP BY project_id, bucket, model_name, environment, kind, status, name, error_type;

CREATE VIEW IF NOT EXISTS span_rollup_meta_tail AS
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
    -- 0006's backfill put every span stored before its `_since` row in span_rollup_meta_1h: never past
    -- it (the watermark starts after it anyway, since this migration runs after 0006).
    WHERE ingested_at > greatest({stored_after:DateTime64(3, 'UTC')}, (SELECT min(created_at) FROM span_rollup_meta_1h_since))
      AND ingested_at <= {stored_until:DateTime64(3, 'UTC')}
)
ARRAY JOIN arrayPushBack(
    arrayMap((k, v) -> (toString(k), v, CAST([], 'Array(String)')), s_keys, s_values),
    ('', '', arraySort(arrayMap((k) -> toString(k), s_keys)))) AS e
GROUP BY project_id, meta_key, bucket, meta_value, key_set, model_name, environment, kind, status, name, error_type;

-- What every read of a rollup names (src/query/span-plan.ts, src/alerts/queries.ts): the rollup's
-- rows and the tail's, for the spans stored after `sealed` (the watermark the reader read). The tail
-- of a coarser rollup keeps the minute (or hour) buckets: reads group them by whole steps of the
-- rollup's grain over ranges aligned to it, so a finer bucket lands where the coarser one would.
-- The totals' tails leave the dimensions empty, as the totals' rows do.
CREATE VIEW IF NOT EXISTS span_rollup_1m_sealed AS
SELECT * FROM span_rollup_1m
UNION ALL SELECT * FROM span_rollup_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_1h_sealed AS
SELECT * FROM span_rollup_1h
UNION ALL SELECT * FROM span_rollup_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_totals_1m_sealed AS
SELECT * FROM span_rollup_totals_1m
UNION ALL SELECT project_id, bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    spans, errors, cost, input_tokens, output_tokens, total_tokens, durations, duration_sum, duration_min, duration_max, duration_q, users, sessions, traces, ttl_days
FROM span_rollup_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_totals_1h_sealed AS
SELECT * FROM span_rollup_totals_1h
UNION ALL SELECT project_id, bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    spans, errors, cost, input_tokens, output_tokens, total_tokens, durations, duration_sum, duration_min, duration_max, duration_q, users, sessions, traces, ttl_days
FROM span_rollup_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_totals_1d_sealed AS
SELECT * FROM span_rollup_totals_1d
UNION ALL SELECT project_id, bucket, '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    spans, errors, cost, input_tokens, output_tokens, total_tokens, durations, duration_sum, duration_min, duration_max, duration_q, users, sessions, traces, ttl_days
FROM span_rollup_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_meta_1h_sealed AS
SELECT * FROM span_rollup_meta_1h
UNION ALL SELECT * FROM span_rollup_meta_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_meta_totals_1h_sealed AS
SELECT * FROM span_rollup_meta_totals_1h
UNION ALL SELECT project_id, meta_key, bucket, meta_value, key_set,
    '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    spans, errors, cost, input_tokens, output_tokens, total_tokens, durations, duration_sum, duration_min, duration_max, duration_q, users, sessions, traces, ttl_days
FROM span_rollup_meta_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));

CREATE VIEW IF NOT EXISTS span_rollup_meta_totals_1d_sealed AS
SELECT * FROM span_rollup_meta_totals_1d
UNION ALL SELECT project_id, meta_key, bucket, meta_value, key_set,
    '' AS model_name, '' AS environment, '' AS kind, '' AS status, '' AS name, '' AS error_type,
    spans, errors, cost, input_tokens, output_tokens, total_tokens, durations, duration_sum, duration_min, duration_max, duration_q, users, sessions, traces, ttl_days
FROM span_rollup_meta_tail(stored_after = {sealed:DateTime64(3, 'UTC')}, stored_until = toDateTime64('2299-12-31 00:00:00', 3, 'UTC'));
