-- Tags (issue 37): a trace's labels as a field of their own, not one metadata string. Producers send
-- them per span (the native `tags` field; Langfuse's `langfuse.trace.tags`, the Vercel AI SDK's
-- `metadata.tags`, `sightline.tags` over OTLP: src/traces/conventions/tags.ts); a trace's tags are
-- the union of its spans' (like its model names), so the list answers, filters (`tags in [...]`:
-- any of them) and shows them from the rollup alone.
--
-- spans.tags: empty for every span stored before (the default); traces.tags: a set, merged as the
-- other sets are. The view is 0005's with the one column more, changed in place so no span is
-- stored while no view runs; traces stored before keep an empty set, which is what their spans say.
ALTER TABLE spans ADD COLUMN IF NOT EXISTS tags Array(LowCardinality(String)) DEFAULT [];

ALTER TABLE traces ADD COLUMN IF NOT EXISTS tags SimpleAggregateFunction(groupUniqArrayArray, Array(String)) AFTER span_names;

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
    groupUniqArrayArray(CAST(s_tags, 'Array(String)')) AS tags,
    max(toUInt8(evaluation_run_id != '')) AS is_evaluation,
    max(s_ttl_days) AS ttl_days
FROM
(
    SELECT
        project_id, trace_start_hour, trace_id, span_id, parent_span_id, name, kind, status, error_type,
        model_name, environment, metadata, cost, evaluation_run_id, input, output,
        start_time AS s_start, end_time AS s_end, user_id AS s_user, session_id AS s_session,
        input_tokens AS s_input_tokens, output_tokens AS s_output_tokens, total_tokens AS s_total_tokens,
        ttl_days AS s_ttl_days, tags AS s_tags
    FROM spans
)
GROUP BY project_id, trace_start_hour, trace_id;
