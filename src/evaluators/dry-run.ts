import type { AppContext } from '../context.js';
import { NotFoundError, RequestValidationError } from '../errors.js';
import { SecretBoxError } from '../secrets/secret-box.js';
import { openConnection } from '../llm-connections/service.js';
import { callJudge } from '../llm-connections/providers.js';
import { runCheck, type ScoreValue } from './checks.js';
import { readJudgement, scoreSchemaOf } from './judgement.js';
import { evaluatorScoreId } from './identity.js';
import { renderPrompt, type ScoredTarget } from './template.js';
import { evaluatorRow } from './service.js';
import type { EvaluatorRow } from './record.js';

/**
 * `POST /evaluators/{id}/dry-run` (docs/evaluators.md, "Dry run"): the scorer run now on one trace or
 * span, with the rendered prompt, storing nothing (no execution, no score, no judge trace). The trace
 * is read through the traces service, handed in by the route, so this resource imports none of it.
 */

type SpanForScoring = ScoredTarget & { span_id: string; kind: string };

/** What a dry run reads of a trace (a structural slice of GET /traces/{trace_id}'s answer). */
export type TraceForScoring = {
  trace_id: string;
  name: string;
  input: string | null;
  output: string | null;
  metadata_map: Record<string, string>;
  duration_ms: number | null;
  total_cost: number;
  total_input_tokens: number;
  total_output_tokens: number;
  spans: SpanForScoring[];
};

export type TraceReader = (projectId: string, traceId: string) => Promise<TraceForScoring>;

export const DRY_RUN_ERRORS = {
  noModel: 'the evaluator names no model and its LLM connection has no default_model',
  keyUnreadable: 'the stored API key can not be opened with the configured secrets keys',
  connectionGone: 'the LLM connection of this evaluator no longer exists',
} as const;

/** A trace as a scorer sees it: its own name, input and output, the first error and model among its spans. */
export function traceTarget(trace: TraceForScoring): ScoredTarget {
  return {
    name: trace.name,
    input: trace.input,
    output: trace.output,
    error_message: trace.spans.find((s) => s.error_message !== null)?.error_message ?? null,
    model_name: trace.spans.find((s) => s.model_name !== null)?.model_name ?? null,
    metadata: trace.metadata_map,
    duration_ms: trace.duration_ms,
    cost: trace.total_cost,
    total_tokens: trace.total_input_tokens + trace.total_output_tokens,
  };
}

function spanMatches(row: EvaluatorRow, span: SpanForScoring): boolean {
  const f = row.span_filter;
  return (!f?.kind || f.kind.includes(span.kind)) && (!f?.name || f.name.includes(span.name));
}

function pickSpan(row: EvaluatorRow, trace: TraceForScoring, spanId: string | undefined): SpanForScoring {
  if (spanId !== undefined) {
    const span = trace.spans.find((s) => s.span_id === spanId);
    if (!span) throw new NotFoundError('span not found in this trace');
    return span;
  }
  const span = trace.spans.find((s) => spanMatches(row, s));
  if (!span) throw new NotFoundError("no span of this trace matches the evaluator's span_filter");
  return span;
}

export type DryRunResult = {
  evaluator_id: string;
  version: number;
  trace_id: string;
  span_id: string | null;
  score_id: string;
  score_name: string;
  rendered_prompt: string | null;
  missing_variables: string[];
  truncated: boolean;
  judge_model: string | null;
  input_tokens: number;
  output_tokens: number;
  score: ScoreValue | null;
  error: string | null;
};

export async function dryRun(
  ctx: AppContext,
  readTrace: TraceReader,
  projectId: string,
  evaluatorId: string,
  body: { trace_id: string; span_id?: string },
): Promise<DryRunResult> {
  const row = await evaluatorRow(ctx.pg.pool, projectId, evaluatorId);
  if (row.target === 'trace' && body.span_id !== undefined)
    throw new RequestValidationError([
      { loc: ['body', 'span_id'], msg: 'span_id is for evaluators whose target is span', type: 'value_error' },
    ]);
  const trace = await readTrace(projectId, body.trace_id);
  const span = row.target === 'span' ? pickSpan(row, trace, body.span_id) : null;
  const target: ScoredTarget = span ?? traceTarget(trace);
  const base = {
    evaluator_id: row.id,
    version: row.version,
    trace_id: trace.trace_id,
    span_id: span?.span_id ?? null,
    score_id: evaluatorScoreId(row.id, trace.trace_id, span?.span_id ?? null),
    score_name: row.score_name,
  };
  const scorer = row.scorer;
  if (scorer.type === 'check') {
    return {
      ...base,
      rendered_prompt: null,
      missing_variables: [],
      truncated: false,
      judge_model: null,
      input_tokens: 0,
      output_tokens: 0,
      score: runCheck(scorer, target),
      error: null,
    };
  }
  const rendered = renderPrompt(scorer.prompt, scorer.variables, target);
  const answer = {
    ...base,
    rendered_prompt: rendered.prompt,
    missing_variables: rendered.missing,
    truncated: rendered.truncated,
    judge_model: null as string | null,
    input_tokens: 0,
    output_tokens: 0,
  };
  let connection: Awaited<ReturnType<typeof openConnection>>;
  try {
    connection = await openConnection(ctx, projectId, scorer.connection_id);
  } catch (error) {
    if (error instanceof SecretBoxError) return { ...answer, score: null, error: DRY_RUN_ERRORS.keyUnreadable };
    if (error instanceof NotFoundError) return { ...answer, score: null, error: DRY_RUN_ERRORS.connectionGone };
    throw error;
  }
  const model = scorer.model ?? connection.defaultModel;
  if (!model) return { ...answer, score: null, error: DRY_RUN_ERRORS.noModel };
  const called = await callJudge(
    connection,
    {
      model,
      prompt: rendered.prompt,
      scoreSchema: scoreSchemaOf(scorer.output),
      ...(scorer.temperature !== undefined ? { temperature: scorer.temperature } : {}),
    },
    ctx.config.llmConnections,
  );
  if (!called.ok) return { ...answer, judge_model: model, score: null, error: called.error };
  const judged = readJudgement(called.answer, scorer.output);
  return {
    ...answer,
    judge_model: model,
    input_tokens: called.inputTokens,
    output_tokens: called.outputTokens,
    score: judged.ok ? judged.score : null,
    error: judged.ok ? null : judged.error,
  };
}
