import type { AppContext } from '../context.js';
import { withTransaction } from '../stores/postgres.js';
import { upsertScheduler } from '../stores/queue.js';
import { claimAlerts, releaseClaims, type ClaimedAlert } from './claims.js';
import { closedWindowEnd, TICK_PATTERN } from './clock.js';
import { commitGroup, type GroupOutcome } from './commit.js';
import { enqueueNotifications, sweepNotifications } from './notifications.js';
import {
  evaluationLimits,
  groupAlerts,
  groupQuery,
  readGroupAnswer,
  readScoreGroupAnswer,
  scoreGroupQuery,
  type EvaluationGroup,
} from './queries.js';
import { limitErrorOf } from '../query/limits.js';
import { readSealed } from '../rollups/sealed-read.js';

/**
 * One tick of alert evaluation (issue 10, "Evaluation worker"): claim the alerts due for window end
 * E in batches, answer each query group with one ClickHouse query, commit each group's transitions
 * in one transaction, then enqueue the notifications that commit created. The worker (workers/alerts.ts)
 * runs it from a BullMQ job scheduler every minute; tests and the bench call it directly.
 *
 * Only the newest closed window is evaluated: a worker that was down does not replay the minutes it
 * missed (an alert speaks about now; the history shows the gap).
 */

export const ALERTS_QUEUE = 'alerts';
export const TICK_SCHEDULER_ID = 'alerts-tick';
export type TickJob = { window_end?: number; project_ids?: string[] };

export type TickOptions = {
  /** Epoch ms of a whole minute; default the newest closed window (clock.ts). */
  windowEndMs?: number;
  /** The claim token: the tick job's id, so a re-run of the same job resumes its own claims. */
  token: string;
  projectIds?: string[];
  /** Stops the tick between query groups (worker shutdown); claims not used are given back. */
  signal?: AbortSignal;
  batchSize?: number;
};

export type TickReport = {
  windowEnd: string;
  claimed: number;
  committed: number;
  dropped: number;
  queries: number;
  failedQueries: number;
  notifications: number;
  aborted: boolean;
};

const DEFAULT_BATCH = 500;
/** Query groups in flight at once: ClickHouse of one group overlaps the Postgres commit of another. */
const CONCURRENCY = 3;
/** A ClickHouse error message is kept short in last_error and the history. */
const MAX_ERROR = 500;

export async function runTick(ctx: AppContext, options: TickOptions): Promise<TickReport> {
  const windowEndMs = options.windowEndMs ?? closedWindowEnd(Date.now());
  const report: TickReport = {
    windowEnd: new Date(windowEndMs).toISOString(),
    claimed: 0,
    committed: 0,
    dropped: 0,
    queries: 0,
    failedQueries: 0,
    notifications: 0,
    aborted: false,
  };
  const handled: string[] = [];
  for (;;) {
    if (options.signal?.aborted) {
      report.aborted = true;
      break;
    }
    const claimed = await claimAlerts(ctx.pg.pool, {
      windowEndMs,
      token: options.token,
      limit: options.batchSize ?? DEFAULT_BATCH,
      exclude: handled,
      projectIds: options.projectIds,
    });
    if (claimed.length === 0) break;
    report.claimed += claimed.length;
    handled.push(...claimed.map((a) => a.id));
    const groups = groupAlerts(claimed, windowEndMs);
    const pending = [...groups];
    const worker = async () => {
      for (let group = pending.shift(); group; group = pending.shift()) {
        if (options.signal?.aborted) {
          await releaseClaims(
            ctx.pg.pool,
            options.token,
            group.alerts.map((a) => a.id),
          );
          continue;
        }
        await evaluateGroup(ctx, group, windowEndMs, report);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, groups.length) }, worker));
    if (claimed.length < (options.batchSize ?? DEFAULT_BATCH)) break;
  }
  report.aborted ||= Boolean(options.signal?.aborted);
  if (!report.aborted) await sweepNotifications(ctx, options.projectIds);
  return report;
}

async function evaluateGroup(
  ctx: AppContext,
  group: EvaluationGroup<ClaimedAlert>,
  windowEndMs: number,
  report: TickReport,
): Promise<void> {
  const outcome = await measureGroup(ctx, group);
  report.queries++;
  if (!outcome.ok) report.failedQueries++;
  const result = await withTransaction(ctx.pg.pool, (tx) =>
    commitGroup(tx, group.alerts, windowEndMs, outcome, ctx.config.webUrl),
  );
  report.committed += result.committed.length;
  report.dropped += result.dropped.length;
  report.notifications += result.notifications.length;
  // After the commit: a crash in between leaves pending rows, which the sweeper enqueues later.
  await enqueueNotifications(ctx, result.notifications);
}

/** One ClickHouse query for the group; any failure becomes the group's error outcome. */
export async function measureGroup(ctx: AppContext, group: EvaluationGroup): Promise<GroupOutcome> {
  try {
    if (group.source === 'scores')
      return { ok: true, answers: readScoreGroupAnswer(group, await ctx.ch.compactRows(scoreGroupQuery(group))) };
    // A rollup read takes the sealer's watermark (src/rollups/sealed-read.ts), else raw spans.
    const query = groupQuery(group);
    const rows =
      group.source === 'spans'
        ? await ctx.ch.compactRows(query)
        : (
            await readSealed(
              ctx.ch,
              query,
              (q) => ctx.ch.compactRows(q),
              () => ctx.ch.compactRows(groupQuery({ ...group, source: 'spans' })),
              { untailed: { projectId: group.projectId, query: groupQuery(group, { tail: false }) } },
            )
          ).result;
    return { ok: true, answers: readGroupAnswer(group, rows) };
  } catch (error) {
    const limit = limitErrorOf(error, evaluationLimits(group), "narrow the alert's filters or shorten its window");
    const message =
      limit?.detail ??
      ((error as Error).message ?? String(error))
        .split('\n')[0]!
        .replace(/^Code: \d+\.\s*/, '')
        .replace(/DB::Exception:\s*/, '');
    return { ok: false, error: `the alert's query failed: ${message}`.slice(0, MAX_ERROR) };
  }
}

/**
 * Schedules the ticks now, and again each time the queue's Redis returns from an outage: one that
 * restarted without persistence lost the scheduler with every other job, and no alert would be
 * evaluated again until a worker process restarted. Answers the stop of the re-scheduling.
 */
export function keepTicksScheduled(ctx: AppContext, onError: (error: unknown) => void): () => void {
  const schedule = () => void scheduleTicks(ctx).catch(onError);
  schedule();
  return ctx.queue.onReconnect(ALERTS_QUEUE, schedule);
}

/** The job scheduler of the ticks (upsertScheduler: deadline and retries). Without it no alert is ever evaluated. */
export function scheduleTicks(ctx: AppContext, attempts = 8): Promise<void> {
  return upsertScheduler<TickJob>(
    ctx.queue,
    ALERTS_QUEUE,
    TICK_SCHEDULER_ID,
    { pattern: TICK_PATTERN },
    { name: 'tick', data: {} },
    attempts,
  );
}
