-- Span parts (quality.md §5; src/protocols/span-parts.ts): the pieces of one span that producers'
-- own protocols send apart (Langfuse's *-create and *-update events, LangSmith's run post and patch),
-- in any order, across requests and processes. Each piece is kept here until its span settles; the
-- merged span is then written once through the span writer, so `spans` and every rollup fed by it
-- count the span once.
--
-- A re-sent piece carries the same part_id (the producer's event id, or a hash of the piece), so it
-- replaces itself instead of adding a row. kind = 'written' marks a span already written.
-- Bounded: every row lives one day (an update whose create never comes is dropped with it).
CREATE TABLE IF NOT EXISTS span_parts
(
    project_id  LowCardinality(String),
    span_id     String,
    trace_id    String,
    part_id     String,
    kind        LowCardinality(String),      -- create | update | written
    fields      String CODEC(ZSTD(3)),       -- the native span fields of the piece, as JSON
    event_time  DateTime64(3, 'UTC'),        -- when the producer made the piece: the order pieces merge in
    received_at DateTime64(3, 'UTC'),
    ttl_days    UInt16
)
ENGINE = ReplacingMergeTree(received_at)
ORDER BY (project_id, span_id, part_id)
TTL toDateTime(received_at) + toIntervalDay(1)
SETTINGS index_granularity = 1024;
