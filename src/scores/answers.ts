import { z } from 'zod';
import { Count, DateTime, page } from '../answer-schemas.js';

/** The answers of the score and score-config routes (quality.md §1, docs/scores.md). */

export const SCORE_DATA_TYPES = ['numeric', 'categorical', 'boolean'] as const;
export const SCORE_SOURCES = ['api', 'evaluator', 'annotation'] as const;

export const ScoreAnswer = z
  .object({
    score_id: z.string(),
    project_id: z.string(),
    trace_id: z.string().nullable().describe('null for a session score'),
    span_id: z.string().nullable().describe('the span of the trace the score is about; null for the trace itself'),
    session_id: z.string().nullable(),
    name: z.string(),
    data_type: z.enum(SCORE_DATA_TYPES),
    value: z.number().describe("numeric: the value; boolean: 0 or 1; categorical: the category's value (0 when none)"),
    string_value: z.string().nullable().describe('categorical: the label; boolean: "true" or "false"; numeric: null'),
    comment: z.string().nullable().describe("free text; an LLM judge's reasoning"),
    source: z.enum(SCORE_SOURCES),
    evaluator_id: z.string().nullable(),
    execution_id: z.string().nullable(),
    evaluator_version: z.number().int().nullable().describe('the version of the evaluator that wrote it'),
    author_user_id: z.string().nullable(),
    config_id: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    environment: z.string().nullable(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'Score' });

export const ScoreListAnswer = page(ScoreAnswer).meta({ id: 'ScoreList' });

/** `POST /scores`: partial success, like ingest. */
export const ScoreWriteAnswer = z
  .object({
    accepted: Count,
    rejected: z.array(z.object({ index: Count, score_id: z.string().nullable(), errors: z.array(z.string()) })),
  })
  .meta({ id: 'ScoreWriteResult' });

/** One name's scores of a trace, on each item of `GET /traces`. */
export const ScoreSummaryAnswer = z
  .object({
    name: z.string(),
    data_type: z.enum(SCORE_DATA_TYPES),
    avg: z.number().nullable().describe('numeric and boolean: the mean value; categorical: null'),
    values: z.record(z.string(), Count).describe('categorical: how many scores have each label; else {}'),
    count: Count,
  })
  .meta({ id: 'ScoreSummary' });

export const ScoreCategory = z.object({ label: z.string(), value: z.number() });

export const ScoreConfigAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    data_type: z.enum(SCORE_DATA_TYPES),
    min_value: z.number().nullable(),
    max_value: z.number().nullable(),
    categories: z.array(ScoreCategory).nullable(),
    description: z.string().nullable(),
    archived: z.boolean(),
    created_at: DateTime,
    updated_at: DateTime,
  })
  .meta({ id: 'ScoreConfig' });

export const ScoreConfigListAnswer = page(ScoreConfigAnswer).meta({ id: 'ScoreConfigList' });
