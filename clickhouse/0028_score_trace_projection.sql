-- A trace's scores by key (quality.md §1; the list's per-item summaries, the trace detail, annotation):
-- the scores table is keyed by (project_id, score_id) for replacement, so a read by trace found its
-- score ids through the `trace_idx` bloom filter, which tests every granule of the project (measured
-- 80-250 ms at 1M scores, most of a 50-trace list page). This projection keeps the ids in trace order:
-- the same read touches a granule per trace (about 15 ms). It holds every row, old versions too, so
-- it only names candidates; the newest row of each is still taken by score_id (src/query/scores.ts).
-- A replacing engine drops a projection's rows on merge unless told to rebuild it.
ALTER TABLE scores MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild';
ALTER TABLE scores ADD PROJECTION IF NOT EXISTS scores_by_trace (SELECT project_id, trace_id, score_id ORDER BY project_id, trace_id, score_id);
ALTER TABLE scores MATERIALIZE PROJECTION scores_by_trace SETTINGS mutations_sync = 2;
