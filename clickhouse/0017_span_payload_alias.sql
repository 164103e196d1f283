-- Step 2 of 0016: `input` and `output` become ALIAS columns read from `io`, so they take no space,
-- and every query, view and the public SQL contract keep reading them by name. Writers insert
-- io, io_split and io_nulls (src/traces/span-payload.ts); an insert naming input or output fails.
-- The three columns lose their defaults (which read input and output) first; a span inserted
-- without them reads as null input and output. The last statement is the one that changes the data's
-- meaning, so a failure before it leaves the table as 0016 left it.
ALTER TABLE spans
    MODIFY COLUMN io String DEFAULT '' CODEC(ZSTD(3)),
    MODIFY COLUMN io_split UInt32 DEFAULT 0 CODEC(T64, ZSTD(1)),
    MODIFY COLUMN io_nulls UInt8 DEFAULT 3;

ALTER TABLE spans MODIFY COLUMN input REMOVE CODEC, MODIFY COLUMN output REMOVE CODEC;

ALTER TABLE spans
    MODIFY COLUMN input Nullable(String) ALIAS if(bitTest(io_nulls, 0), NULL, substring(io, 1, io_split)),
    MODIFY COLUMN output Nullable(String) ALIAS if(bitTest(io_nulls, 1), NULL, substring(io, io_split + 1));
