import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import type { AnswerOf } from '../answer-schemas.js';
import { NotFoundError } from '../errors.js';
import { paramBuilder } from '../query/params.js';
import { settingsClause, withinLimits, type QueryLimits } from '../query/limits.js';
import {
  existingScoresQuery,
  listScoresQuery,
  scoreConditions,
  traceScoresQuery,
  traceScoreValuesQuery,
  type ExistingScore,
  type ScoreFilters,
  type ScoreRow,
  type ScoreValueRow,
} from '../query/scores.js';
import type { ScoreAnswer, ScoreSummaryAnswer, ScoreWriteAnswer } from './answers.js';
import { configsFor } from './configs.js';
import { resolveScore, ScoreInput, scoreIssues, type ResolvedScore, type ScoreOrigin } from './input.js';

/**
 * Scores (quality.md §1; docs/scores.md): written beside spans in ClickHouse, one row per write; a
 * re-sent score_id replaces the score, a delete writes it once more as deleted (clickhouse/0018).
 * `writeScores` is the one write entry: `POST /scores`, evaluators and annotation queues all use it,
 * each with its own origin.
 */

export type Score = AnswerOf<typeof ScoreAnswer>;
export type ScoreSummary = AnswerOf<typeof ScoreSummaryAnswer>;
export type ScoreWriteResult = AnswerOf<typeof ScoreWriteAnswer>;

const READ_LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 1_000_000_000,
  maxResultBytes: 64 * 1024 * 1024,
  maxResultRows: 1_000_000,
};
const ADVICE = 'narrow the filters or the window';

/** One process's write clock: strictly increasing microseconds, so a later write of a score always wins. */
let lastVersion = 0;
function nextVersion(): number {
  lastVersion = Math.max(lastVersion + 1, Date.now() * 1000);
  return lastVersion;
}

const chTime = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

type Project = { projectId: string; traceTtlDays: number };

/**
 * Validates each raw score and stores the valid ones (partial success): `{accepted, rejected}`.
 * A score without `score_id` gets one; a known `score_id` keeps its `created_at`. `origin` is one
 * for all the scores, or one per raw score (evaluator executions written together, each its own).
 */
export async function writeScores(
  ctx: AppContext,
  project: Project,
  raw: readonly unknown[],
  origin: ScoreOrigin | readonly ScoreOrigin[],
): Promise<ScoreWriteResult & { scores: Score[] }> {
  const originOf = (index: number) => ('source' in origin ? origin : origin[index]!);
  const rejected: ScoreWriteResult['rejected'] = [];
  const parsed: { index: number; input: ScoreInput }[] = [];
  raw.forEach((item, index) => {
    const result = ScoreInput.safeParse(item);
    if (result.success) parsed.push({ index, input: result.data });
    else rejected.push({ index, score_id: scoreIdOf(item), errors: scoreIssues(result.error, item) });
  });
  const configs = await configsFor(
    ctx.pg.pool,
    project.projectId,
    parsed.flatMap((p) => (p.input.config_id ? [p.input.config_id] : [])),
    parsed.map((p) => p.input.name),
  );
  const ready: (ResolvedScore & { origin: ScoreOrigin })[] = [];
  for (const { index, input } of parsed) {
    const resolved = resolveScore(input, configs);
    if ('errors' in resolved) rejected.push({ index, score_id: input.score_id ?? null, errors: resolved.errors });
    else ready.push({ ...resolved.score, origin: originOf(index) });
  }
  rejected.sort((a, b) => a.index - b.index);
  const stored = ready.length ? await storeScores(ctx, project, ready) : [];
  return { accepted: stored.length, rejected, scores: stored };
}

async function storeScores(
  ctx: AppContext,
  project: Project,
  ready: (ResolvedScore & { origin: ScoreOrigin })[],
): Promise<Score[]> {
  const named = ready.flatMap((s) => (s.score_id ? [s.score_id] : []));
  const created = new Map<string, number>();
  if (named.length) {
    const b = paramBuilder({ project: project.projectId });
    const found = await ctx.ch.rows<ExistingScore>({
      query: existingScoresQuery('{project:String}', b.param('Array(String)', named)),
      query_params: b.params,
    });
    for (const f of found) if (Number(f.is_deleted) === 0) created.set(f.score_id, Number(f.created_ms));
  }
  const now = Date.now();
  // Within one request a score_id sent twice: the later one wins, as two requests would.
  const last = new Map<string, Score & { version: number }>();
  for (const { origin, ...s } of ready) {
    const scoreId = s.score_id ?? crypto.randomUUID();
    const createdMs = created.get(scoreId) ?? now;
    last.set(scoreId, {
      score_id: scoreId,
      project_id: project.projectId,
      trace_id: s.trace_id || null,
      span_id: s.span_id || null,
      session_id: s.session_id || null,
      name: s.name,
      data_type: s.data_type,
      value: s.value,
      string_value: s.string_value || null,
      comment: s.comment || null,
      source: origin.source,
      evaluator_id: origin.evaluatorId ?? null,
      execution_id: origin.executionId ?? null,
      evaluator_version: origin.evaluatorVersion ?? null,
      author_user_id: origin.authorUserId ?? null,
      config_id: s.config_id || null,
      metadata: s.metadata,
      environment: s.environment || null,
      created_at: new Date(createdMs).toISOString(),
      updated_at: new Date(now).toISOString(),
      version: nextVersion(),
    });
  }
  const scores = [...last.values()];
  const values = scores.map((s) => tableRow(project, s, s.version, 0, now));
  // Settings stay out of the call: the embedded engine would keep them on its connection (docs/design.md).
  await ctx.ch.client.insert({ table: 'scores', values, format: 'JSONEachRow' });
  return scores.map(({ version: _v, ...s }) => s);
}

/** A score as the table holds it (clickhouse/0018_scores.sql): '' and 0 for what it lacks. */
function tableRow(project: Project, s: Score, version: number, isDeleted: 0 | 1, updatedMs: number) {
  return {
    project_id: project.projectId,
    score_id: s.score_id,
    trace_id: s.trace_id ?? '',
    span_id: s.span_id ?? '',
    session_id: s.session_id ?? '',
    name: s.name,
    data_type: s.data_type,
    value: s.value,
    string_value: s.string_value ?? '',
    comment: s.comment ?? '',
    source: s.source,
    evaluator_id: s.evaluator_id ?? '',
    execution_id: s.execution_id ?? '',
    evaluator_version: s.evaluator_version ?? 0,
    author_user_id: s.author_user_id ?? '',
    config_id: s.config_id ?? '',
    metadata: s.metadata,
    environment: s.environment ?? '',
    created_at: chTime(Date.parse(String(s.created_at))),
    updated_at: chTime(updatedMs),
    version,
    is_deleted: isDeleted,
    ttl_days: project.traceTtlDays,
  };
}

function scoreIdOf(item: unknown): string | null {
  const id = (item as { score_id?: unknown } | null)?.score_id;
  return typeof id === 'string' ? id : null;
}

export function scoreOf(projectId: string, r: ScoreRow): Score {
  const orNull = (v: string) => (v === '' ? null : v);
  return {
    score_id: r.score_id,
    project_id: projectId,
    trace_id: orNull(r.trace_id),
    span_id: orNull(r.span_id),
    session_id: orNull(r.session_id),
    name: r.name,
    data_type: r.data_type as Score['data_type'],
    value: Number(r.value),
    string_value: orNull(r.string_value),
    comment: orNull(r.comment),
    source: r.source as Score['source'],
    evaluator_id: orNull(r.evaluator_id),
    execution_id: orNull(r.execution_id),
    evaluator_version: r.source === 'evaluator' ? Number(r.evaluator_version) : null,
    author_user_id: orNull(r.author_user_id),
    config_id: orNull(r.config_id),
    metadata: r.metadata,
    environment: orNull(r.environment),
    created_at: new Date(Number(r.created_ms)).toISOString(),
    updated_at: new Date(Number(r.updated_ms)).toISOString(),
  };
}

/** `GET /scores`: newest first. */
export async function listScores(
  ctx: AppContext,
  projectId: string,
  filters: ScoreFilters,
  limit: number,
  page: number,
) {
  const b = paramBuilder({ project: projectId });
  const where = scoreConditions(filters, b.param);
  const rows = await withinLimits(READ_LIMITS, ADVICE, () =>
    ctx.ch.rows<ScoreRow & { total: string | number }>({
      query: listScoresQuery('{project:String}', where, limit, limit * page, settingsClause(READ_LIMITS)),
      query_params: b.params,
    }),
  );
  let total = rows.length ? Number(rows[0]!.total) : 0;
  if (rows.length === 0 && page > 0) {
    const first = await ctx.ch.rows<{ total: string | number }>({
      query: listScoresQuery('{project:String}', where, 1, 0, settingsClause(READ_LIMITS)),
      query_params: b.params,
    });
    total = first.length ? Number(first[0]!.total) : 0;
  }
  return { data: rows.map((r) => scoreOf(projectId, r)), meta: { page, limit, total } };
}

export async function getScore(ctx: AppContext, projectId: string, scoreId: string): Promise<Score> {
  const { data } = await listScores(ctx, projectId, { scoreId }, 1, 0);
  if (!data[0]) throw new NotFoundError('score not found');
  return data[0];
}

/** `DELETE /scores/{score_id}`: the score is written once more as deleted; every read leaves it out at once. */
export async function deleteScore(ctx: AppContext, project: Project, scoreId: string): Promise<void> {
  const score = await getScore(ctx, project.projectId, scoreId);
  const now = Date.now();
  await ctx.ch.client.insert({
    table: 'scores',
    values: [tableRow(project, score, nextVersion(), 1, now)],
    format: 'JSONEachRow',
  });
}

/** Every live score of the given traces, oldest first (the detail's `scores`). */
export async function scoresOfTraces(
  ctx: AppContext,
  projectId: string,
  traceIds: readonly string[],
): Promise<Score[]> {
  const rows = await traceScoreRows<ScoreRow>(ctx, projectId, traceIds, traceScoresQuery);
  return rows.map((r) => scoreOf(projectId, r));
}

/** The rows `query` answers for the live scores of the given traces (src/query/scores.ts). */
async function traceScoreRows<T>(
  ctx: AppContext,
  projectId: string,
  traceIds: readonly string[],
  query: (project: string, traceIds: string, settings: string) => string,
): Promise<T[]> {
  if (traceIds.length === 0) return [];
  const b = paramBuilder({ project: projectId });
  const traces = b.param('Array(String)', traceIds);
  return withinLimits(READ_LIMITS, ADVICE, () =>
    ctx.ch.rows<T>({ query: query('{project:String}', traces, settingsClause(READ_LIMITS)), query_params: b.params }),
  );
}

/** Per trace, one summary per score name (`GET /traces` items): mean for numbers, label counts for categories. */
export async function scoreSummaries(
  ctx: AppContext,
  projectId: string,
  traceIds: readonly string[],
): Promise<Map<string, ScoreSummary[]>> {
  const out = new Map<string, ScoreSummary[]>();
  const rows = await traceScoreRows<ScoreValueRow>(ctx, projectId, traceIds, traceScoreValuesQuery);
  for (const r of rows) {
    const score = { name: r.name, data_type: r.data_type as Score['data_type'], value: Number(r.value) };
    const list = out.get(r.trace_id) ?? [];
    let summary = list.find((s) => s.name === score.name && s.data_type === score.data_type);
    if (!summary) {
      summary = { name: score.name, data_type: score.data_type, avg: null, values: {}, count: 0 };
      list.push(summary);
      out.set(r.trace_id, list);
    }
    summary.count++;
    if (score.data_type === 'categorical') {
      const label = r.string_value;
      summary.values[label] = (summary.values[label] ?? 0) + 1;
    } else summary.avg = ((summary.avg ?? 0) * (summary.count - 1) + score.value) / summary.count;
  }
  for (const list of out.values()) list.sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

/** A session's own scores: those naming the session and no trace, oldest first. */
export async function scoresOfSession(ctx: AppContext, projectId: string, sessionId: string): Promise<Score[]> {
  const { data } = await listScores(ctx, projectId, { sessionId, traceId: '' }, 200, 0);
  return data.reverse();
}
