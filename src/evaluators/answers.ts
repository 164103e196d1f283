import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';
import { PredicateSchema } from '../query/predicates.js';
import { ScorerDocumented, TARGETS } from './schema.js';
import { EXECUTION_STATUSES } from './record.js';

/** The answers of the evaluator routes (docs/evaluators.md). */

const Stats = z.object({
  executions: Count,
  completed: Count,
  errors: Count,
  skipped: Count,
  input_tokens: Count,
  output_tokens: Count,
  cost: z.number().describe('USD: the judge calls priced with the model price table'),
});

export const EvaluatorAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    target: z.enum(TARGETS),
    span_filter: z.object({ kind: z.array(z.string()).optional(), name: z.array(z.string()).optional() }).nullable(),
    filters: z.array(PredicateSchema),
    sampling_rate: z.number(),
    delay_seconds: Count,
    scorer: ScorerDocumented,
    score_name: z.string(),
    score_config_id: z.string().nullable(),
    enabled: z.boolean(),
    paused_reason: z
      .string()
      .nullable()
      .describe('why the evaluator paused itself (a provider answer no retry can fix); null otherwise'),
    version: z
      .number()
      .int()
      .min(1)
      .describe('1, 2, ...: a change of the scorer (prompt, variables, output) makes a new one'),
    stats: z.object({ last_24h: Stats, all_time: Stats }).describe("the evaluator's executions"),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'Evaluator' });

export const EvaluatorListAnswer = page(EvaluatorAnswer).meta({ id: 'EvaluatorList' });

export const EvaluatorExecutionAnswer = z
  .object({
    execution_id: z.string(),
    trace_id: z.string(),
    span_id: z.string().nullable(),
    status: z.enum(EXECUTION_STATUSES),
    error: z.string().nullable(),
    score_id: z.string().nullable(),
    attempts: Count,
    judge_model: z.string().nullable(),
    judge_trace_id: z
      .string()
      .nullable()
      .describe("the judge's own call, a trace in environment `sightline-evaluator`; null for a check or no call"),
    evaluator_version: z.number().int().min(1).describe('the evaluator version that ran (and stamped the score)'),
    backfill_id: z.string().nullable().describe('the backfill that (re-)ran this execution, if any'),
    input_tokens: Count,
    output_tokens: Count,
    cost: z.number(),
    created_at: DateTime,
    finished_at: DateTime.nullable(),
  })
  .meta({ id: 'EvaluatorExecution' });

export const EvaluatorExecutionListAnswer = page(EvaluatorExecutionAnswer).meta({ id: 'EvaluatorExecutionList' });

const ScoreAnswer = z.object({
  value: z.number(),
  string_value: z.string().nullable().describe('categorical: the label; boolean: "true"/"false"; numeric: null'),
  comment: z.string().nullable(),
});

export const DryRunAnswer = z
  .object({
    evaluator_id: z.string(),
    version: z.number().int().min(1),
    trace_id: z.string(),
    span_id: z.string().nullable(),
    score_id: z.string().describe('the id the score would have: derived from evaluator and target'),
    score_name: z.string(),
    rendered_prompt: z.string().nullable().describe('the prompt as the judge would get it; null for a check'),
    missing_variables: z.array(z.string()).describe('variables whose path found nothing (rendered as empty text)'),
    truncated: z.boolean().describe('whether a value or the prompt was cut to its bound'),
    judge_model: z.string().nullable(),
    input_tokens: Count,
    output_tokens: Count,
    score: ScoreAnswer.nullable().describe('what the scorer gives now; null when it failed'),
    error: z.string().nullable().describe('why there is no score: a fixed sentence'),
  })
  .meta({ id: 'EvaluatorDryRun' });

export const BackfillAnswer = z
  .object({
    backfill_id: z.string(),
    evaluator_id: z.string(),
    status: z.enum(['pending', 'running', 'completed', 'cancelled']),
    start_time: DateTime,
    end_time: DateTime,
    total: Count.describe('executions the backfill enrolled (0 while pending)'),
    done: Count.describe('of those, the ones finished (completed, error or skipped)'),
    truncated: z.boolean().describe('whether the window held more matching traces than a backfill takes'),
    created_at: DateTime,
    finished_at: DateTime.nullable(),
  })
  .meta({ id: 'EvaluatorBackfill' });
