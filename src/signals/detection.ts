import type { AppContext } from '../context.js';
import { configPredicates, type DetectorType, type ErrorConfig, type ThresholdConfig } from '../detectors/config.js';
import { settingsClause } from '../query/limits.js';
import { timeParam } from '../query/params.js';
import { commitPass, flushOutbox, type CommitOutcome, type NewFinding } from './commit.js';
import { DETECTION_LIMITS, incrementalQuery, type CandidateRow } from './detection-queries.js';
import {
  detectorStates,
  incrementalDue,
  passFrom,
  sqlDue,
  type DetectorState,
  type PassFaults,
} from './detector-state.js';
import { errorGroup, errorSummary, findingId, thresholdGroup, thresholdSummary } from './groups.js';
import { runPendingRca } from './rca.js';
import { runSqlDetector } from './sql-detector.js';

/**
 * Detection passes (issue 11, "Detection worker"). A tick (workers/detection.ts, every few seconds)
 * runs one pass of each enabled detector that has something to look at:
 * - error and threshold detectors are incremental over spans by the time they were stored: a pass
 *   reads the spans stored since the detector's watermark, minus a lateness overlap, in ONE query
 *   (detection-queries.ts), and leaves out the spans it already found; its findings are counted in
 *   Postgres and stored in ClickHouse as commit.ts describes. A span whose insert became visible late
 *   is still examined, once; a restarted worker neither misses nor repeats a finding.
 * - sql detectors run their guarded query as the project every `interval_minutes` (sql-detector.ts).
 * Before the passes, one query asks which projects stored spans since their detectors' watermarks,
 * so an idle project costs nothing per tick. After the passes, the tick answers pending root-cause
 * hints (rca.ts), a few per tick: those of the signals its passes created or reopened come first.
 */

/** Findings per pass at most: a backlog (a burst, a worker that was down) is worked off over passes. */
export const PASS_LIMIT = 5_000;
/**
 * How far back a tick looks for projects with new spans. A detector whose project stored nothing
 * since is not run; once its project stores something, its pass reads from its own watermark, so a
 * backlog older than this (a worker down for longer) is still read whole, at the project's next ingest.
 */
export const RECENT_HORIZON_MS = 15 * 60_000;

export type PassReport = {
  detector_id: string;
  type: DetectorType;
  findings: number;
  created: string[];
  reopened: string[];
  committed: boolean;
  error?: string;
};

/** One pass of one detector. Flushes its outbox first, so the pass sees every finding already counted. */
export async function runPass(ctx: AppContext, d: DetectorState, faults: PassFaults = {}): Promise<PassReport> {
  await flushOutbox(ctx, d.id);
  const report: PassReport = {
    detector_id: d.id,
    type: d.type,
    findings: 0,
    created: [],
    reopened: [],
    committed: false,
  };
  let outcome: CommitOutcome;
  if (d.type === 'sql') {
    const run = await runSqlDetector(ctx, d, faults);
    if ('error' in run) {
      // Reported on the detector; the next try waits for the next interval, like a successful run.
      await recordFailure(ctx, d.id, run.error, true);
      return { ...report, error: run.error };
    }
    outcome = run.outcome;
  } else {
    outcome = await incrementalPass(ctx, d, faults);
  }
  faults.afterCommit?.();
  if (outcome.committed) await flushOutbox(ctx, d.id);
  return {
    ...report,
    findings: outcome.hits,
    created: outcome.created,
    reopened: outcome.reopened,
    committed: outcome.committed,
  };
}

async function incrementalPass(ctx: AppContext, d: DetectorState, faults: PassFaults): Promise<CommitOutcome> {
  const config = d.config as ErrorConfig | ThresholdConfig;
  const q = incrementalQuery({
    projectId: d.project_id,
    detectorId: d.id,
    condition: d.type === 'threshold' ? { type: 'threshold', config: config as ThresholdConfig } : { type: 'error' },
    predicates: configPredicates(config),
    fromMs: passFrom(d),
    limit: PASS_LIMIT,
  });
  const [answer] = await ctx.ch.rows<{ seen: string | number; rows: CandidateRow[] }>(q);
  faults.afterQuery?.();
  const rows = answer?.rows ?? [];
  const seen = Number(answer?.seen ?? 0);
  const lastIngested = rows.length ? Number(rows[rows.length - 1]![6]) : 0;
  // A full page: the next pass goes on from the last span taken (the rest is stored after it).
  const watermark = rows.length >= PASS_LIMIT ? lastIngested : Math.max(seen, lastIngested);
  // Stamped at or after every span it names, so the next pass's findings check (found_at >= its
  // lower bound) sees it; the same value on a retry, since the outbox keeps the rows.
  const foundAtMs = Math.max(Date.now(), seen, lastIngested);
  const findings: NewFinding[] = rows.map(
    ([traceId, spanId, spanName, errorType, message, startMs, , measured, traceStartMs]) => {
      const start = Number(startMs);
      const threshold = d.type === 'threshold';
      // The trace's rollup row is written with its spans; 0 means it is not readable yet: the span's start stands in.
      const traceStart = Number(traceStartMs) > 0 ? Number(traceStartMs) : start;
      return {
        finding_id: findingId(d.id, traceId, spanId),
        trace_id: traceId,
        span_id: spanId,
        group: threshold ? thresholdGroup(config as ThresholdConfig, spanName) : errorGroup(errorType, spanName),
        summary: threshold
          ? thresholdSummary(config as ThresholdConfig, Number(measured))
          : errorSummary(errorType, message),
        occurred_ms: start,
        trace_start_ms: traceStart,
      };
    },
  );
  return commitPass(ctx, {
    detectorId: d.id,
    projectId: d.project_id,
    passSeq: Number(d.pass_seq),
    findings,
    watermarkMs: watermark > 0 ? watermark : null,
    foundAtMs,
  });
}

/** Records a pass that failed on the detector (kept short); `ran` also counts it as the interval's run. */
export async function recordFailure(ctx: AppContext, detectorId: string, message: string, ran: boolean): Promise<void> {
  await ctx.pg.pool.query(
    'UPDATE detectors SET last_error = $2, last_error_at = now(), last_run_at = CASE WHEN $3 THEN now() ELSE last_run_at END WHERE id = $1',
    [detectorId, message.slice(0, 500), ran],
  );
}

/**
 * The newest `ingested_at` of each project's spans stored after `sinceMs` (epoch ms): one query per
 * tick over the recent granules only (the minmax index on ingested_at).
 */
export async function recentIngest(
  ctx: AppContext,
  sinceMs: number,
  projectIds?: string[],
): Promise<Map<string, number>> {
  const latest = await ctx.ch.rows<{ project_id: string; latest: string | number }>({
    query: `SELECT project_id, toUnixTimestamp64Milli(max(ingested_at)) AS latest FROM spans
WHERE ingested_at > {since:DateTime64(3, 'UTC')}${projectIds ? ' AND project_id IN {projects:Array(String)}' : ''}
GROUP BY project_id
${settingsClause({ ...DETECTION_LIMITS, maxResultRows: 1_000_000 })}`,
    query_params: { since: timeParam("DateTime64(3, 'UTC')", Math.max(0, sinceMs) / 1000), projects: projectIds ?? [] },
  });
  return new Map(latest.map((r) => [r.project_id, Number(r.latest)]));
}

export type TickOptions = {
  /** Only these projects' detectors (tests; a tick job may carry them). */
  projectIds?: string[];
  faults?: PassFaults;
  /** Stops the tick between passes (worker shutdown). */
  signal?: AbortSignal;
  /** Where a detector's failure is reported (the worker's log). */
  log?: (line: string) => void;
  /** false: leave root-cause hints pending (tests that look at them one step at a time). */
  rca?: boolean;
};

export type TickReport = {
  passes: PassReport[];
  skipped: number;
  failed: number;
  rcaRequested: number;
  rcaAnswered: number;
};

export async function runDetectionTick(ctx: AppContext, options: TickOptions = {}): Promise<TickReport> {
  const report: TickReport = { passes: [], skipped: 0, failed: 0, rcaRequested: 0, rcaAnswered: 0 };
  const states = await detectorStates(ctx, options.projectIds);
  const incremental = states.filter((d) => d.enabled && d.type !== 'sql');
  const nowMs = Date.now();
  // The lowest watermark, but never further back than the horizon: an idle project's old watermark
  // must not make every tick read everyone's recent history. What is new is stored now, so it is inside.
  const since = Math.max(Math.min(...incremental.map(passFrom)), nowMs - RECENT_HORIZON_MS);
  const latest = incremental.length ? await recentIngest(ctx, since, options.projectIds) : new Map<string, number>();
  for (const d of states) {
    if (options.signal?.aborted) break;
    if (!d.enabled) {
      // Switched off with findings still in its outbox: they were counted, so they are stored.
      await flushOutbox(ctx, d.id);
      continue;
    }
    const due = d.type === 'sql' ? sqlDue(d, nowMs) : incrementalDue(d, latest.get(d.project_id), nowMs);
    if (!due) {
      report.skipped++;
      continue;
    }
    try {
      const pass = await runPass(ctx, d, options.faults);
      report.passes.push(pass);
      if (pass.error) options.log?.(`detector ${d.id}: ${pass.error}`);
      report.rcaRequested += pass.created.length + pass.reopened.length;
    } catch (error) {
      report.failed++;
      const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
      options.log?.(`detector ${d.id} pass failed: ${message}`);
      await recordFailure(ctx, d.id, message, false).catch(() => {});
      if (options.faults) throw error;
    }
  }
  // Root-cause hints of the signals passes created or reopened (this tick's or earlier ones').
  if (!options.signal?.aborted && options.rca !== false) {
    const outcomes = await runPendingRca(ctx, { projectIds: options.projectIds }).catch((error: unknown) => {
      options.log?.(`root-cause hints failed: ${String(error)}`);
      return [];
    });
    report.rcaAnswered = outcomes.filter((o) => o.state !== 'skipped').length;
  }
  return report;
}
