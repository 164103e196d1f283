-- Spans stored compactly (issue 22; measured by `npm run bench -- --only storage`, bench/storage.ts).
-- Realistic agent spans are heavy (each LLM call carries the system prompt and the conversation so
-- far: 2-50 KB) and repeat one another within a trace, so most of a span's bytes on disk are its
-- input and output, and the rest its ids and numbers. Measured on the realistic corpus (20k spans,
-- 4.7 KB of JSON each, merged), steps applied alone to a copy of the same rows:
--
--   compression blocks of 4 MiB instead of 1 MiB: a trace's inputs (all carrying the same prefix)
--     fall into one block far more often, so ZSTD folds them: input 229 → 195 B/span, insert cost
--     unchanged. A granule (2,048 spans, ~7 MB of input) is decompressed whole by a trace read anyway.
--   ZSTD on the ids (trace, span, parent: hex text, which LZ4 leaves at ~15 B for 8 random bytes),
--     Delta + ZSTD on the times, T64 + ZSTD on the token counts, ZSTD on metadata and the floats:
--     everything but input/output 58 → 34 B/span.
--   Left out: ZSTD levels above 3 on input/output (level 6: −8% bytes for 2× the insert work; 9: −10%
--     for 2.5×), and a sort key keeping a trace's spans in time order (trace_start_hour, trace_id,
--     start_time: −1%, not worth a copy of every installed table: ZSTD's window already spans a block).
--
-- Only column codecs and table settings change: no rewrite, no copy. New parts are written this way
-- at once; the parts already stored take the new codecs and block size as background merges rewrite
-- them (OPTIMIZE TABLE spans FINAL does it at once). Every statement is idempotent, so re-running
-- the file is harmless. The rows and every answer read from them are unchanged: codecs are lossless.
ALTER TABLE spans
    MODIFY COLUMN trace_id CODEC(ZSTD(1)),
    MODIFY COLUMN span_id CODEC(ZSTD(1)),
    MODIFY COLUMN parent_span_id CODEC(ZSTD(1)),
    MODIFY COLUMN start_time CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN end_time CODEC(Delta, ZSTD(1)),
    MODIFY COLUMN user_id CODEC(ZSTD(1)),
    MODIFY COLUMN session_id CODEC(ZSTD(1)),
    MODIFY COLUMN metadata CODEC(ZSTD(1)),
    MODIFY COLUMN cost CODEC(ZSTD(1)),
    MODIFY COLUMN input_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN output_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN total_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN cache_read_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN cache_write_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN reasoning_tokens CODEC(T64, ZSTD(1)),
    MODIFY COLUMN time_to_first_token_ms CODEC(ZSTD(1)),
    MODIFY COLUMN output_tokens_per_second CODEC(ZSTD(1)),
    MODIFY COLUMN ingested_at CODEC(Delta, ZSTD(1));

-- One setting a statement (the clustered translation splits an ALTER's commands at commas); the
-- upper bound first, so the lower never exceeds it.
ALTER TABLE spans MODIFY SETTING max_compress_block_size = 4194304;
ALTER TABLE spans MODIFY SETTING min_compress_block_size = 4194304;
