-- More span fields (issue 19; docs/spans.md, "More span fields"): what real instrumentation sends
-- beside the spec's table. Added at the end of `spans`, so the views of 0001..0006, which name the
-- columns they read, go on as before; the rows stored before read the defaults. No rollup changes:
-- the trace list's timing filters read these columns of `spans` (src/traces/list-query.ts), so ingest
-- feeds no extra view for a filter few lists use.
--
-- cost_source: where `cost` came from ('sent', 'computed' from the price table, 'none'). Spans stored
--   before this migration had no price table, so a cost on them was sent: the default says so.
-- cache_read_tokens, cache_write_tokens (of input_tokens), reasoning_tokens (of output_tokens).
-- time_to_first_token_ms, output_tokens_per_second: streaming timings, NULL when unknown (a Float64:
--   producers send fractional milliseconds, and a rate is fractional).
-- events, links: JSON arrays as text (bounded by the ingest contract, src/traces/span-input.ts). Only
--   the trace detail reads them, whole, and nothing filters on them: a typed Array(Tuple(…, Map))
--   would cost the writer a conversion per event and the detail read a rebuild, for no query.
-- resource: the producer's resource attributes (host.*, process.*, service.*), kept apart from
--   `metadata`; the same few values on every span of a process, which ZSTD folds.
-- dropped_attributes_count: attributes, events or links dropped past their caps.
ALTER TABLE spans
    ADD COLUMN IF NOT EXISTS cost_source LowCardinality(String) DEFAULT if(cost > 0, 'sent', 'none'),
    ADD COLUMN IF NOT EXISTS cache_read_tokens UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cache_write_tokens UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS reasoning_tokens UInt64 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS time_to_first_token_ms Nullable(Float64),
    ADD COLUMN IF NOT EXISTS output_tokens_per_second Nullable(Float64),
    ADD COLUMN IF NOT EXISTS events String DEFAULT '[]' CODEC(ZSTD(3)),
    ADD COLUMN IF NOT EXISTS links String DEFAULT '[]' CODEC(ZSTD(3)),
    ADD COLUMN IF NOT EXISTS resource Map(LowCardinality(String), String) CODEC(ZSTD(3)),
    ADD COLUMN IF NOT EXISTS dropped_attributes_count UInt32 DEFAULT 0;
