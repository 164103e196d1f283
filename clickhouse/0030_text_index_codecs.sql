-- The text index in fewer bytes (issue 36, item 1; docs/scaling.md, "Text index"). Measured on the
-- realistic corpus (20,000 spans, merged), the postings were 195 of the 720 bytes a span took on disk:
-- `trace_key` 112 (Delta, ZSTD(1)), `token` 62 (ZSTD(1)), `fields` 11 (LZ4).
--
-- - `trace_key` without Delta: a trace's key recurs in the posting list of every token it holds (about
--   460 of them), and ZSTD finds those repeats as matches of 8 bytes; Delta turned each into a
--   different difference from its neighbour, which no match can find (112 → 61 B a span).
-- - Compressed blocks of at least 1 MiB (the default minimum, 64 KiB, made a block of about one
--   granule): ZSTD then sees the keys of 16 granules at once (→ 26 B a span with ZSTD(3)). A lookup of
--   one token decompresses its whole block, about 3 MiB of columns, a few milliseconds.
-- - `token` with ZSTD(3) (62 → 44), `fields` with ZSTD(1) (11 → 4.5).
-- - The dictionary: `token` with ZSTD(3), `last_hour` with ZSTD(1) (LZ4 before): 80 → 72 B a span.
--
-- Only codecs and a setting change: no rewrite, no copy; every answer read is unchanged. New parts are
-- written so at once; the parts already stored take it as background merges rewrite them (OPTIMIZE
-- TABLE text_postings FINAL does it at once).
ALTER TABLE text_postings MODIFY COLUMN trace_key CODEC(ZSTD(3));
ALTER TABLE text_postings MODIFY COLUMN token CODEC(ZSTD(3));
ALTER TABLE text_postings MODIFY COLUMN fields CODEC(ZSTD(1));
ALTER TABLE text_postings MODIFY SETTING min_compress_block_size = 1048576;
ALTER TABLE text_tokens MODIFY COLUMN token CODEC(ZSTD(3));
ALTER TABLE text_tokens MODIFY COLUMN last_hour CODEC(ZSTD(1));
