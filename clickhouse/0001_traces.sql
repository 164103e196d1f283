-- Spans and the trace rollup derived from them (issue: traces; docs/concepts.md, "How trace fields are derived").
--
-- spans: one row per stored span, immutable. Sorted for "one project, newest first": the hour bucket
-- of the span's start comes right after the project so time-window reads touch only their hours.
-- The ingest path drops spans that are already stored before inserting (src/traces/span-writer.ts);
-- ReplacingMergeTree on the same key is the second line, for a span re-sent by two API processes at once.
-- trace_start_hour is the hour a trace was first filed under (its earliest span in the first batch
-- that carried it) and never changes, so all rows of one trace share it and merge: it is the
-- rollup's key. It is never before the hour of the trace's true start, and later only when spans
-- that started later arrived before the root (list-query.ts reads with slack for that).
-- ttl_days is the project's trace_ttl_days at ingest time (per-row TTL).
CREATE TABLE IF NOT EXISTS spans
(
    project_id        LowCardinality(String),
    trace_id          String,
    span_id           String,
    parent_span_id    String,
    name              LowCardinality(String),
    kind              LowCardinality(String),
    start_time        DateTime64(3, 'UTC'),
    end_time          Nullable(DateTime64(3, 'UTC')),
    status            LowCardinality(String),
    error_type        LowCardinality(String),
    error_message     String CODEC(ZSTD(3)),
    model_name        LowCardinality(String),
    environment       LowCardinality(String),
    user_id           String,
    session_id        String,
    input             Nullable(String) CODEC(ZSTD(3)),
    output            Nullable(String) CODEC(ZSTD(3)),
    metadata          Map(LowCardinality(String), String),
    cost              Float64,
    input_tokens      UInt64,
    output_tokens     UInt64,
    total_tokens      UInt64,
    evaluation_run_id String,
    trace_start_hour  DateTime('UTC'),
    ttl_days          UInt16,
    ingested_at       DateTime64(3, 'UTC') DEFAULT now64(3),
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_session_id session_id TYPE bloom_filter(0.01) GRANULARITY 4
)
ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(start_time)
ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)
TTL toDateTime(start_time) + toIntervalDay(ttl_days)
-- Small granules: a trace's spans, with their large input/output, are read without decompressing
-- thousands of neighbours.
SETTINGS index_granularity = 2048;

-- traces: one row per (project, trace start hour, trace) after merges; partial rows from separate
-- inserts merge in the background and are merged again at read time (GROUP BY trace_id).
-- Counts and sums are plain sums: they stay exact because a span is inserted once (see spans above).
-- The sets (model names, kinds, ...) and min/max are idempotent anyway.
CREATE TABLE IF NOT EXISTS traces
(
    project_id        LowCardinality(String),
    trace_start_hour  DateTime('UTC'),
    trace_id          String,
    start_time        SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
    end_time          SimpleAggregateFunction(max, Nullable(DateTime64(3, 'UTC'))),
    span_count        SimpleAggregateFunction(sum, UInt64),
    error_count       SimpleAggregateFunction(sum, UInt64),
    total_cost        SimpleAggregateFunction(sum, Float64),
    input_tokens      SimpleAggregateFunction(sum, UInt64),
    output_tokens     SimpleAggregateFunction(sum, UInt64),
    total_tokens      SimpleAggregateFunction(sum, UInt64),
    -- The root span (the earliest span while no root has arrived): name, span id, start, metadata,
    -- input, output. Kept here so a list page is one read of this table.
    root              AggregateFunction(argMin, Tuple(String, String, DateTime64(3, 'UTC'), Map(String, String), Nullable(String), Nullable(String)), Tuple(UInt8, DateTime64(3, 'UTC'))),
    -- From the root, else the earliest span that has one.
    user_id           AggregateFunction(argMin, String, Tuple(UInt8, UInt8, DateTime64(3, 'UTC'))),
    session_id        AggregateFunction(argMin, String, Tuple(UInt8, UInt8, DateTime64(3, 'UTC'))),
    metadata_pairs    SimpleAggregateFunction(groupUniqArrayArray, Array(Tuple(String, String))),
    model_names       SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    environments      SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    span_kinds        SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    statuses          SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    error_types       SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    span_names        SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
    is_evaluation     SimpleAggregateFunction(max, UInt8),
    ttl_days          SimpleAggregateFunction(max, UInt16),
    INDEX idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(trace_start_hour)
ORDER BY (project_id, trace_start_hour, trace_id)
TTL trace_start_hour + toIntervalDay(ttl_days)
SETTINGS index_granularity = 1024;

-- The inner SELECT renames the columns whose names the outer aliases reuse: ClickHouse would otherwise
-- resolve `start_time` inside argMinState to the `min(start_time)` alias.
CREATE MATERIALIZED VIEW IF NOT EXISTS traces_mv TO traces AS
SELECT
    project_id,
    trace_start_hour,
    trace_id,
    min(s_start) AS start_time,
    max(s_end) AS end_time,
    count() AS span_count,
    countIf(status = 'error') AS error_count,
    sum(cost) AS total_cost,
    sum(s_input_tokens) AS input_tokens,
    sum(s_output_tokens) AS output_tokens,
    sum(s_total_tokens) AS total_tokens,
    argMinState((toString(name), span_id, s_start, CAST(metadata, 'Map(String, String)'), input, output), (toUInt8(parent_span_id != ''), s_start)) AS root,
    argMinState(s_user, (toUInt8(s_user = ''), toUInt8(parent_span_id != ''), s_start)) AS user_id,
    argMinState(s_session, (toUInt8(s_session = ''), toUInt8(parent_span_id != ''), s_start)) AS session_id,
    groupUniqArrayArray(arrayZip(CAST(mapKeys(metadata), 'Array(String)'), mapValues(metadata))) AS metadata_pairs,
    groupUniqArrayIf(toString(model_name), model_name != '') AS model_names,
    groupUniqArrayIf(toString(environment), environment != '') AS environments,
    groupUniqArray(toString(kind)) AS span_kinds,
    groupUniqArray(toString(status)) AS statuses,
    groupUniqArrayIf(toString(error_type), error_type != '') AS error_types,
    groupUniqArray(toString(name)) AS span_names,
    max(toUInt8(evaluation_run_id != '')) AS is_evaluation,
    max(s_ttl_days) AS ttl_days
FROM
(
    SELECT
        project_id, trace_start_hour, trace_id, span_id, parent_span_id, name, kind, status, error_type,
        model_name, environment, metadata, cost, evaluation_run_id, input, output,
        start_time AS s_start, end_time AS s_end, user_id AS s_user, session_id AS s_session,
        input_tokens AS s_input_tokens, output_tokens AS s_output_tokens, total_tokens AS s_total_tokens,
        ttl_days AS s_ttl_days
    FROM spans
)
GROUP BY project_id, trace_start_hour, trace_id;

-- Findings of detectors, by signal (docs/signals.md). Created here for the `signal_id` trace filter.
CREATE TABLE IF NOT EXISTS findings
(
    project_id        LowCardinality(String),
    signal_id         String,
    detector_id       String,
    finding_id        String,
    trace_id          String,
    span_id           String,
    trace_start_time  DateTime64(3, 'UTC'),
    found_at          DateTime64(3, 'UTC') DEFAULT now64(3),
    summary           String
)
ENGINE = ReplacingMergeTree(found_at)
ORDER BY (project_id, signal_id, trace_id, finding_id);
