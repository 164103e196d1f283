-- Detection reads (issue 11; src/signals/detection-queries.ts).
--
-- Detectors read the spans stored since their watermark (`ingested_at`), which is not in the spans'
-- sort key. A minmax index on it lets a pass skip every granule stored before the watermark: new
-- spans land in new parts, and start times (the key's hour) follow arrival closely, so a recent
-- ingest range touches few granules and a pass never scans history.
ALTER TABLE spans ADD INDEX IF NOT EXISTS idx_ingested_at ingested_at TYPE minmax GRANULARITY 1;
ALTER TABLE spans MATERIALIZE INDEX idx_ingested_at;

-- A pass leaves out spans it already turned into findings (its lateness overlap re-reads a little):
-- the findings of one detector found since the pass's lower bound, by found_at.
ALTER TABLE findings ADD INDEX IF NOT EXISTS idx_found_at found_at TYPE minmax GRANULARITY 1;
ALTER TABLE findings ADD INDEX IF NOT EXISTS idx_detector_id detector_id TYPE bloom_filter(0.01) GRANULARITY 1;
ALTER TABLE findings ADD INDEX IF NOT EXISTS idx_trace_id trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE findings MATERIALIZE INDEX idx_found_at;
ALTER TABLE findings MATERIALIZE INDEX idx_detector_id;
ALTER TABLE findings MATERIALIZE INDEX idx_trace_id;
