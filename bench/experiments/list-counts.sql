-- name: count() FINAL none
SELECT count() FROM traces FINAL WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 SETTINGS do_not_merge_across_partitions_select_final=1
-- name: today none (window count)
SELECT trace_id, toUnixTimestamp(trace_start_hour) AS hour, count() OVER () AS total FROM traces FINAL WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 ORDER BY start_time DESC, trace_id DESC LIMIT 50 SETTINGS do_not_merge_across_partitions_select_final=1
-- name: late part
SELECT count() FROM traces FINAL WHERE project_id = {p:String} AND is_evaluation = 0 AND (trace_start_hour, trace_id) IN (SELECT trace_start_hour, trace_id FROM traces WHERE project_id = {p:String} AND trace_start_hour >= {from:DateTime64(3)} AND start_time < {from:DateTime64(3)}) SETTINGS do_not_merge_across_partitions_select_final=1
-- name: edges part
SELECT count() FROM traces FINAL WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 AND (trace_start_hour < {from:DateTime64(3)}) SETTINGS do_not_merge_across_partitions_select_final=1
-- name: page bounded 2h
SELECT trace_id, toUnixTimestamp(trace_start_hour) AS hour FROM traces FINAL WHERE project_id = {p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 AND trace_start_hour >= toStartOfHour(now()) - INTERVAL 2 HOUR AND start_time >= toStartOfHour(now()) - INTERVAL 2 HOUR ORDER BY start_time DESC, trace_id DESC LIMIT 50 SETTINGS do_not_merge_across_partitions_select_final=1
-- name: traces parts
SELECT count(), sum(rows) FROM system.parts WHERE active AND table = 'traces'
-- name: count() no FINAL
SELECT count() FROM traces WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0
-- name: by parts per hour
SELECT sumIf(n, parts = 1), groupArrayIf(h, parts > 1) FROM (SELECT trace_start_hour AS h, uniqExact(_part) AS parts, countIf(start_time >= {from:DateTime64(3)} AND is_evaluation = 0) AS n FROM traces WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) GROUP BY h)
-- name: by parts model
SELECT sumIf(n, parts = 1), groupArrayIf(h, parts > 1) FROM (SELECT trace_start_hour AS h, uniqExact(_part) AS parts, countIf(start_time >= {from:DateTime64(3)} AND is_evaluation = 0 AND hasAny(model_names, ['claude-3-haiku'])) AS n FROM traces WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) GROUP BY h)
-- name: count FINAL model
SELECT count() FROM traces FINAL WHERE project_id={p:String} AND trace_start_hour >= toStartOfHour({from:DateTime64(3)}) AND start_time >= {from:DateTime64(3)} AND is_evaluation = 0 AND hasAny(model_names, ['claude-3-haiku']) SETTINGS do_not_merge_across_partitions_select_final=1
