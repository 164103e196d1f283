import type { AppContext } from '../context.js';
import type { Queryable } from '../stores/postgres.js';
import { NotFoundError } from '../errors.js';
import { SecretBoxError } from '../secrets/secret-box.js';
import { openSealed, type SealedConnection } from '../llm-connections/service.js';
import { callJudge, type CallFailure, type JudgeAnswer, type OpenConnection } from '../llm-connections/providers.js';
import { writeScores } from '../scores/service.js';
import { configsFor } from '../scores/configs.js';
import { getTrace } from '../traces/service.js';
import { runCheck, type ScoreValue } from './checks.js';
import { readJudgement, scoreSchemaOf } from './judgement.js';
import { evaluatorScoreId } from './identity.js';
import { renderPrompt, type ScoredTarget } from './template.js';
import { DRY_RUN_ERRORS, traceTarget } from './dry-run.js';
import { EVALUATOR_COLUMNS, type EvaluatorRow } from './record.js';
import { releaseSlot, takeSlot } from './caps.js';
import { batched } from './batches.js';
import { writeJudgeTrace } from './judge-trace.js';
import { raiseSignal } from './health.js';
import { judgeCost } from './cost.js';

/**
 * One execution (docs/evaluators.md, "How traces are scored"): the worker claims a pending row
 * (a second job for it finds nothing to do), reads the target, runs the scorer, and stores the score
 * through `writeScores` (source `evaluator`, the id derived from evaluator and target, the reasoning
 * as its comment, the evaluator's version stamped). A judge call is bounded by the project's caps
 * (caps.ts) and retried on 429 (its Retry-After honoured, up to MAX_RETRY_AFTER_MS), 5xx and
 * time-outs, up to MAX_ATTEMPTS calls; every error is a fixed sentence, never a provider's body. A
 * provider answer no retry can fix (401, 403, unknown model, billing) pauses the evaluator.
 */

export const MAX_ATTEMPTS = 4;
export const MAX_RETRY_AFTER_MS = 60_000;
/** A `running` row older than this was left by a worker that stopped: it may be claimed again. */
export const STALE_RUNNING_MS = 15 * 60_000;

export const EXECUTION_ERRORS = {
  dailyCap: 'skipped: the project reached EVALUATOR_DAILY_CALLS_PER_PROJECT judge calls today (UTC)',
  retriesExhausted: 'the judge call failed on every attempt (rate limited, provider errors or time-outs)',
  traceGone: 'the trace was not found (deleted or past its retention)',
  spanGone: 'the span was not found in its trace',
  scoreRefused: "the score does not fit the score config of the evaluator's score name",
  ...DRY_RUN_ERRORS,
} as const;

export const PAUSED_SENTENCE = 'paused: the LLM provider refused the judge call in a way no retry can fix';

type Claimed = EvaluatorRow & {
  execution_id: string;
  trace_id: string;
  exec_span_id: string | null;
  attempts: number;
  trace_ttl_days: number;
  /** The judge's connection, read with the claim (null: a check, or the connection is gone). */
  connection: SealedConnection | null;
};

type Outcome = {
  status: 'completed' | 'error' | 'skipped';
  error: string | null;
  score_id?: string | null;
  judge_model?: string | null;
  input_tokens?: number;
  output_tokens?: number;
  cost?: number;
  judge_trace_id?: string | null;
};

export type ExecutionOptions = { sleep?: (ms: number) => Promise<void> };

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Claims pending rows (batches.ts); answers each id's row, or null where it was not claimable. */
const claimRows = batched(async (db: Queryable, executionIds: string[]): Promise<(Claimed | null)[]> => {
  const { rows } = await db.query<Claimed>(
    `WITH claimed AS (
       UPDATE evaluator_executions x SET status = 'running', started_at = now(), finished_at = NULL, error = NULL,
              evaluator_version = (SELECT version FROM evaluators WHERE id = x.evaluator_id)
        WHERE x.execution_id = ANY($1::uuid[])
          AND (x.status = 'pending' OR (x.status = 'running' AND x.started_at < now() - make_interval(secs => $2::double precision / 1000)))
          AND EXISTS (SELECT 1 FROM evaluators e WHERE e.id = x.evaluator_id AND e.enabled)
        RETURNING x.execution_id, x.evaluator_id, x.trace_id, x.span_id, x.attempts)
     SELECT ${EVALUATOR_COLUMNS.split(', ')
       .map((c) => `e.${c}`)
       .join(', ')}, c.execution_id, c.trace_id, c.span_id AS exec_span_id, c.attempts, p.trace_ttl_days,
            CASE WHEN lc.id IS NULL THEN NULL
                 ELSE json_build_object('provider', lc.provider, 'base_url', lc.base_url, 'api_key_sealed', lc.api_key_sealed,
                        'extra_headers_sealed', lc.extra_headers_sealed, 'default_model', lc.default_model) END AS connection
       FROM claimed c JOIN evaluators e ON e.id = c.evaluator_id JOIN projects p ON p.id = e.project_id
       LEFT JOIN llm_connections lc ON lc.id = e.connection_id AND lc.project_id = e.project_id`,
    [[...new Set(executionIds)], STALE_RUNNING_MS],
  );
  const byId = new Map(rows.map((r) => [r.execution_id, r]));
  // An id twice in one batch (two jobs of one execution): only the first runs it.
  return executionIds.map((id) => {
    const row = byId.get(id) ?? null;
    byId.delete(id);
    return row;
  });
});

/** Writes end states (batches.ts), each only over a row still `running`. */
const finishRows = batched(
  async (db: Queryable, done: { executionId: string; outcome: Outcome }[]): Promise<void[]> => {
    await db.query(
      `UPDATE evaluator_executions x SET status = f.status, error = f.error, score_id = COALESCE(f.score_id, x.score_id),
            judge_model = COALESCE(f.judge_model, x.judge_model), input_tokens = f.input_tokens,
            output_tokens = f.output_tokens, cost = f.cost,
            judge_trace_id = COALESCE(f.judge_trace_id, x.judge_trace_id), finished_at = now()
       FROM jsonb_to_recordset($1::jsonb) AS f(execution_id uuid, status text, error text, score_id text,
            judge_model text, input_tokens bigint, output_tokens bigint, cost double precision, judge_trace_id text)
      WHERE x.execution_id = f.execution_id AND x.status = 'running'`,
      [
        JSON.stringify(
          done.map(({ executionId, outcome: o }) => ({
            execution_id: executionId,
            status: o.status,
            error: o.error,
            score_id: o.score_id ?? null,
            judge_model: o.judge_model ?? null,
            input_tokens: o.input_tokens ?? 0,
            output_tokens: o.output_tokens ?? 0,
            cost: o.cost ?? 0,
            judge_trace_id: o.judge_trace_id ?? null,
          })),
        ),
      ],
    );
    return done.map(() => undefined);
  },
);

/** The scored target: the trace as a whole, or one span of it. */
async function readTarget(ctx: AppContext, row: Claimed): Promise<ScoredTarget | string> {
  let trace;
  try {
    trace = await getTrace(ctx, row.project_id, row.trace_id);
  } catch (error) {
    if (error instanceof NotFoundError) return EXECUTION_ERRORS.traceGone;
    throw error;
  }
  if (row.exec_span_id === null) return traceTarget(trace);
  return trace.spans.find((s) => s.span_id === row.exec_span_id) ?? EXECUTION_ERRORS.spanGone;
}

/** Stores the score; answers its id, or null when the score store refused it (a config mismatch). */
async function storeScore(ctx: AppContext, row: Claimed, dataType: string, score: ScoreValue): Promise<string | null> {
  const scoreId = evaluatorScoreId(row.id, row.trace_id, row.exec_span_id);
  let value: number | undefined = score.value;
  if (dataType === 'categorical') {
    // A score config's categories carry values of their own: the label decides then.
    const configs = await configsFor(ctx.pg.pool, row.project_id, row.score_config_id ? [row.score_config_id] : [], [
      row.score_name,
    ]);
    if (configs.byId.size || configs.byName.size) value = undefined;
  }
  const raw = {
    score_id: scoreId,
    trace_id: row.trace_id,
    ...(row.exec_span_id !== null ? { span_id: row.exec_span_id } : {}),
    name: row.score_name,
    data_type: dataType,
    ...(value !== undefined ? { value } : {}),
    ...(score.string_value !== null && dataType !== 'boolean' ? { string_value: score.string_value } : {}),
    ...(score.comment ? { comment: score.comment } : {}),
    ...(row.score_config_id ? { config_id: row.score_config_id } : {}),
  };
  return (await writeExecutionScores(ctx, { row, raw })) ? scoreId : null;
}

/**
 * Writes the scores of executions finishing together (batches.ts): one `writeScores` per project,
 * each score with its own execution as origin; answers whether each was accepted.
 */
const writeExecutionScores = batched(
  async (ctx: AppContext, items: { row: Claimed; raw: Record<string, unknown> }[]): Promise<boolean[]> => {
    const accepted = items.map(() => false);
    const byProject = new Map<string, number[]>();
    items.forEach(({ row }, i) => byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), i]));
    for (const indexes of byProject.values()) {
      const { project_id, trace_ttl_days } = items[indexes[0]!]!.row;
      const written = await writeScores(
        ctx,
        { projectId: project_id, traceTtlDays: trace_ttl_days },
        indexes.map((i) => items[i]!.raw),
        indexes.map((i) => {
          const { row } = items[i]!;
          return {
            source: 'evaluator',
            evaluatorId: row.id,
            executionId: row.execution_id,
            evaluatorVersion: row.version,
          };
        }),
      );
      const refused = new Set(written.rejected.map((r) => r.index));
      indexes.forEach((i, k) => (accepted[i] = !refused.has(k)));
    }
    return accepted;
  },
);

/** Pauses the evaluator (a provider answer no retry can fix) and tells the project by a signal. */
async function pause(ctx: AppContext, row: Claimed, reason: string): Promise<void> {
  const paused = await ctx.pg.pool.query(
    `UPDATE evaluators SET enabled = false, paused_reason = $2, updated_at = now() WHERE id = $1 AND enabled`,
    [row.id, `${PAUSED_SENTENCE} (${reason})`],
  );
  if ((paused.rowCount ?? 0) === 0) return;
  await stopPendingOf(ctx, row.id, `${PAUSED_SENTENCE} (${reason})`);
  await raiseSignal(ctx.pg.pool, row.project_id, row, 'paused', `Evaluator "${row.name}" paused: ${reason}`);
}

async function stopPendingOf(ctx: AppContext, evaluatorId: string, sentence: string): Promise<void> {
  await ctx.pg.pool.query(
    `UPDATE evaluator_executions SET status = 'skipped', error = $2, finished_at = now()
      WHERE evaluator_id = $1 AND status = 'pending'`,
    [evaluatorId, sentence],
  );
}

async function bumpAttempts(ctx: AppContext, executionId: string): Promise<void> {
  await ctx.pg.pool.query('UPDATE evaluator_executions SET attempts = attempts + 1 WHERE execution_id = $1', [
    executionId,
  ]);
}

async function judge(ctx: AppContext, row: Claimed, target: ScoredTarget, options: ExecutionOptions): Promise<Outcome> {
  const scorer = row.scorer;
  if (scorer.type !== 'llm_judge') throw new Error('not a judge');
  const sleep = options.sleep ?? defaultSleep;
  let connection: OpenConnection & { defaultModel: string | null };
  try {
    if (row.connection === null) return { status: 'error', error: EXECUTION_ERRORS.connectionGone };
    connection = openSealed(ctx, row.connection);
  } catch (error) {
    if (error instanceof SecretBoxError) return { status: 'error', error: EXECUTION_ERRORS.keyUnreadable };
    throw error;
  }
  const model = scorer.model ?? connection.defaultModel;
  if (!model) return { status: 'error', error: EXECUTION_ERRORS.noModel };
  const rendered = renderPrompt(scorer.prompt, scorer.variables, target);
  const caps = ctx.config.evaluators;
  const timeoutMs = ctx.config.llmConnections.timeoutMs;
  let result: JudgeAnswer | CallFailure | null = null;
  const started = Date.now();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const slot = await takeSlot(ctx.pg.pool, {
      projectId: row.project_id,
      executionId: row.execution_id,
      slots: caps.concurrencyPerProject,
      leaseMs: timeoutMs + 30_000,
      dailyCap: caps.dailyCallsPerProject,
    });
    if (slot === 'capped') return { status: 'skipped', error: EXECUTION_ERRORS.dailyCap, judge_model: model };
    try {
      result = await callJudge(
        connection,
        {
          model,
          prompt: rendered.prompt,
          scoreSchema: scoreSchemaOf(scorer.output),
          ...(scorer.temperature !== undefined ? { temperature: scorer.temperature } : {}),
        },
        ctx.config.llmConnections,
      );
    } finally {
      await releaseSlot(ctx.pg.pool, row.project_id, slot, row.execution_id);
    }
    if (result.ok || !result.retryable || attempt === MAX_ATTEMPTS) break;
    const backoff = caps.retryBackoffMs * 2 ** (attempt - 1);
    await sleep(result.retryAfterS !== undefined ? Math.min(result.retryAfterS * 1000, MAX_RETRY_AFTER_MS) : backoff);
  }
  const failure = result as CallFailure | JudgeAnswer;
  if (!failure.ok) {
    if (failure.pauses) await pause(ctx, row, failure.error);
    return {
      status: 'error',
      error: failure.retryable ? `${EXECUTION_ERRORS.retriesExhausted}; last: ${failure.error}` : failure.error,
      judge_model: model,
    };
  }
  const answer = failure;
  const cost = await judgeCost(ctx, row.project_id, model, answer.inputTokens, answer.outputTokens);
  const judged = readJudgement(answer.answer, scorer.output);
  // The judge trace and the score go out side by side: neither needs the other.
  const [judgeTraceId, scoreId] = await Promise.all([
    writeJudgeTrace(ctx, row, {
      model,
      prompt: rendered.prompt,
      answer: answer.answer,
      inputTokens: answer.inputTokens,
      outputTokens: answer.outputTokens,
      startedMs: Date.now() - answer.latencyMs,
      endedMs: Date.now(),
      firstAttemptMs: started,
    }),
    judged.ok ? storeScore(ctx, row, scorer.output.data_type, judged.score) : null,
  ]);
  const spent = {
    judge_model: model,
    input_tokens: answer.inputTokens,
    output_tokens: answer.outputTokens,
    cost,
    judge_trace_id: judgeTraceId,
  };
  if (!judged.ok) return { status: 'error', error: judged.error, ...spent };
  if (scoreId === null) return { status: 'error', error: EXECUTION_ERRORS.scoreRefused, ...spent };
  return { status: 'completed', error: null, score_id: scoreId, ...spent };
}

/** Runs one execution to its end state; a row not pending (or gone, or its evaluator disabled) is left alone. */
export async function runExecution(
  ctx: AppContext,
  executionId: string,
  options: ExecutionOptions = {},
): Promise<void> {
  const row = await claimRows(ctx.pg.pool, executionId);
  if (!row) return;
  let outcome: Outcome;
  try {
    const target = await readTarget(ctx, row);
    if (typeof target === 'string') outcome = { status: 'error', error: target };
    else if (row.scorer.type === 'check') {
      await bumpAttempts(ctx, row.execution_id);
      const scoreId = await storeScore(ctx, row, 'boolean', runCheck(row.scorer, target));
      outcome = scoreId
        ? { status: 'completed', error: null, score_id: scoreId }
        : { status: 'error', error: EXECUTION_ERRORS.scoreRefused };
    } else outcome = await judge(ctx, row, target, options);
  } catch (error) {
    // A store failing under us: back to pending, so the next sweep runs it again.
    await ctx.pg.pool.query(
      `UPDATE evaluator_executions SET status = 'pending', started_at = NULL WHERE execution_id = $1 AND status = 'running'`,
      [executionId],
    );
    throw error;
  }
  await finishRows(ctx.pg.pool, { executionId, outcome });
}
