-- Metadata, name and search filters of the trace list without reading the root's input and output
-- (issue: performance). The list's conditions on the root's name and metadata read `root`, an argMin
-- state holding the root's input and output: a 90-day metadata filter deserialised every prompt in
-- the window to compare a few short strings (1.5 s at 3M spans; 10 s on the bench's 10M). Four
-- small columns answer those conditions instead (src/traces/list-query.ts):
--
-- root_head: the root span's name and metadata, '<rank><JSON [name, {metadata}]>', merged with min.
--   The rank is '0' for a span without a parent ('1' otherwise) and its start in epoch ms padded to
--   15 digits, so the minimum is the span `root` picks (the root, else the earliest span), as a plain
--   string: argMin and min over tuples keep their values as generic fields and measured 10 to 20
--   times slower to read. Rows stored before this migration read the default '2', above every rank.
-- user_head, session_head: the trace's user and session as `user_id` and `session_id` pick them (the
--   root's, else the earliest span's that has one), '<rank><value>' with a 17-character rank, merged
--   with min, for the search and user filters.
-- metadata_kv: every span's metadata pairs as '<length of key>:<key><value>' (unambiguous, and
--   independent of any output setting), so `metadata eq` is one has() over short strings.
ALTER TABLE traces
    ADD COLUMN IF NOT EXISTS root_head SimpleAggregateFunction(min, String) DEFAULT '2' AFTER root,
    ADD COLUMN IF NOT EXISTS user_head SimpleAggregateFunction(min, String) DEFAULT '2' AFTER session_id,
    ADD COLUMN IF NOT EXISTS session_head SimpleAggregateFunction(min, String) DEFAULT '2' AFTER user_head,
    ADD COLUMN IF NOT EXISTS metadata_kv SimpleAggregateFunction(groupUniqArrayArray, Array(String)) AFTER metadata_pairs;

-- 0001's view with the four columns; changed in place, so no span is stored while no view runs.
ALTER TABLE traces_mv MODIFY QUERY
SELECT
    project_id,
    trace_start_hour,
    trace_id,
    min(s_start) AS start_time,
    max(s_end) AS end_time,
    count() AS span_count,
    countIf(status = 'error') AS error_count,
    sum(cost) AS total_cost,
    sum(s_input_tokens) AS input_tokens,
    sum(s_output_tokens) AS output_tokens,
    sum(s_total_tokens) AS total_tokens,
    argMinState((toString(name), span_id, s_start, CAST(metadata, 'Map(String, String)'), input, output), (toUInt8(parent_span_id != ''), s_start)) AS root,
    min(concat(toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'),
               toJSONString(tuple(toString(name), CAST(metadata, 'Map(String, String)'))))) AS root_head,
    argMinState(s_user, (toUInt8(s_user = ''), toUInt8(parent_span_id != ''), s_start)) AS user_id,
    argMinState(s_session, (toUInt8(s_session = ''), toUInt8(parent_span_id != ''), s_start)) AS session_id,
    min(concat(toString(toUInt8(s_user = '')), toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'), s_user)) AS user_head,
    min(concat(toString(toUInt8(s_session = '')), toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'), s_session)) AS session_head,
    groupUniqArrayArray(arrayZip(CAST(mapKeys(metadata), 'Array(String)'), mapValues(metadata))) AS metadata_pairs,
    groupUniqArrayArray(arrayMap((k, v) -> concat(toString(length(k)), ':', k, v), CAST(mapKeys(metadata), 'Array(String)'), mapValues(metadata))) AS metadata_kv,
    groupUniqArrayIf(toString(model_name), model_name != '') AS model_names,
    groupUniqArrayIf(toString(environment), environment != '') AS environments,
    groupUniqArray(toString(kind)) AS span_kinds,
    groupUniqArray(toString(status)) AS statuses,
    groupUniqArrayIf(toString(error_type), error_type != '') AS error_types,
    groupUniqArray(toString(name)) AS span_names,
    max(toUInt8(evaluation_run_id != '')) AS is_evaluation,
    max(s_ttl_days) AS ttl_days
FROM
(
    SELECT
        project_id, trace_start_hour, trace_id, span_id, parent_span_id, name, kind, status, error_type,
        model_name, environment, metadata, cost, evaluation_run_id, input, output,
        start_time AS s_start, end_time AS s_end, user_id AS s_user, session_id AS s_session,
        input_tokens AS s_input_tokens, output_tokens AS s_output_tokens, total_tokens AS s_total_tokens,
        ttl_days AS s_ttl_days
    FROM spans
)
GROUP BY project_id, trace_start_hour, trace_id;

-- The traces stored before this migration: one more partial row each, carrying only values the
-- merge treats idempotently (the heads are mins, metadata_kv a set, start/end a min/max, ttl_days a
-- max) and zero in every sum and count, so each merged trace is what the view would have built.
-- A span stored while this runs is seen by the view above too; merging its values in twice changes
-- nothing.
INSERT INTO traces (project_id, trace_start_hour, trace_id, start_time, end_time, root_head, user_head, session_head, metadata_kv, ttl_days)
SELECT
    project_id,
    trace_start_hour,
    trace_id,
    min(s_start),
    max(s_end),
    min(concat(toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'),
               toJSONString(tuple(toString(name), CAST(metadata, 'Map(String, String)'))))),
    min(concat(toString(toUInt8(s_user = '')), toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'), s_user)),
    min(concat(toString(toUInt8(s_session = '')), toString(toUInt8(parent_span_id != '')), leftPad(toString(toUnixTimestamp64Milli(s_start)), 15, '0'), s_session)),
    groupUniqArrayArray(arrayMap((k, v) -> concat(toString(length(k)), ':', k, v), CAST(mapKeys(metadata), 'Array(String)'), mapValues(metadata))),
    max(s_ttl_days)
FROM
(
    SELECT project_id, trace_start_hour, trace_id, name, metadata, parent_span_id,
           start_time AS s_start, end_time AS s_end, user_id AS s_user, session_id AS s_session, ttl_days AS s_ttl_days
    FROM spans
)
GROUP BY project_id, trace_start_hour, trace_id
SETTINGS max_partitions_per_insert_block = 0;
