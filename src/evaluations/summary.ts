import type { Config } from '../config.js';
import { isUuid } from '../ids.js';
import { NotFoundError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { AggregateEntryAnswer, RunStatus, RunSummaryAnswer } from './answers.js';

/**
 * The evaluation run summary (docs/datasets.md, "Run summary"): the run's own fields, its
 * counts and one entry per score and metric name. It holds no per-case rows: the counts live on the
 * run row and the per-name sums in evaluation_run_aggregates, both kept up to date by every result
 * write (result-writer.ts), so a summary is two indexed reads whatever the number of results.
 */

export const RUN_NOT_FOUND = 'evaluation run not found';

export type RunRow = {
  id: string;
  project_id: string;
  evaluation_id: string;
  evaluation_name: string;
  evaluation_key: string | null;
  dataset_id: string;
  dataset_version_id: string;
  candidate_version: string;
  environment: string;
  run_number: number;
  status: RunStatus;
  started_at: Date;
  completed_at: Date | null;
  result_count: string;
  scored_count: string;
  passed_count: string;
  failed_count: string;
  errored_count: string;
  scorer_error_count: string;
  task_error_count: string;
};

/** The run row with its evaluation's name and key and its version's dataset. Alias `r`. */
export const RUN_SELECT = `SELECT r.id, r.project_id, r.evaluation_id, e.name AS evaluation_name, e.key AS evaluation_key, v.dataset_id,
       r.dataset_version_id, r.candidate_version, r.environment, r.run_number, r.status, r.started_at, r.completed_at,
       r.result_count, r.scored_count, r.passed_count, r.failed_count, r.errored_count, r.scorer_error_count, r.task_error_count
  FROM evaluation_runs r JOIN evaluations e ON e.id = r.evaluation_id JOIN dataset_versions v ON v.id = r.dataset_version_id`;

/** Inferred from the answer schemas (answers.ts), times as ISO strings. */
export type AggregateEntry = AnswerOf<typeof AggregateEntryAnswer>;
export type RunSummary = AnswerOf<typeof RunSummaryAnswer>;

type AggregateRow = {
  run_id: string;
  kind: 'score' | 'metric';
  name: string;
  observed_count: string;
  boolean_count: string;
  mean: number | null;
  direction: string | null;
  unit: string | null;
};

/** The run of the project, or 404 (another project's run is not confirmed to exist). */
export async function findRun(db: Queryable, projectId: string, runId: string, lock = false): Promise<RunRow> {
  if (!isUuid(runId)) throw new NotFoundError(RUN_NOT_FOUND);
  const { rows } = await db.query<RunRow>(
    `${RUN_SELECT} WHERE r.id = $1 AND r.project_id = $2${lock ? ' FOR UPDATE OF r' : ''}`,
    [runId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(RUN_NOT_FOUND);
  return rows[0];
}

/** Per-name entries of some runs (one read for all of them), by run id. */
export async function aggregatesOf(
  db: Queryable,
  runIds: string[],
): Promise<Map<string, { scores: AggregateEntry[]; metrics: AggregateEntry[] }>> {
  const out = new Map(runIds.map((id) => [id, { scores: [] as AggregateEntry[], metrics: [] as AggregateEntry[] }]));
  if (runIds.length === 0) return out;
  // The mean is the exact numeric sum divided once, then rounded to a double.
  const { rows } = await db.query<AggregateRow>(
    `SELECT run_id, kind, name, observed_count, boolean_count, (value_sum / NULLIF(observed_count, 0))::float8 AS mean, direction, unit
       FROM evaluation_run_aggregates WHERE run_id = ANY($1::uuid[]) AND occurrence_count > 0 ORDER BY run_id, kind, name`,
    [runIds],
  );
  for (const row of rows) {
    const observed = Number(row.observed_count);
    const entry: AggregateEntry = {
      name: row.name,
      direction: row.direction ?? 'higher_is_better',
      value_type: observed > 0 && Number(row.boolean_count) === observed ? 'boolean' : 'numeric',
      observed_count: observed,
    };
    if (row.unit !== null) entry.unit = row.unit;
    if (row.mean !== null) entry.value = row.mean;
    const target = out.get(row.run_id)!;
    (row.kind === 'score' ? target.scores : target.metrics).push(entry);
  }
  return out;
}

/** The run's page in the web app (docs/datasets.md: `run_path`, `run_url`). */
export function runPath(row: Pick<RunRow, 'project_id' | 'evaluation_id' | 'id'>): string {
  return `/projects/${row.project_id}/evaluations/${row.evaluation_id}/runs/${row.id}`;
}

export function summaryOf(
  config: Config,
  row: RunRow,
  entries: { scores: AggregateEntry[]; metrics: AggregateEntry[] },
): RunSummary {
  const path = runPath(row);
  const resultCount = Number(row.result_count);
  const scored = Number(row.scored_count);
  const summary: RunSummary = {
    evaluation_run_id: row.id,
    evaluation_id: row.evaluation_id,
    evaluation_name: row.evaluation_name,
    dataset_id: row.dataset_id,
    dataset_version_id: row.dataset_version_id,
    candidate_version: row.candidate_version,
    environment: row.environment,
    run_number: row.run_number,
    run_path: path,
    run_url: `${config.webUrl}${path}`,
    started_at: row.started_at.toISOString(),
    status: row.status,
    result_count: resultCount,
    scored_count: scored,
    not_scored_count: resultCount - scored,
    passed_count: Number(row.passed_count),
    failed_count: Number(row.failed_count),
    errored_count: Number(row.errored_count),
    scorer_error_count: Number(row.scorer_error_count),
    task_error_count: Number(row.task_error_count),
    scores: entries.scores,
    metrics: entries.metrics,
  };
  if (row.evaluation_key !== null) summary.evaluation_key = row.evaluation_key;
  if (row.completed_at !== null) summary.completed_at = row.completed_at.toISOString();
  return summary;
}

/** `GET /evaluation-runs/{run_id}`. */
export async function getRunSummary(
  db: Queryable,
  config: Config,
  projectId: string,
  runId: string,
): Promise<RunSummary> {
  const row = await findRun(db, projectId, runId);
  return summaryOf(config, row, (await aggregatesOf(db, [row.id])).get(row.id)!);
}
