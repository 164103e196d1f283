import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import { connectionExists } from '../llm-connections/service.js';
import { configsFor } from '../scores/configs.js';
import type { CreateEvaluatorInput, Scorer, SpanFilter, UpdateEvaluatorInput } from './schema.js';
import {
  EVALUATOR_COLUMNS,
  evaluatorRecord,
  statsOf,
  type EvaluatorRecord,
  type EvaluatorRow,
  type ExecutionStatus,
} from './record.js';

/**
 * The evaluator catalog (docs/evaluators.md; quality spec §2). Routes resolve the project and the
 * caller's role; every read and write here is scoped by that project. Executions are written by the
 * evaluator worker; this file reads them (stats, the executions list) and stops the pending ones of
 * an evaluator that is disabled.
 */

/** The catalog's size bound (docs/limits.md, "Catalogs"): each enabled evaluator reads every new trace. */
export const MAX_EVALUATORS_PER_PROJECT = 50;
export const EVALUATOR_NOT_FOUND = 'evaluator not found';
const UNIQUE_VIOLATION = '23505';
const DUPLICATE_NAME = 'an evaluator of this project already has that name';
export const DISABLED_SENTENCE = 'the evaluator was disabled before this execution ran';

type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };

async function findRow(db: Queryable, projectId: string, id: string): Promise<EvaluatorRow> {
  if (!isUuid(id)) throw new NotFoundError(EVALUATOR_NOT_FOUND);
  const { rows } = await db.query<EvaluatorRow>(
    `SELECT ${EVALUATOR_COLUMNS} FROM evaluators WHERE id = $1 AND project_id = $2`,
    [id, projectId],
  );
  if (!rows[0]) throw new NotFoundError(EVALUATOR_NOT_FOUND);
  return rows[0];
}

/** An evaluator of this project, as the dry run and the worker read it. */
export async function evaluatorRow(db: Queryable, projectId: string, id: string): Promise<EvaluatorRow> {
  return findRow(db, projectId, id);
}

/** The executions' totals per evaluator: the last 24 hours and all time (one grouped read for a page). */
async function statsFor(db: Queryable, ids: string[]) {
  if (ids.length === 0) return new Map<string, ReturnType<typeof statsOf>>();
  const { rows } = await db.query<Record<string, string | number | null> & { evaluator_id: string }>(
    `SELECT evaluator_id,
            count(*) AS executions,
            count(*) FILTER (WHERE status = 'completed') AS completed,
            count(*) FILTER (WHERE status = 'error') AS errors,
            count(*) FILTER (WHERE status = 'skipped') AS skipped,
            COALESCE(sum(input_tokens), 0) AS input_tokens,
            COALESCE(sum(output_tokens), 0) AS output_tokens,
            COALESCE(sum(cost), 0) AS cost,
            count(*) FILTER (WHERE recent) AS executions_24h,
            count(*) FILTER (WHERE recent AND status = 'completed') AS completed_24h,
            count(*) FILTER (WHERE recent AND status = 'error') AS errors_24h,
            count(*) FILTER (WHERE recent AND status = 'skipped') AS skipped_24h,
            COALESCE(sum(input_tokens) FILTER (WHERE recent), 0) AS input_tokens_24h,
            COALESCE(sum(output_tokens) FILTER (WHERE recent), 0) AS output_tokens_24h,
            COALESCE(sum(cost) FILTER (WHERE recent), 0) AS cost_24h
       FROM (SELECT *, created_at >= now() - interval '24 hours' AS recent
               FROM evaluator_executions WHERE evaluator_id = ANY($1::uuid[])) e
      GROUP BY evaluator_id`,
    [ids],
  );
  return new Map(rows.map((r) => [r.evaluator_id, statsOf(r)]));
}

async function withStats(db: Queryable, rows: EvaluatorRow[]): Promise<EvaluatorRecord[]> {
  const stats = await statsFor(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => evaluatorRecord(row, stats.get(row.id)));
}

export async function listEvaluators(
  db: Queryable,
  projectId: string,
  q: { limit: number; page: number },
): Promise<Page<EvaluatorRecord>> {
  const [{ rows }, count] = await Promise.all([
    db.query<EvaluatorRow>(
      `SELECT ${EVALUATOR_COLUMNS} FROM evaluators WHERE project_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [projectId, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM evaluators WHERE project_id = $1', [projectId]),
  ]);
  return { data: await withStats(db, rows), meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

export async function getEvaluator(db: Queryable, projectId: string, id: string): Promise<EvaluatorRecord> {
  const [record] = await withStats(db, [await findRow(db, projectId, id)]);
  return record!;
}

/** A judge's connection must be one of this project's (422 at the field otherwise: never another project's). */
async function checkConnection(db: Queryable, projectId: string, scorer: Scorer): Promise<string | null> {
  if (scorer.type !== 'llm_judge') return null;
  if (!(await connectionExists(db, projectId, scorer.connection_id)))
    throw new RequestValidationError([
      {
        loc: ['body', 'scorer', 'connection_id'],
        msg: 'no LLM connection of this project has this id',
        type: 'value_error',
        input: scorer.connection_id,
      },
    ]);
  return scorer.connection_id;
}

const configIssue = (field: string, msg: string, input?: unknown): never => {
  throw new RequestValidationError([
    { loc: ['body', field], msg, type: 'value_error', ...(input !== undefined ? { input } : {}) },
  ]);
};

/**
 * `score_config_id` names a score config of this project, for scores of `score_name`, not archived,
 * and the scorer's output fits it (quality spec §2): the same data type; a numeric judge's range
 * within the config's; a categorical judge's categories among the config's labels; a check (boolean)
 * only a boolean config. 422 at the field otherwise.
 */
async function checkScoreConfig(
  db: Queryable,
  projectId: string,
  configId: string | null,
  scoreName: string,
  scorer: Scorer,
): Promise<void> {
  if (configId === null) return;
  const { byId } = await configsFor(db, projectId, [configId], []);
  const config = byId.get(configId);
  if (!config) configIssue('score_config_id', 'no score config of this project has this id', configId);
  const c = config!;
  if (c.archived) configIssue('score_config_id', 'the score config is archived');
  if (c.name !== scoreName) configIssue('score_name', `the score config is for scores named '${c.name}'`, scoreName);
  const output =
    scorer.type === 'check'
      ? { data_type: 'boolean' as const, categories: undefined, min_value: undefined, max_value: undefined }
      : scorer.output;
  if (output.data_type !== c.data_type)
    configIssue('scorer', `the scorer gives ${output.data_type} scores; the score config is ${c.data_type}`);
  if (c.data_type === 'numeric') {
    if (c.min_value != null && (output.min_value === undefined || output.min_value < c.min_value))
      configIssue('scorer', `the judge's output must set min_value at least the config's ${c.min_value}`);
    if (c.max_value != null && (output.max_value === undefined || output.max_value > c.max_value))
      configIssue('scorer', `the judge's output must set max_value at most the config's ${c.max_value}`);
  }
  if (c.data_type === 'categorical') {
    const labels = new Set((c.categories ?? []).map((x) => x.label));
    const stray = (output.categories ?? []).find((label) => !labels.has(label));
    if (stray !== undefined) configIssue('scorer', `the category '${stray}' is not one of the score config's`);
  }
}

function spanFilterIssue(target: string, spanFilter: SpanFilter | null | undefined): void {
  if (target === 'trace' && spanFilter)
    throw new RequestValidationError([
      { loc: ['body', 'span_filter'], msg: 'span_filter is for target span only', type: 'value_error' },
    ]);
}

function duplicateName(error: unknown): never {
  if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw new ConflictError(DUPLICATE_NAME);
  throw error;
}

export async function createEvaluator(
  ctx: AppContext,
  projectId: string,
  userId: string | null,
  input: CreateEvaluatorInput,
): Promise<EvaluatorRecord> {
  const db = ctx.pg.pool;
  const connectionId = await checkConnection(db, projectId, input.scorer);
  await checkScoreConfig(db, projectId, input.score_config_id ?? null, input.score_name, input.scorer);
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM evaluators WHERE project_id = $1', [
    projectId,
  ]);
  if (rows[0]!.n >= MAX_EVALUATORS_PER_PROJECT)
    throw new ConflictError(
      `a project holds at most ${MAX_EVALUATORS_PER_PROJECT} evaluators; delete one before creating another`,
    );
  const id = newId();
  try {
    await db.query(
      `INSERT INTO evaluators (id, project_id, name, target, span_filter, filters, sampling_rate, delay_seconds, scorer,
                               connection_id, score_name, score_config_id, enabled, created_by)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9::jsonb, $10, $11, $12, $13, $14)`,
      [
        id,
        projectId,
        input.name,
        input.target,
        input.span_filter ? JSON.stringify(input.span_filter) : null,
        JSON.stringify(input.filters),
        input.sampling_rate,
        input.delay_seconds,
        JSON.stringify(input.scorer),
        connectionId,
        input.score_name,
        input.score_config_id ?? null,
        input.enabled,
        userId,
      ],
    );
  } catch (error) {
    duplicateName(error);
  }
  return getEvaluator(db, projectId, id);
}

/** Keys sorted, so a scorer read back from jsonb compares equal to the same scorer sent again. */
function canonical(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
              .map(([k, x]) => [k, sorted(x)]),
          )
        : v;
  return JSON.stringify(sorted(value));
}

/**
 * Edits the given fields. A changed scorer (its prompt, variables, output, model, connection or
 * check) makes a new `version`, so scores of different judge versions are never mixed unawares.
 * Enabling clears `paused_reason`; disabling stops the pending executions (skipped, with a sentence).
 */
export async function updateEvaluator(
  ctx: AppContext,
  projectId: string,
  id: string,
  input: UpdateEvaluatorInput,
): Promise<EvaluatorRecord> {
  const db = ctx.pg.pool;
  const row = await findRow(db, projectId, id);
  const target = input.target ?? row.target;
  const spanFilter = input.span_filter !== undefined ? input.span_filter : target === 'trace' ? null : row.span_filter;
  spanFilterIssue(target, spanFilter);
  const scorer = input.scorer ?? row.scorer;
  const connectionId = input.scorer ? await checkConnection(db, projectId, input.scorer) : row.connection_id;
  const newVersion = input.scorer !== undefined && canonical(input.scorer) !== canonical(row.scorer);
  const enabled = input.enabled ?? row.enabled;
  if (input.score_config_id !== undefined || input.scorer !== undefined || input.score_name !== undefined)
    await checkScoreConfig(
      db,
      projectId,
      input.score_config_id !== undefined ? input.score_config_id : row.score_config_id,
      input.score_name ?? row.score_name,
      scorer,
    );
  try {
    await db.query(
      `UPDATE evaluators SET name = $3, target = $4, span_filter = $5::jsonb, filters = $6::jsonb, sampling_rate = $7,
              delay_seconds = $8, scorer = $9::jsonb, connection_id = $10, score_name = $11, score_config_id = $12,
              enabled = $13, paused_reason = CASE WHEN $13 THEN NULL ELSE paused_reason END,
              enrol_from = CASE WHEN $13 AND NOT enabled THEN now() ELSE enrol_from END,
              enrol_watermark_ms = CASE WHEN $13 AND NOT enabled THEN NULL ELSE enrol_watermark_ms END,
              version = version + CASE WHEN $14 THEN 1 ELSE 0 END, updated_at = now()
        WHERE id = $1 AND project_id = $2`,
      [
        row.id,
        projectId,
        input.name ?? row.name,
        target,
        spanFilter ? JSON.stringify(spanFilter) : null,
        JSON.stringify(input.filters ?? row.filters),
        input.sampling_rate ?? row.sampling_rate,
        input.delay_seconds ?? row.delay_seconds,
        JSON.stringify(scorer),
        connectionId,
        input.score_name ?? row.score_name,
        input.score_config_id !== undefined ? input.score_config_id : row.score_config_id,
        enabled,
        newVersion,
      ],
    );
  } catch (error) {
    duplicateName(error);
  }
  if (!enabled && row.enabled) await stopPending(db, row.id);
  return getEvaluator(db, projectId, row.id);
}

/** Disabling or deleting an evaluator stops its pending executions (quality spec §2, "Rules"). */
async function stopPending(db: Queryable, evaluatorId: string): Promise<void> {
  await db.query(
    `UPDATE evaluator_executions SET status = 'skipped', error = $2, finished_at = now()
      WHERE evaluator_id = $1 AND status = 'pending'`,
    [evaluatorId, DISABLED_SENTENCE],
  );
}

/** Its executions go with it (ON DELETE CASCADE): a queued job finds nothing and does nothing. */
export async function deleteEvaluator(
  db: Queryable,
  projectId: string,
  id: string,
): Promise<{ deleted: true; id: string }> {
  if (!isUuid(id)) throw new NotFoundError(EVALUATOR_NOT_FOUND);
  const deleted = await db.query('DELETE FROM evaluators WHERE id = $1 AND project_id = $2', [id, projectId]);
  if (deleted.rowCount === 0) throw new NotFoundError(EVALUATOR_NOT_FOUND);
  return { deleted: true as const, id };
}

type ExecutionRow = {
  execution_id: string;
  trace_id: string;
  span_id: string | null;
  status: ExecutionStatus;
  error: string | null;
  score_id: string | null;
  attempts: number;
  judge_model: string | null;
  judge_trace_id: string | null;
  evaluator_version: number;
  backfill_id: string | null;
  input_tokens: string | number;
  output_tokens: string | number;
  cost: number;
  created_at: Date;
  finished_at: Date | null;
};

/** An evaluator's executions, newest first; `status` narrows them. */
export async function listExecutions(
  db: Queryable,
  projectId: string,
  id: string,
  q: { status?: string; limit: number; page: number },
) {
  const evaluator = await findRow(db, projectId, id);
  const where = 'evaluator_id = $1 AND ($2::text IS NULL OR status = $2)';
  const [{ rows }, count] = await Promise.all([
    db.query<ExecutionRow>(
      `SELECT execution_id, trace_id, span_id, status, error, score_id, attempts, judge_model, judge_trace_id,
              evaluator_version, backfill_id, input_tokens,
              output_tokens, cost, created_at, finished_at
         FROM evaluator_executions WHERE ${where} ORDER BY created_at DESC, execution_id LIMIT $3 OFFSET $4`,
      [evaluator.id, q.status ?? null, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>(`SELECT count(*)::int AS n FROM evaluator_executions WHERE ${where}`, [
      evaluator.id,
      q.status ?? null,
    ]),
  ]);
  const data = rows.map((r) => ({
    ...r,
    input_tokens: Number(r.input_tokens),
    output_tokens: Number(r.output_tokens),
    created_at: r.created_at.toISOString(),
    finished_at: r.finished_at?.toISOString() ?? null,
  }));
  return { data, meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}
