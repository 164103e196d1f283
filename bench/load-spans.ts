import type { ClickHouseClient } from '@clickhouse/client';

/**
 * Bulk-loads the benchmark's span history inside the engine (INSERT … SELECT over numbers()), the
 * only way to put 10M realistic spans in place in minutes. The rows go through the same `spans`
 * table and so the same materialized view as ingested ones. Each trace has 10 spans: an agent root,
 * four LLM calls, two tools, a retriever, an embedding and a chain; traces are spread evenly over
 * the window, oldest first, like a producer's stream. About 1% of spans fail, 1% of traces are
 * evaluation traces, 60% carry a session. Roots carry metadata app_version (12 values), region and
 * customer_tier (3 each) and customer_id (500, hashed so neighbours differ); LLM spans carry prompt_version (5).
 */
export type LoadOptions = { spans: number; projects: string[]; days: number; nowMs: number; batch?: number };

const SPANS_PER_TRACE = 10;

export async function loadSpans(client: ClickHouseClient, options: LoadOptions, onProgress?: (done: number) => void): Promise<void> {
  const batch = options.batch ?? 1_000_000;
  const traces = Math.floor(options.spans / SPANS_PER_TRACE);
  const windowMs = options.days * 86_400_000;
  const startMs = options.nowMs - windowMs;
  for (let offset = 0; offset < traces * SPANS_PER_TRACE; offset += batch) {
    const rows = Math.min(batch, traces * SPANS_PER_TRACE - offset);
    await client.command({
      query: `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status, error_type,
          error_message, model_name, environment, user_id, session_id, input, output, metadata, cost, input_tokens, output_tokens,
          total_tokens, evaluation_run_id, trace_start_hour, ttl_days)
        SELECT
          {projects:Array(String)}[t % length({projects:Array(String)}) + 1] AS project_id,
          lower(hex(sipHash128(t))) AS trace_id,
          if(k = 0, substring(trace_id, 1, 16), lower(hex(sipHash64(t, k)))) AS span_id,
          if(k = 0, '', substring(trace_id, 1, 16)) AS parent_span_id,
          multiIf(k = 0, ['support-agent', 'research-agent', 'sql-assistant', 'rag-chat'][t % 4 + 1],
                  kind = 'llm', 'chat', kind = 'tool', ['search_docs', 'run_sql', 'get_weather', 'send_email'][(t + k) % 4 + 1],
                  kind = 'retriever', 'vector_search', kind = 'embedding', 'embed_query', 'plan') AS name,
          ['agent', 'llm', 'tool', 'llm', 'retriever', 'llm', 'tool', 'llm', 'embedding', 'chain'][k + 1] AS kind,
          fromUnixTimestamp64Milli(toInt64({start:Int64} + t * {step:Float64} + k * 180)) AS start_time,
          start_time + toIntervalMillisecond(if(k = 0, 9 * 180 + 2000 + h % 4000, 40 + h % 1500)) AS end_time,
          if(h % 100 = 7, 'error', if(h % 7 = 0, 'unset', 'ok')) AS status,
          if(status = 'error', ['RateLimitError', 'TimeoutError', 'ToolExecutionError', 'ValidationError'][h % 4 + 1], '') AS error_type,
          if(status = 'error', 'the call failed after 3 retries', '') AS error_message,
          if(kind = 'llm', ['gpt-4o', 'gpt-4o-mini', 'claude-3-5-sonnet', 'claude-3-haiku', 'llama-3.1-70b'][(t + k) % 5 + 1],
             if(kind = 'embedding', 'text-embedding-3-small', '')) AS model_name,
          multiIf(t % 20 < 16, 'production', t % 20 < 19, 'staging', 'development') AS environment,
          if(k = 0, concat('user_', toString(t % 997)), '') AS user_id,
          if(k = 0 AND t % 5 < 3, concat('sess_', toString(intDiv(t, 4))), '') AS session_id,
          if(kind IN ('llm', 'agent'), substring({text:String}, h % 2000 + 1, 1200), NULL) AS input,
          if(kind IN ('llm', 'agent'), substring({text:String}, h % 1500 + 1, 600), NULL) AS output,
          multiIf(k = 0, map('app_version', concat('1.', toString(t % 12)), 'region', ['us-east', 'eu-west', 'ap-south'][t % 3 + 1],
                    'customer_tier', ['free', 'pro', 'enterprise'][t % 3 + 1], 'customer_id', concat('cust_', toString(intHash32(t) % 500))),
                  kind = 'llm', map('prompt_version', concat('v', toString((t + k) % 5))), map()) AS metadata,
          if(kind = 'llm', (input_tokens * 2.5 + output_tokens * 10) / 1e6, 0) AS cost,
          if(kind IN ('llm', 'embedding'), 200 + h % 3000, 0) AS input_tokens,
          if(kind = 'llm', 50 + h % 800, 0) AS output_tokens,
          input_tokens + output_tokens AS total_tokens,
          if(t % 100 = 42, concat('eval-run-', toString(t % 7)), '') AS evaluation_run_id,
          toStartOfHour(fromUnixTimestamp64Milli(toInt64({start:Int64} + t * {step:Float64}))) AS trace_start_hour,
          3650 AS ttl_days
        FROM (SELECT intDiv(number, ${SPANS_PER_TRACE}) AS t, number % ${SPANS_PER_TRACE} AS k, sipHash64(number) AS h
                FROM numbers({offset:UInt64}, {rows:UInt64}))
        SETTINGS max_partitions_per_insert_block = 1000`,
      query_params: {
        projects: options.projects,
        start: startMs,
        step: windowMs / traces,
        offset,
        rows,
        text: LOREM.repeat(8),
      },
    });
    onProgress?.(offset + rows);
  }
}

const LOREM =
  'You are a helpful assistant for an online store. The customer asks about the status of an order, ' +
  'the return policy for electronics, and whether express shipping is available to their region. ' +
  'Use the tools to look up the order, cite the policy document, and answer in two short paragraphs. ' +
  'Order 48213 was shipped on Tuesday by ground freight and should arrive within five business days. ' +
  'Electronics can be returned within thirty days if unopened; opened items carry a restocking fee. ';
