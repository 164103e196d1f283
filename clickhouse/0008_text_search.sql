-- Full-text search over span input, output and error message (issue 21; src/traces/text-search.ts).
--
-- `text_query` matches substrings of the lowered text (no tokenizer, so every script is found the
-- same way). Two skip indexes on `spans` let its reads skip granules:
-- idx_trace_start_hour: the list's `end_before` bounds the spans it searches by the rollup hour of
--   their trace (the spans' own key is their start, which can lie past the window's end).
-- idx_text: an n-gram bloom filter over the span's three fields lowered into one string (the
--   expression must be spelled exactly so in the queries: text-search.ts SPAN_TEXT_EXPR). A term of
--   at least 3 characters skips the granules whose filter lacks one of its 3-grams; shorter terms
--   and the exact check per field read the text itself. Measured against the alternatives in
--   docs/traces.md, "Text search" (bench/run.ts rows `text search ...`).
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_trace_start_hour trace_start_hour TYPE minmax GRANULARITY 1;
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_text lowerUTF8(concat(ifNull(input, ''), '\n', ifNull(output, ''), '\n', error_message)) TYPE ngrambf_v1(3, 262144, 2, 0) GRANULARITY 1;
ALTER TABLE spans MATERIALIZE INDEX idx_trace_start_hour;
ALTER TABLE spans MATERIALIZE INDEX idx_text;
