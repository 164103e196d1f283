-- Cheaper ingest (issue 22, item 3): the rollups chained on the per-minute and per-hour blocks are
-- folded from their smallest parent. Every view fired by an insert into `spans` runs inside that
-- insert, and a chained view's cost grows with the rows of the block it reads: 0002 and 0006 fold
-- the hourly and daily totals from the dimensioned blocks (a row per minute, or hour, and per
-- combination of six dimensions: on spans spread over a day, about one row per span), where the
-- totals one grain finer already hold the same sums in a row per minute or hour:
--
--   span_rollup_totals_1h       from span_rollup_totals_1m  (was span_rollup_1m)
--   span_rollup_totals_1d       from span_rollup_totals_1h  (was span_rollup_1m)
--   span_rollup_meta_totals_1d  from span_rollup_meta_totals_1h  (was span_rollup_meta_1h)
--
-- Views cascade: an insert into `spans` fills span_rollup_1m, whose block fills span_rollup_totals_1m,
-- whose block fills span_rollup_totals_1h, and so on, in the same insert. The sums, counts, min/max
-- and uniq states are the same whichever way they are grouped; a t-digest folded in two steps may
-- place its centroids differently, within the t-digest's error (what the rollup/raw equality tests
-- allow every quantile read from a rollup). Rows stored before stay as they are: nothing to carry.
--
-- MODIFY QUERY swaps a view's source and query in one step (the view is never detached and never
-- reads both sources), so no span is missed or counted twice while this runs beside other API processes.

ALTER TABLE span_rollup_totals_1h_mv MODIFY QUERY
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
    FROM span_rollup_totals_1m
)
GROUP BY project_id, bucket;

ALTER TABLE span_rollup_totals_1d_mv MODIFY QUERY
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
    FROM span_rollup_totals_1h
)
GROUP BY project_id, bucket;

ALTER TABLE span_rollup_meta_totals_1d_mv MODIFY QUERY
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
    FROM span_rollup_meta_totals_1h
)
GROUP BY project_id, meta_key, bucket, meta_value, key_set;
