import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';

/** A run's statuses (docs/evaluations.md); the summary (summary.ts) computes which one holds. */
export const RUN_STATUSES = [
  'running',
  'completed',
  'completed_with_errors',
  'failed',
  'incomplete',
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The answers of the evaluation routes (docs/datasets.md). */

/** A score or metric entry of a run summary (docs/datasets.md, "Run summary"). */
export const AggregateEntryAnswer = z.object({
  name: z.string(),
  direction: z.string(),
  value_type: z.string(),
  observed_count: Count,
  unit: z.string().optional(),
  value: z.number().optional(),
});

/** docs/datasets.md "Run summary": no per-case rows. */
export const RunSummaryAnswer = z
  .object({
    evaluation_run_id: z.string(),
    evaluation_id: z.string(),
    evaluation_name: z.string(),
    evaluation_key: z.string().optional(),
    dataset_id: z.string(),
    dataset_version_id: z.string(),
    candidate_version: z.string(),
    environment: z.string(),
    run_number: Count,
    run_path: z.string(),
    run_url: z.string(),
    started_at: DateTime,
    completed_at: DateTime.optional(),
    status: z.enum(RUN_STATUSES),
    result_count: Count,
    scored_count: Count,
    not_scored_count: Count,
    passed_count: Count,
    failed_count: Count,
    errored_count: Count,
    scorer_error_count: Count,
    task_error_count: Count,
    scores: z.array(AggregateEntryAnswer),
    metrics: z.array(AggregateEntryAnswer),
  })
  .meta({ id: 'RunSummary' });

const EvaluationRecordAnswer = z.object({
  id: z.string(),
  evaluation_id: z.string(),
  name: z.string(),
  evaluation_key: z.string().nullable(),
  run_count: Count,
  created_at: DateTime,
  updated_at: DateTime,
});

export const EvaluationListAnswer = page(EvaluationRecordAnswer).meta({ id: 'EvaluationList' });

/** An evaluation with a page of its runs, newest first. */
export const EvaluationDetailAnswer = EvaluationRecordAnswer.extend({ runs: z.array(RunSummaryAnswer) }).meta({
  id: 'EvaluationDetail',
});

/** `POST /evaluation-runs/{run_id}/results`: partial success, like span ingest. */
export const ResultsWrittenAnswer = z
  .object({
    accepted: Count,
    rejected: z.array(z.object({ index: Count, test_case_id: z.string().nullable(), errors: z.array(z.string()) })),
  })
  .meta({ id: 'ResultsWritten' });

export const RunSideAnswer = z.object({
  evaluation_run_id: z.string(),
  run_number: Count,
  candidate_version: z.string(),
  environment: z.string(),
  status: z.enum(RUN_STATUSES),
});
export const MeanDeltaAnswer = z.object({
  name: z.string(),
  direction: z.string(),
  unit: z.string().optional(),
  run_value: z.number().nullable(),
  other_value: z.number().nullable(),
  delta: z.number().nullable(),
  run_observed_count: Count,
  other_observed_count: Count,
});
export const CaseChangeAnswer = z.object({
  test_case_id: z.string(),
  run_passed: z.boolean().nullable(),
  other_passed: z.boolean().nullable(),
  scores: z.array(z.object({ name: z.string(), run_value: z.number(), other_value: z.number(), delta: z.number() })),
});

/** `GET /evaluation-runs/{run_id}/compare`: means and deltas, then the changed test cases, paged. */
export const RunComparisonAnswer = z
  .object({
    run: RunSideAnswer,
    other: RunSideAnswer,
    dataset_version_id: z.string(),
    threshold: z.number(),
    scores: z.array(MeanDeltaAnswer),
    metrics: z.array(MeanDeltaAnswer),
    regressions: z.array(CaseChangeAnswer),
    improvements: z.array(CaseChangeAnswer),
    next_cursor: z.string().nullable(),
  })
  .meta({ id: 'RunComparison' });
