-- Metadata filters of the trace list without a scan of the window's metadata (issue 22, item 5).
-- A 90-day `metadata eq` list read every trace's `metadata_kv` (and merged it, under FINAL) to keep a
-- few hundred traces: 323 ms at 10M spans. A bloom filter skip index on `metadata_kv` cannot skip
-- anything there: a value held by 1 trace in 500 is in 87% of 1,024-trace granules.
--
-- trace_metadata_kv: one row per (trace, metadata pair of any of its spans), the pair spelled as in
-- `traces.metadata_kv` ('<length of key>:<key><value>'), sorted by project and pair, so the traces
-- holding a pair (`eq`) or any value of a key (`contains`) in a window are one key range. It only
-- says which traces to look at: the list still reads those traces' merged rollup rows for the
-- root-wins rule and every other condition (src/traces/list-query.ts). A trace has a row for a pair
-- exactly when some partial row of it in `traces` holds that pair, so no match is ever missed.
--
-- Fed from `traces` rather than `spans`: the view reads the block traces_mv has just grouped (a
-- row per trace per insert, its pairs already made unique), not every span again. Repeated pairs
-- from later inserts of the same trace collapse in merges (ReplacingMergeTree); reads take them
-- through `IN`, so duplicates before a merge do not matter. ttl_days: the largest a trace was
-- filed with (the version column), as in `traces`, so a pair is dropped no sooner than its trace.
-- The ids are random hex in key order: ZSTD stores them in half LZ4's bytes (on the bench's 10M
-- spans, 8M pairs: 254 MB → 127 MB; the table 26 → 13 B per span).
CREATE TABLE IF NOT EXISTS trace_metadata_kv
(
    project_id        LowCardinality(String),
    kv                String,
    trace_start_hour  DateTime('UTC'),
    trace_id          String CODEC(ZSTD(1)),
    ttl_days          UInt16
)
ENGINE = ReplacingMergeTree(ttl_days)
PARTITION BY toYYYYMM(trace_start_hour)
ORDER BY (project_id, kv, trace_start_hour, trace_id)
TTL trace_start_hour + toIntervalDay(ttl_days);

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_metadata_kv_mv TO trace_metadata_kv AS
SELECT project_id, arrayJoin(metadata_kv) AS kv, trace_start_hour, trace_id, ttl_days
FROM traces;

-- The traces stored before this migration. A trace written while this runs is seen by the view
-- above too; its pairs inserted twice collapse like any repeat.
INSERT INTO trace_metadata_kv (project_id, kv, trace_start_hour, trace_id, ttl_days)
SELECT project_id, arrayJoin(metadata_kv) AS kv, trace_start_hour, trace_id, ttl_days
FROM traces
SETTINGS max_partitions_per_insert_block = 0;
