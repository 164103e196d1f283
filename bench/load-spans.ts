import type { ClickHouseClient } from '@clickhouse/client';
import { payloadExpressions } from '../src/traces/span-payload.js';

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

export async function loadSpans(
  client: ClickHouseClient,
  options: LoadOptions,
  onProgress?: (done: number) => void,
): Promise<void> {
  const batch = options.batch ?? 1_000_000;
  const traces = Math.floor(options.spans / SPANS_PER_TRACE);
  const windowMs = options.days * 86_400_000;
  const startMs = options.nowMs - windowMs;
  // A store migrated to the end keeps input and output in `io` (clickhouse/0016); tests of earlier
  // migrations load a store that still has the two columns.
  const io = Number(
    (
      await (
        await client.query({
          query: `SELECT count() AS n FROM system.columns WHERE database = currentDatabase() AND table = 'spans' AND name = 'io'`,
          format: 'JSONEachRow',
        })
      ).json<{ n: string }>()
    )[0]!.n,
  );
  const input = `if(kind IN ('llm', 'agent'), ${multilingual('h', 6, 18)}, NULL)`;
  const output = `if(kind IN ('llm', 'agent'), ${multilingual('bitRotateLeft(h, 17)', 3, 9)}, NULL)`;
  for (let offset = 0; offset < traces * SPANS_PER_TRACE; offset += batch) {
    const rows = Math.min(batch, traces * SPANS_PER_TRACE - offset);
    await client.command({
      query: `INSERT INTO spans (project_id, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status, error_type,
          error_message, model_name, environment, user_id, session_id, ${io ? 'io, io_split, io_nulls' : 'input, output'}, metadata, cost, input_tokens, output_tokens,
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
          ${io ? payloadExpressions(input, output) : `${input} AS input, ${output} AS output`},
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
        phrases: PHRASES,
      },
    });
    onProgress?.(offset + rows);
  }
}

/**
 * A span's text: `min` to `min + spread - 1` sentences drawn from PHRASES by the row's hash (about
 * 70 characters each, so 400 to 1,600 characters of input and 200 to 800 of output), in many
 * scripts, with an order number and a hex reference that make the text of every span differ (what
 * a text search's index must tell apart; the bench's rare terms are such numbers).
 */
function multilingual(hash: string, min: number, spread: number): string {
  const pick = `{phrases:Array(String)}[sipHash64(${hash}, i) % length({phrases:Array(String)}) + 1]`;
  return `concat(arrayStringConcat(arrayMap(i -> ${pick}, range(${min} + ${hash} % ${spread})), ' '),
            ' order ', toString(${hash} % 90000000 + 10000000), ', ref ', lower(hex(intHash32(${hash}))))`;
}

/** Sentences of support chats, tool calls and errors in the scripts users write in. */
const PHRASES = [
  'You are a helpful assistant for an online store; answer in two short paragraphs.',
  'The customer asks about the status of an order and the return policy for electronics.',
  'Use the tools to look up the order, cite the policy document, and keep it short.',
  'Order was shipped on Tuesday by ground freight and should arrive within five business days.',
  'Electronics can be returned within thirty days if unopened; opened items carry a restocking fee.',
  'I would like a refund for the headphones, they stopped working after a week.',
  'Can you check whether express shipping is available to my region before Friday?',
  'calling get_weather(city="Paris", unit="celsius") returned {"temp": 18, "sky": "cloudy"}',
  '{"tool": "search_docs", "arguments": {"query": "warranty claim", "top_k": 5}}',
  'Traceback (most recent call last): File "agent/tools.py", line 88, in run_tool',
  'SELECT order_id, status FROM orders WHERE customer_id = 4521 ORDER BY created_at DESC LIMIT 5',
  'Le client demande où se trouve sa commande et si la livraison express est possible.',
  'Ich möchte meine Bestellung stornieren, weil die Lieferung zu lange dauert.',
  'El cliente pregunta por el reembolso de un pedido dañado durante el envío.',
  'O cliente quer saber quando o pedido será entregue no endereço novo.',
  'Здравствуйте! Где мой заказ? Прошло уже две недели с момента оплаты.',
  'Ваш заказ передан в службу доставки и прибудет в течение трёх дней.',
  'Καλησπέρα, θα ήθελα να επιστρέψω το προϊόν που αγόρασα την περασμένη εβδομάδα.',
  '请帮我查询一下我的订单状态，我已经等了十天了。',
  '您的订单已发货，预计三到五个工作日内送达。',
  '注文した商品がまだ届いていません。配送状況を確認していただけますか？',
  'ご注文の商品は明日お届け予定です。ありがとうございます。',
  '주문한 상품이 아직 도착하지 않았습니다. 배송 상태를 확인해 주세요.',
  'مرحبا، أريد إرجاع المنتج لأنه وصل تالفا، كيف يمكنني استرداد المبلغ؟',
  'שלום, ההזמנה שלי עדיין לא הגיעה, אפשר לבדוק את סטטוס המשלוח?',
  'สวัสดีครับ ผมต้องการตรวจสอบสถานะคำสั่งซื้อของผม',
  'नमस्ते, मेरा ऑर्डर अभी तक नहीं आया है, कृपया स्थिति बताएं।',
  'Thanks so much 🙏 the package arrived and everything works 🎉',
  'The model answered with a summary of the three policy documents and a link to the form.',
  'Retrieved 5 chunks from the knowledge base with similarity above 0.82 for the question.',
  'The user is frustrated; apologise once, then give the tracking number and the next step.',
  'ValidationError: field "quantity" must be a positive integer, got -1 in line item 3',
];
