-- An inverted index of span text for `text_query` (issue 21; src/traces/text-search.ts,
-- src/traces/text-index.ts, docs/traces.md "Text search"), built OFF the insert path: no view on
-- `spans`. A background indexer (workers/text-index.ts; `npm start` runs it) reads the spans stored
-- since its watermark (by `ingested_at`, minmax-indexed by 0003) every few seconds, writes their
-- postings and the project's new tokens, then the new watermark. A search reads the postings for
-- spans at or below the watermark and scans the text of the spans above it (the tail), so what it
-- finds never depends on the indexer having run: with no watermark every span is the tail.
--
-- Tokens: the lowered text (lowerUTF8, as the search compares) split by splitByNonAlpha: the runs
-- between ASCII whitespace and ASCII punctuation. Every non-ASCII character belongs to a token, so a
-- Chinese, Japanese or Thai clause is one token, and so is a word with accents or an emoji. Tokens
-- shorter than 3 bytes are left out: the search never looks up a piece that short (it scans), and a
-- longer piece can't lie inside them.
--
-- Nothing to backfill: spans stored before this migration are above the (absent) watermark, so they
-- are scanned until the indexer's first passes reach them (in chunks, oldest ingest first).

-- One row per (token, trace) after merges. Traces are keyed by (trace_start_hour, sipHash64(trace_id)):
-- 8 bytes instead of the id's 32 hex characters, sorted within a token and hour so they compress.
-- Two traces of one project and hour sharing a key would make one look like the other; the indexer
-- checks every hour it writes for that (text_index_collisions below), and the search scans such an
-- hour instead of trusting its postings. `fields` ORs the fields the token occurs in (1 input,
-- 2 output, 4 error message) for `text_scope`. TTL as the trace's rollup row (`traces`).
CREATE TABLE IF NOT EXISTS text_postings
(
    project_id       LowCardinality(String),
    token            String CODEC(ZSTD(1)),
    trace_start_hour DateTime('UTC') CODEC(Delta, ZSTD(1)),
    trace_key        UInt64 CODEC(Delta, ZSTD(1)),
    fields           SimpleAggregateFunction(groupBitOr, UInt8),
    ttl_days         SimpleAggregateFunction(max, UInt16)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(trace_start_hour)
ORDER BY (project_id, token, trace_start_hour, trace_key)
TTL trace_start_hour + toIntervalDay(ttl_days);

-- Each project's distinct tokens: a search looks here for the tokens containing a term, then reads
-- their postings. Written by the indexer with the postings (no chained view); kept while a trace
-- holding the token may be. A 4-gram bloom filter over granules of 1,024 tokens lets the lookup of a
-- term of 4 bytes or more skip most of the dictionary (measured on 1M bench spans, 2M tokens: 100 ms
-- to 30 ms, for 6 bytes per token); a shorter term reads all of it.
CREATE TABLE IF NOT EXISTS text_tokens
(
    project_id LowCardinality(String),
    token      String CODEC(ZSTD(1)),
    last_hour  SimpleAggregateFunction(max, DateTime('UTC')),
    ttl_days   SimpleAggregateFunction(max, UInt16),
    INDEX idx_token_ngrams token TYPE ngrambf_v1(4, 8192, 2, 0) GRANULARITY 1
)
ENGINE = AggregatingMergeTree
ORDER BY (project_id, token)
TTL last_hour + toIntervalDay(ttl_days)
SETTINGS index_granularity = 1024;

-- The indexer's watermark: every span with `ingested_at` at or below the largest `watermark` has its
-- postings stored. One row per pass, folded to the largest by merges; `project_id` is '' (the
-- watermark covers every project; a project's purge leaves it).
CREATE TABLE IF NOT EXISTS text_index_marks
(
    project_id LowCardinality(String),
    watermark  DateTime64(3, 'UTC'),
    written_at DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplacingMergeTree(watermark)
ORDER BY project_id;

-- Hours of a project in which two traces share a key (found by the indexer): the search scans their
-- spans instead of reading their postings. Expected empty (a 64-bit hash).
CREATE TABLE IF NOT EXISTS text_index_collisions
(
    project_id       LowCardinality(String),
    trace_start_hour DateTime('UTC'),
    ttl_days         UInt16
)
ENGINE = ReplacingMergeTree
ORDER BY (project_id, trace_start_hour)
TTL trace_start_hour + toIntervalDay(ttl_days);
