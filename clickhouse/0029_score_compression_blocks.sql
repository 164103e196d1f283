-- Smaller compressed blocks for scores (quality.md §1; issue 31). A trace's scores are read by score id
-- (the newest row of each, src/query/scores.ts) and through the trace-ordered projection
-- (0028_score_trace_projection.sql): a page of 50 traces touches about 200 granules scattered over the
-- table, and reading one granule decompresses its whole block, which the default minimum (64 KiB)
-- makes 3 to 8 granules long. With blocks of 8 KiB a block is about one granule: measured at 1M scores,
-- the read by score id 33 → 22 ms CPU and the projection's 17 → 13 ms, the size on disk and a full
-- scan of the project (a `score` filter) unchanged. New parts take it; older ones as they merge.
ALTER TABLE scores MODIFY SETTING min_compress_block_size = 8192;
