import type { Predicate } from '../query/predicates.js';
import type { Scorer, SpanFilter } from './schema.js';

export const EXECUTION_STATUSES = ['pending', 'running', 'completed', 'error', 'skipped'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** An evaluator row as stored (postgres/0010_evaluators.sql) and as answered (answers.ts). */

export type EvaluatorRow = {
  id: string;
  project_id: string;
  name: string;
  target: 'trace' | 'span';
  span_filter: SpanFilter | null;
  filters: Predicate[];
  sampling_rate: number;
  delay_seconds: number;
  scorer: Scorer;
  connection_id: string | null;
  score_name: string;
  score_config_id: string | null;
  enabled: boolean;
  paused_reason: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
};

export const EVALUATOR_COLUMNS =
  'id, project_id, name, target, span_filter, filters, sampling_rate, delay_seconds, scorer, connection_id, score_name, score_config_id, enabled, paused_reason, version, created_at, updated_at';

export type Stats = {
  executions: number;
  completed: number;
  errors: number;
  skipped: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
};

const ZERO: Stats = { executions: 0, completed: 0, errors: 0, skipped: 0, input_tokens: 0, output_tokens: 0, cost: 0 };

/** The two windows of one grouped row of the stats read (service.ts); counts arrive as bigint text. */
export function statsOf(row: Record<string, string | number | null>): { last_24h: Stats; all_time: Stats } {
  const pick = (suffix: string): Stats => {
    const n = (k: string) => Number(row[`${k}${suffix}`] ?? 0);
    return {
      executions: n('executions'),
      completed: n('completed'),
      errors: n('errors'),
      skipped: n('skipped'),
      input_tokens: n('input_tokens'),
      output_tokens: n('output_tokens'),
      cost: n('cost'),
    };
  };
  return { last_24h: pick('_24h'), all_time: pick('') };
}

export type EvaluatorRecord = Omit<EvaluatorRow, 'connection_id' | 'created_at' | 'updated_at'> & {
  stats: { last_24h: Stats; all_time: Stats };
  created_at: string;
  updated_at: string;
};

export function evaluatorRecord(row: EvaluatorRow, stats?: { last_24h: Stats; all_time: Stats }): EvaluatorRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    target: row.target,
    span_filter: row.span_filter,
    filters: row.filters,
    sampling_rate: row.sampling_rate,
    delay_seconds: row.delay_seconds,
    scorer: row.scorer,
    score_name: row.score_name,
    score_config_id: row.score_config_id,
    enabled: row.enabled,
    paused_reason: row.paused_reason,
    version: row.version,
    stats: stats ?? { last_24h: { ...ZERO }, all_time: { ...ZERO } },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
