import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import { validateSpans, replaceUnpairedSurrogates } from '../traces/span-input.js';
import { priceBookOf } from '../model-prices/pricing.js';
import { JUDGE_ENVIRONMENT } from '../traces/vocabulary.js';

/**
 * The judge's own call as a trace of the project (docs/evaluators.md, "Judge traces"): one `llm` span
 * in environment `sightline-evaluator`, with the rendered prompt as input, the judgement as output,
 * the tokens, and the cost priced at ingest like any span's, so judge spend shows wherever costs show.
 * Written through the process's span writer, as ingest writes; never enrolled (enrolment.ts), left
 * out of trace lists unless asked for by that environment. Answers the trace id, or null when the
 * span was not stored (the execution keeps its score either way).
 */

export type JudgeCall = {
  model: string;
  prompt: string;
  answer: unknown;
  inputTokens: number;
  outputTokens: number;
  startedMs: number;
  endedMs: number;
  firstAttemptMs: number;
};

export async function writeJudgeTrace(
  ctx: AppContext,
  row: {
    id: string;
    name: string;
    project_id: string;
    trace_ttl_days: number;
    execution_id: string;
    trace_id: string;
    exec_span_id: string | null;
    version: number;
  },
  call: JudgeCall,
): Promise<string | null> {
  const traceId = crypto.randomUUID().replaceAll('-', '');
  const metadata: Record<string, string> = {
    evaluator_id: row.id,
    evaluator_version: String(row.version),
    execution_id: row.execution_id,
    scored_trace_id: row.trace_id,
  };
  if (row.exec_span_id !== null) metadata.scored_span_id = row.exec_span_id;
  const { accepted } = validateSpans([
    {
      trace_id: traceId,
      span_id: crypto.randomBytes(8).toString('hex'),
      name: `evaluator: ${row.name}`,
      kind: 'llm',
      start_time: new Date(call.startedMs).toISOString(),
      end_time: new Date(Math.max(call.endedMs, call.startedMs)).toISOString(),
      model_name: call.model,
      environment: JUDGE_ENVIRONMENT,
      input: call.prompt,
      output: JSON.stringify(call.answer),
      input_tokens: call.inputTokens,
      output_tokens: call.outputTokens,
      metadata,
    },
  ]);
  if (accepted.length !== 1) return null;
  try {
    replaceUnpairedSurrogates(accepted);
    await priceBookOf(ctx.pg).price(row.project_id, accepted);
    await ctx.spanWriter.write(row.project_id, row.trace_ttl_days, accepted);
    return traceId;
  } catch {
    // The span writer refused (full, or stopping): the score matters more than its receipt.
    return null;
  }
}
