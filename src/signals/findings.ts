import type { AppContext } from '../context.js';
import { isUuid } from '../ids.js';
import { MIB, READ_MEMORY_BYTES, settingsClause, withinLimits, type QueryLimits } from '../query/limits.js';
import { effectiveSignals, signalMembers, type Page } from './service.js';

/**
 * `GET /findings?signal_id=&detector_id=&limit=&page=` (docs/signals.md, "Findings"): findings newest first.
 * A finding's `signal_id` is the signal it counts for now: after a merge, the target's; a filter on
 * a merge target also lists the findings of the signals merged into it.
 */

export type Finding = {
  finding_id: string;
  signal_id: string;
  detector_id: string;
  trace_id: string;
  span_id: string | null;
  trace_start_time: string;
  found_at: string;
  summary: string;
};

export type FindingsQuery = { signal_id?: string; detector_id?: string; limit: number; page: number };

const LIMITS = (rows: number): QueryLimits => ({
  maxExecutionSeconds: 10,
  maxMemoryBytes: READ_MEMORY_BYTES,
  maxResultRows: Math.max(1, rows),
  maxResultBytes: 16 * MIB,
});
const ADVICE = 'ask for a smaller limit, or filter by signal_id or detector_id';

type Row = {
  finding_id: string;
  signal_id: string;
  detector_id: string;
  trace_id: string;
  span_id: string;
  ts: string | number;
  found: string | number;
  summary: string;
  total: string | number;
};

export async function listFindings(ctx: AppContext, projectId: string, q: FindingsQuery): Promise<Page<Finding>> {
  const meta = { page: q.page, limit: q.limit, total: 0 };
  // Ids that can't be ours match nothing (the spec types them as strings: an empty page, not a 422).
  if ((q.signal_id !== undefined && !isUuid(q.signal_id)) || (q.detector_id !== undefined && !isUuid(q.detector_id)))
    return { data: [], meta };
  const where = ['project_id = {project:String}'];
  const params: Record<string, unknown> = { project: projectId, limit: q.limit, offset: q.page * q.limit };
  if (q.signal_id !== undefined) {
    params.signals = (await signalMembers(ctx.pg.pool, projectId, [q.signal_id]))[q.signal_id];
    where.push('signal_id IN {signals:Array(String)}');
  }
  if (q.detector_id !== undefined) {
    params.detector = q.detector_id.toLowerCase();
    where.push('detector_id = {detector:String}');
  }
  const page = (offset: number, limit: number) =>
    withinLimits(LIMITS(limit), ADVICE, async () => {
      // FINAL: a finding stored twice (a retried insert) is one row (ReplacingMergeTree on its key).
      return ctx.ch.rows<Row>({
        query: `SELECT finding_id, signal_id, detector_id, trace_id, span_id, toUnixTimestamp64Milli(trace_start_time) AS ts,
       toUnixTimestamp64Milli(found_at) AS found, summary, count() OVER () AS total
FROM findings FINAL
WHERE ${where.join(' AND ')}
ORDER BY found_at DESC, finding_id
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
${settingsClause(LIMITS(limit))}`,
        query_params: { ...params, limit, offset },
      });
    });
  let rows = await page(q.page * q.limit, q.limit);
  let total = rows.length ? Number(rows[0]!.total) : 0;
  // A page past the end still reports how many findings match.
  if (rows.length === 0 && q.page > 0) {
    const first = await page(0, 1);
    total = first.length ? Number(first[0]!.total) : 0;
    rows = [];
  }
  const effective = await effectiveSignals(
    ctx.pg.pool,
    rows.map((r) => r.signal_id),
  );
  return {
    data: rows.map((r) => ({
      finding_id: r.finding_id,
      signal_id: effective.get(r.signal_id) ?? r.signal_id,
      detector_id: r.detector_id,
      trace_id: r.trace_id,
      span_id: r.span_id === '' ? null : r.span_id,
      trace_start_time: new Date(Number(r.ts)).toISOString(),
      found_at: new Date(Number(r.found)).toISOString(),
      summary: r.summary,
    })),
    meta: { ...meta, total },
  };
}
