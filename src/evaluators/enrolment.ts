import type { AppContext } from '../context.js';
import type { Queryable } from '../stores/postgres.js';
import { paramBuilder } from '../query/params.js';
import { withinLimits } from '../query/limits.js';
import { selectTracesQuery } from '../traces/list-query.js';
import { KEYS_LIMITS } from '../traces/read-bounds.js';
import { JUDGE_ENVIRONMENT } from '../traces/vocabulary.js';
import { isSampled } from './identity.js';
import type { EvaluatorRow } from './record.js';
import { EVALUATOR_COLUMNS } from './record.js';

/**
 * Enrolment (docs/evaluators.md, "How traces are scored"): each tick, per enabled evaluator, the
 * traces whose spans were stored since the evaluator's watermark (ClickHouse `spans.ingested_at`,
 * minmax-indexed) are looked at; those in the evaluator's sample (identity.ts `isSampled`, the one
 * hash), not judge or evaluation traces, whose wait is over and that match the evaluator's filters
 * (the one predicate table: the trace list's own query, list-query.ts) get one `pending` execution
 * (for target `span`: one per matching span). A trace is due `delay_seconds` after its last span
 * arrived, but no later than twice that after its first: a late span restarts the wait once, not
 * for ever. A span arriving after its trace was enrolled changes nothing: the execution row is
 * unique per evaluator and target, so a trace never gets a second score from a late span.
 */

export { JUDGE_ENVIRONMENT };
/** Spans stored this recently may not all be visible yet: a tick reads up to `now - LATENESS_MS`. */
export const LATENESS_MS = 2_000;
/** One tick reads at most this much ingest time per evaluator (a backlog is worked off tick by tick). */
export const MAX_WINDOW_MS = 10 * 60_000;
/** Target `span`: at most this many spans of one trace are scored by one evaluator. */
export const MAX_SPANS_PER_TRACE = 100;
/** Trace ids per filter query (the trace list's key read answers at most 10,000 rows). */
const CHUNK = 2_000;

type WindowRow = {
  trace_id: string;
  first_ms: string | number;
  last_ms: string | number;
  first_new_ms: string | number;
  judge: string | number;
};

export type RuntimeEvaluator = EvaluatorRow & { enrol_from: Date; enrol_watermark_ms: string | number | null };

/** The traces of `ids` that match the evaluator's filters (all of them when it has none). */
export async function matchingTraces(
  ctx: AppContext,
  evaluator: Pick<EvaluatorRow, 'project_id' | 'filters'>,
  ids: string[],
): Promise<Set<string>> {
  if (evaluator.filters.length === 0 || ids.length === 0) return new Set(ids);
  const matched = new Set<string>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const q = selectTracesQuery(
      {
        projectId: evaluator.project_id,
        limit: chunk.length,
        page: 0,
        includeEvaluations: false,
        includeJudgeTraces: false,
        filters: evaluator.filters,
        traceIds: chunk,
      },
      KEYS_LIMITS,
    );
    const rows = await withinLimits(KEYS_LIMITS, 'the evaluator has too many candidates', () =>
      ctx.ch.rows<{ trace_id: string }>(q),
    );
    for (const r of rows) matched.add(r.trace_id);
  }
  return matched;
}

/** Target `span`: the spans of these traces that pass the evaluator's `span_filter`. */
export async function matchingSpans(
  ctx: AppContext,
  evaluator: Pick<EvaluatorRow, 'project_id' | 'span_filter'>,
  traceIds: string[],
): Promise<{ trace_id: string; span_id: string }[]> {
  const out: { trace_id: string; span_id: string }[] = [];
  for (let i = 0; i < traceIds.length; i += CHUNK) {
    const b = paramBuilder({ project: evaluator.project_id });
    const where = [
      'project_id = {project:String}',
      `trace_id IN ${b.param('Array(String)', traceIds.slice(i, i + CHUNK))}`,
    ];
    if (evaluator.span_filter?.kind) where.push(`kind IN ${b.param('Array(String)', evaluator.span_filter.kind)}`);
    if (evaluator.span_filter?.name) where.push(`name IN ${b.param('Array(String)', evaluator.span_filter.name)}`);
    const rows = await ctx.ch.rows<{ trace_id: string; span_id: string }>({
      query: `SELECT trace_id, span_id FROM spans WHERE ${where.join(' AND ')}
GROUP BY trace_id, span_id ORDER BY trace_id, min(start_time), span_id LIMIT ${MAX_SPANS_PER_TRACE} BY trace_id`,
      query_params: b.params,
    });
    out.push(...rows);
  }
  return out;
}

export type Target = { trace_id: string; span_id: string | null };

/** The targets of these traces for this evaluator: the traces themselves, or their matching spans. */
export async function targetsOf(ctx: AppContext, evaluator: EvaluatorRow, traceIds: string[]): Promise<Target[]> {
  if (evaluator.target === 'trace') return traceIds.map((trace_id) => ({ trace_id, span_id: null }));
  return matchingSpans(ctx, evaluator, traceIds);
}

/** Inserts pending executions for the targets not yet enrolled; answers the new execution ids. */
export async function enrolTargets(
  db: Queryable,
  evaluator: Pick<EvaluatorRow, 'id' | 'project_id' | 'version'>,
  targets: Target[],
  backfillId: string | null = null,
): Promise<string[]> {
  const created: string[] = [];
  for (let i = 0; i < targets.length; i += 1_000) {
    const { rows } = await db.query<{ execution_id: string }>(
      `INSERT INTO evaluator_executions (execution_id, evaluator_id, project_id, trace_id, span_id, evaluator_version, backfill_id)
       SELECT gen_random_uuid(), $1, $2, t.trace_id, t.span_id, $3, $4
         FROM jsonb_to_recordset($5::jsonb) AS t(trace_id text, span_id text)
       ON CONFLICT DO NOTHING
       RETURNING execution_id`,
      [evaluator.id, evaluator.project_id, evaluator.version, backfillId, JSON.stringify(targets.slice(i, i + 1_000))],
    );
    created.push(...rows.map((r) => r.execution_id));
  }
  return created;
}

/** One evaluator's enrolment step: answers the executions it created. */
export async function enrolEvaluator(
  ctx: AppContext,
  evaluator: RuntimeEvaluator,
  now: number,
  latenessMs = LATENESS_MS,
): Promise<string[]> {
  const db = ctx.pg.pool;
  const watermark =
    evaluator.enrol_watermark_ms === null ? evaluator.enrol_from.getTime() : Number(evaluator.enrol_watermark_ms);
  // The window ends at the real clock (the stored spans'), whatever `now` decides about the waits.
  const upto = Math.min(Math.min(now, Date.now()) - latenessMs, watermark + MAX_WINDOW_MS);
  if (upto <= watermark) return [];
  const b = paramBuilder({ project: evaluator.project_id });
  const from = b.param("DateTime64(3, 'UTC')", watermark / 1000);
  const to = b.param("DateTime64(3, 'UTC')", upto / 1000);
  const rows = await ctx.ch.rows<WindowRow>({
    query: `SELECT trace_id,
       toUnixTimestamp64Milli(min(ingested_at)) AS first_ms,
       toUnixTimestamp64Milli(max(ingested_at)) AS last_ms,
       toUnixTimestamp64Milli(minIf(ingested_at, ingested_at > ${from})) AS first_new_ms,
       max(environment = ${b.param('String', JUDGE_ENVIRONMENT)} OR evaluation_run_id != '') AS judge
FROM spans
WHERE project_id = {project:String} AND trace_id IN (
  SELECT DISTINCT trace_id FROM spans
   WHERE project_id = {project:String} AND ingested_at > ${from} AND ingested_at <= ${to})
GROUP BY trace_id`,
    query_params: b.params,
  });
  const delayMs = evaluator.delay_seconds * 1000;
  let next = upto;
  const due: string[] = [];
  for (const r of rows) {
    if (Number(r.judge) === 1) continue;
    if (!isSampled(r.trace_id, evaluator.id, evaluator.sampling_rate)) continue;
    const dueAt = Math.min(Number(r.last_ms) + delayMs, Number(r.first_ms) + 2 * delayMs);
    if (dueAt <= now) due.push(r.trace_id);
    // Not due yet: the watermark stays before its first new span, so a later tick reads it again.
    else next = Math.min(next, Number(r.first_new_ms) - 1);
  }
  const matched = await matchingTraces(ctx, evaluator, due);
  const created = await enrolTargets(db, evaluator, await targetsOf(ctx, evaluator, [...matched]));
  await db.query(
    'UPDATE evaluators SET enrol_watermark_ms = GREATEST(COALESCE(enrol_watermark_ms, 0), $2) WHERE id = $1',
    [evaluator.id, Math.max(watermark, next)],
  );
  return created;
}

/** The enabled evaluators (of these projects, when given), as enrolment reads them. */
export async function enabledEvaluators(
  db: Queryable,
  projectIds?: readonly string[],
  evaluatorIds?: readonly string[],
): Promise<RuntimeEvaluator[]> {
  const { rows } = await db.query<RuntimeEvaluator>(
    `SELECT ${EVALUATOR_COLUMNS}, enrol_from, enrol_watermark_ms FROM evaluators
      WHERE enabled AND ($1::uuid[] IS NULL OR project_id = ANY($1::uuid[]))
        AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))
      ORDER BY project_id, id`,
    [projectIds ? [...projectIds] : null, evaluatorIds ? [...evaluatorIds] : null],
  );
  return rows;
}
