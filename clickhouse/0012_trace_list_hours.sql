-- The trace list's hourly counts (issue 22, item 5; src/traces/list-query.ts). A list's `meta.total`
-- counted every trace of its window at every page (a FINAL read of the rollup and count() OVER ()):
-- 77 ms for 90 days at 10M spans without a filter, more with one. Per project and rollup hour (the
-- hour a trace is filed under, which never changes: 0001), the set of its traces and the set of its
-- evaluation traces, as exact uniqExact states: the window's total is the sum over its whole hours
-- of |traces| - |evaluations| (a trace is an evaluation trace when any of its partial rows is one,
-- and every evaluation trace is among the hour's traces), a few thousand small states for 90 days
-- whatever the volume. The list corrects the hours the window's ends cut, and the traces whose
-- start lies before their hour, exactly from the rollup (list-query.ts).
--
-- Sets, not counts: a trace's partial rows from several inserts, the backfill below and a span
-- stored while it runs all land in the same set, so nothing counts twice and the migration can run
-- again. `ttl_days` is in the key so a set expires with the traces it counts (the rollup's TTL is
-- per trace, by the same hour and days).
--
-- Fed by a view on `traces`, not on `spans`: it sees one row per trace and insert (the rollup
-- view's output, a tenth of the spans on the bench's traces) and hashes one id per row.
CREATE TABLE IF NOT EXISTS trace_hours
(
    project_id        LowCardinality(String),
    trace_start_hour  DateTime('UTC'),
    ttl_days          UInt16,
    traces            AggregateFunction(uniqExact, String),
    evaluations       AggregateFunction(uniqExact, String)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(trace_start_hour)
ORDER BY (project_id, trace_start_hour, ttl_days)
TTL trace_start_hour + toIntervalDay(ttl_days);

-- The inner SELECT renames the columns the outer aliases reuse (see 0001's traces_mv).
CREATE MATERIALIZED VIEW IF NOT EXISTS trace_hours_mv TO trace_hours AS
SELECT
    project_id,
    trace_start_hour,
    t_ttl_days AS ttl_days,
    uniqExactState(t_trace) AS traces,
    uniqExactStateIf(t_trace, t_evaluation = 1) AS evaluations
FROM
(
    SELECT project_id, trace_start_hour, trace_id AS t_trace, is_evaluation AS t_evaluation, ttl_days AS t_ttl_days
    FROM traces
)
GROUP BY project_id, trace_start_hour, ttl_days;

-- The traces stored before the view existed (a trace stored meanwhile is in both: sets merge).
-- Aggregation spills to disk past 512 MiB: a large history fits in bounded memory.
INSERT INTO trace_hours
SELECT
    project_id,
    trace_start_hour,
    t_ttl_days AS ttl_days,
    uniqExactState(t_trace) AS traces,
    uniqExactStateIf(t_trace, t_evaluation = 1) AS evaluations
FROM
(
    SELECT project_id, trace_start_hour, trace_id AS t_trace, is_evaluation AS t_evaluation, ttl_days AS t_ttl_days
    FROM traces
)
GROUP BY project_id, trace_start_hour, ttl_days
SETTINGS max_partitions_per_insert_block = 0, max_bytes_before_external_group_by = 536870912;
