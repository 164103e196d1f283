import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import type { SqlConfig } from '../detectors/config.js';
import { columnProblem } from '../detectors/sql-columns.js';
import { runSql } from '../sql/service.js';
import { detectorOwner } from '../sql/owner.js';
import { commitPass, type CommitOutcome, type NewFinding } from './commit.js';
import { knownFindingsQuery } from './detection-queries.js';
import { findingId, sqlGroup, sqlSummary } from './groups.js';
import type { DetectorState, PassFaults } from './detector-state.js';

/**
 * A sql detector's run (docs/signals.md): its query goes through the public SQL path (the guard,
 * the project's scope, the limits, the fair share of engine sessions: src/sql/service.ts), exactly as
 * if the project had sent it to POST /sql. Each row names a trace (`trace_id`), optionally a span
 * (`span_id`) and a group (`group_key`); a row the detector has not found before is a finding. Two
 * queries: the caller's, and one that tells which rows are known and when their traces started
 * (the caller's SQL can't be joined with ours through the guard).
 */

export type SqlRun = { outcome: CommitOutcome } | { error: string };

const text = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);

export async function runSqlDetector(ctx: AppContext, d: DetectorState, faults: PassFaults): Promise<SqlRun> {
  const config = d.config as SqlConfig;
  let answer;
  try {
    // The same budget as POST /sql: the deadline, and the project's, workspace's and creator's share.
    answer = await runSql(ctx, await detectorOwner(ctx, d.id, d.project_id), config.query);
  } catch (error) {
    // A refused or failing query is the detector's problem to report (a 4xx to POST /sql); anything
    // else (the engine unreachable, busy) is retried at the next tick.
    if (error instanceof AppError && error.status < 500 && error.status !== 429) return { error: error.detail };
    throw error;
  }
  const names = answer.columns.map((c) => c.name);
  const problem = columnProblem(names);
  if (problem) return { error: problem.message };
  const [ti, si, gi] = ['trace_id', 'span_id', 'group_key'].map((n) => names.indexOf(n)) as [number, number, number];
  // One finding per (trace, span) a run returns; the first row's group wins.
  const rows = new Map<string, { trace: string; span: string; group: string }>();
  for (const row of answer.rows) {
    const trace = text(row[ti]);
    if (trace === '') continue;
    const span = si >= 0 ? text(row[si]) : '';
    const key = `${trace}\u0000${span}`;
    if (!rows.has(key)) rows.set(key, { trace, span, group: gi >= 0 ? text(row[gi]) : '' });
  }
  const candidates = [...rows.values()];
  const known = new Map<string, { known: boolean; traceStart: number }>();
  if (candidates.length > 0) {
    const q = knownFindingsQuery(
      d.project_id,
      d.id,
      candidates.map((c) => c.trace),
      candidates.map((c) => c.span),
    );
    const rows = await ctx.ch.rows<{
      trace_id: string;
      span_id: string;
      known: number | string;
      trace_start: number | string;
    }>(q);
    for (const r of rows) {
      known.set(`${r.trace_id}\u0000${r.span_id}`, { known: Number(r.known) === 1, traceStart: Number(r.trace_start) });
    }
  }
  faults.afterQuery?.();
  const now = Date.now();
  const findings: NewFinding[] = candidates
    .filter((c) => !known.get(`${c.trace}\u0000${c.span}`)?.known)
    .map((c) => {
      const traceStart = known.get(`${c.trace}\u0000${c.span}`)?.traceStart || now;
      return {
        finding_id: findingId(d.id, c.trace, c.span),
        trace_id: c.trace,
        span_id: c.span,
        group: sqlGroup(d.name, c.group),
        summary: sqlSummary(d.name, c.group),
        occurred_ms: traceStart,
        trace_start_ms: traceStart,
      };
    });
  const outcome = await commitPass(ctx, {
    detectorId: d.id,
    projectId: d.project_id,
    passSeq: Number(d.pass_seq),
    findings,
    watermarkMs: null,
    foundAtMs: now,
  });
  return { outcome };
}
