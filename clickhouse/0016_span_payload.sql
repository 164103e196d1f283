-- A span's input and output stored in one compression stream (issue 22, item 2; step 1 of 2, 0017 is
-- step 2). An agent's LLM call N+1 carries call N's answer in its conversation, so the `output` of a
-- span is repeated by the `input` of the next; in two columns ZSTD meets each copy in a different
-- stream and stores both. One column `io` holding input then output (their byte lengths split it
-- again) puts them in one stream: on the realistic corpus (bench/experiments/io-column.ts, 20k spans,
-- merged) input + output take 253 B a span instead of 351 B.
--
--   io        the input's bytes, then the output's ('' for a null);
--   io_split  the input's length in bytes: input = substring(io, 1, io_split), output the rest;
--   io_nulls  bit 0: the input is null, bit 1: the output is null.
--
-- This step adds the three columns and computes them for the spans already stored (a mutation,
-- waited for), while `input` and `output` are still stored columns: re-running it is harmless.
ALTER TABLE spans
    ADD COLUMN IF NOT EXISTS io String DEFAULT concat(ifNull(input, ''), ifNull(output, '')) CODEC(ZSTD(3)) AFTER output,
    ADD COLUMN IF NOT EXISTS io_split UInt32 DEFAULT length(ifNull(input, '')) CODEC(T64, ZSTD(1)) AFTER io,
    ADD COLUMN IF NOT EXISTS io_nulls UInt8 DEFAULT bitOr(if(input IS NULL, 1, 0), if(output IS NULL, 2, 0)) AFTER io_split;

ALTER TABLE spans MATERIALIZE COLUMN io, MATERIALIZE COLUMN io_split, MATERIALIZE COLUMN io_nulls SETTINGS mutations_sync = 2;
