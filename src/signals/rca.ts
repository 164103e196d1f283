import type { AppContext } from '../context.js';
import { limitErrorOf } from '../query/limits.js';
import { rankHints, rcaQuery, RCA_LIMITS, TOTAL_ATTRIBUTE, type RcaRow } from './rca-query.js';
import { signalMembers, type RcaAnswer } from './service.js';

/**
 * Root-cause hints of one signal (issue 11): `rca_state` goes none → pending when the signal gets its
 * first findings, again when it reopens or another signal is merged into it (commit.ts, status.ts);
 * the detection job's tick (detection.ts) then turns pending into ready (with hints, possibly none)
 * or failed (with the reason). One ClickHouse query per signal (rca-query.ts). The result is written
 * only if no newer request came meanwhile (`rca_requested_at` unchanged): a newer one leaves it
 * pending for the next tick. Not a queue of its own: on the embedded queue every BullMQ worker is
 * more connections on one PGlite session, which is what makes it fragile (schedule.ts).
 */

export type RcaOutcome = { state: 'ready' | 'failed' | 'skipped'; rca?: RcaAnswer };

/** How long a request whose signal has no readable trace yet waits before it is answered with no hints. */
export const RCA_PATIENCE_MS = 10 * 60_000;

export async function runRca(ctx: AppContext, signalId: string): Promise<RcaOutcome> {
  const { rows } = await ctx.pg.pool.query<{
    project_id: string;
    group_fields: Record<string, string>;
    rca_state: string;
    requested: string | null;
    age_ms: number;
    merged_into_id: string | null;
  }>(
    // As text: a Date would drop the microseconds the compare-and-set below needs.
    `SELECT project_id, group_fields, rca_state, rca_requested_at::text AS requested, merged_into_id,
            (extract(epoch FROM now() - rca_requested_at) * 1000)::float8 AS age_ms
       FROM signals WHERE id = $1`,
    [signalId],
  );
  const signal = rows[0];
  // Gone, merged away (its traces count for the target now) or answered already: nothing to do.
  if (!signal || signal.merged_into_id || signal.rca_state !== 'pending') return { state: 'skipped' };
  const members = (await signalMembers(ctx.pg.pool, signal.project_id, [signalId]))[signalId]!;
  let outcome: RcaOutcome;
  try {
    const q = rcaQuery(signal.project_id, members);
    const answer = await ctx.ch.rows<RcaRow>(q);
    // None of its traces readable yet (findings stored after this ran, or read from another engine
    // than the one that stored them): not an answer. Asked again later, behind the others.
    if (Number(answer.find((r) => r.attribute === TOTAL_ATTRIBUTE)?.s ?? 0) === 0 && signal.age_ms < RCA_PATIENCE_MS) {
      await ctx.pg.pool.query(
        `UPDATE signals SET rca_requested_at = now() WHERE id = $1 AND rca_state = 'pending' AND rca_requested_at::text IS NOT DISTINCT FROM $2`,
        [signalId, signal.requested],
      );
      return { state: 'skipped' };
    }
    const exclude =
      signal.group_fields.span_name !== undefined
        ? [{ attribute: 'span_name', value: signal.group_fields.span_name }]
        : [];
    outcome = { state: 'ready', rca: { generated_at: new Date().toISOString(), hints: rankHints(answer, exclude) } };
  } catch (error) {
    const limit = limitErrorOf(error, RCA_LIMITS, 'the signal spans too many traces to compare');
    const message =
      limit?.detail ??
      ((error as Error).message ?? String(error))
        .split('\n')[0]!
        .replace(/^Code: \d+\.\s*/, '')
        .replace(/DB::Exception:\s*/g, '');
    outcome = {
      state: 'failed',
      rca: {
        generated_at: new Date().toISOString(),
        hints: [],
        error: `root-cause query failed: ${message}`.slice(0, 500),
      },
    };
  }
  const updated = await ctx.pg.pool.query(
    `UPDATE signals SET rca_state = $2, rca = $3::jsonb WHERE id = $1 AND rca_state = 'pending' AND rca_requested_at::text IS NOT DISTINCT FROM $4`,
    [signalId, outcome.state, JSON.stringify(outcome.rca), signal.requested],
  );
  return updated.rowCount ? outcome : { state: 'skipped' };
}

/** Signals answered per tick at most: a burst of new signals is worked off over ticks. */
export const RCA_PER_TICK = 5;

/**
 * Answers the oldest pending requests (all projects, or `projectIds`), at most `limit`: run by the
 * detection tick after its passes, so the hints of a signal its passes created come right after.
 * Pending is the queue: a request survives any restart, and nothing else needs to remember it.
 */
export async function runPendingRca(
  ctx: AppContext,
  options: { projectIds?: string[]; limit?: number } = {},
): Promise<RcaOutcome[]> {
  const { rows } = await ctx.pg.pool.query<{ id: string }>(
    `SELECT id FROM signals WHERE rca_state = 'pending' AND ($1::uuid[] IS NULL OR project_id = ANY($1::uuid[]))
      ORDER BY rca_requested_at LIMIT $2`,
    [options.projectIds ?? null, options.limit ?? RCA_PER_TICK],
  );
  const outcomes: RcaOutcome[] = [];
  for (const { id } of rows) outcomes.push(await runRca(ctx, id));
  return outcomes;
}
