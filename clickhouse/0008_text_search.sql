-- Full-text search over span input, output and error message (issue 21; src/traces/text-search.ts).
--
-- `text_query` reads the spans of the list's window. A trace's spans start at or after the trace's
-- start, so `start_after` bounds them through the spans' own key; `end_before` bounds them by the
-- rollup hour of their trace (the same late-root slack as the list; src/traces/list-query.ts), which
-- this minmax index lets a read use: the spans' key is their own start, which can lie past the window.
--
-- No index on the text itself. The search is a substring search (no tokenizer, so every script is
-- found the same way), and on the bench's multilingual spans (1M spans, 2,048-row granules) neither
-- n-gram bloom filter measured paid for itself: ngrambf_v1(3) skipped nothing (every granule holds
-- nearly every 3-gram, digits and hex ids included) at 8x the insert cost, ngrambf_v1(4) cut a rare
-- term by a third and slowed common ones; tokenbf_v1 was fast for whole tokens only, which breaks
-- substring search (Chinese, Thai, parts of identifiers). The numbers: docs/traces.md, "Text search".
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_trace_start_hour trace_start_hour TYPE minmax GRANULARITY 1;
ALTER TABLE spans MATERIALIZE INDEX idx_trace_start_hour;
