import type { AppContext } from '../context.js';
import { paramBuilder } from '../query/params.js';
import { currentScores } from '../query/scores.js';
import { usageMeterOf, utcDay } from './usage.js';

/**
 * `GET /projects/{id}/usage` and `GET /workspaces/{id}/usage` (docs/producer-controls.md, "Usage"):
 * per UTC day of the window, what ingest accepted (spans, request bytes, masked values: the usage
 * counters), the traces that started (the trace rollup), the scores written, and the judge calls of
 * online evaluators with their cost; and the project's share of the disk the span and score tables
 * take (by rows: parts are not per project).
 */
export const MAX_USAGE_DAYS = 400;
const DAY_MS = 86_400_000;

export type UsageDay = {
  date: string;
  spans: number;
  traces: number;
  bytes: number;
  sampled_out_spans: number;
  masked_values: number;
  scores: number;
  judge_calls: number;
  judge_cost: number;
};

/** Every UTC day of a window, counted as nothing. */
export function emptyUsageDays(startMs: number, endMs: number): UsageDay[] {
  const out: UsageDay[] = [];
  for (let t = Math.floor(startMs / DAY_MS) * DAY_MS; t < endMs; t += DAY_MS)
    out.push({
      date: utcDay(t),
      spans: 0,
      traces: 0,
      bytes: 0,
      sampled_out_spans: 0,
      masked_values: 0,
      scores: 0,
      judge_calls: 0,
      judge_cost: 0,
    });
  return out;
}

export async function projectUsage(
  ctx: AppContext,
  projectIds: string[],
  startMs: number,
  endMs: number,
): Promise<{ byProject: Map<string, UsageDay[]>; storage: Map<string, number> }> {
  await usageMeterOf(ctx).flush();
  const from = utcDay(startMs);
  const to = utcDay(endMs - 1);
  const [counters, judge] = await Promise.all([
    ctx.pg.pool.query<{
      project_id: string;
      day: string;
      spans: string;
      bytes: string;
      masked_values: string;
      sampled_out_spans: string;
    }>(
      `SELECT project_id, to_char(day, 'YYYY-MM-DD') AS day, spans, bytes, masked_values, sampled_out_spans FROM usage_daily
        WHERE project_id = ANY($1::uuid[]) AND day BETWEEN $2 AND $3`,
      [projectIds, from, to],
    ),
    ctx.pg.pool.query<{ project_id: string; day: string; calls: string; cost: number }>(
      `SELECT project_id, to_char((finished_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
              count(*) AS calls, COALESCE(sum(cost), 0)::float8 AS cost
         FROM evaluator_executions
        WHERE project_id = ANY($1::uuid[]) AND judge_model IS NOT NULL AND finished_at IS NOT NULL
          AND finished_at >= $2::date AND finished_at < ($3::date + 1)
        GROUP BY 1, 2`,
      [projectIds, from, to],
    ),
  ]);
  const b = paramBuilder({});
  const ids = b.param('Array(String)', projectIds);
  const start = b.param("DateTime64(3, 'UTC')", Math.floor(startMs / DAY_MS) * (DAY_MS / 1000));
  const end = b.param("DateTime64(3, 'UTC')", endMs / 1000);
  const [traces, scores, rows, parts] = await Promise.all([
    ctx.ch.rows<{ project_id: string; day: string; n: string }>({
      query: `SELECT project_id, toString(toDate(trace_start_hour)) AS day, uniqExact(trace_id) AS n FROM traces
               WHERE project_id IN ${ids} AND trace_start_hour >= toStartOfHour(${start}) AND trace_start_hour < ${end}
               GROUP BY project_id, day`,
      query_params: b.params,
    }),
    Promise.all(
      projectIds.map((id) => {
        const s = paramBuilder({ project: id });
        const sFrom = s.param("DateTime64(3, 'UTC')", Math.floor(startMs / DAY_MS) * (DAY_MS / 1000));
        const sTo = s.param("DateTime64(3, 'UTC')", endMs / 1000);
        return ctx.ch.rows<{ project_id: string; day: string; n: string }>({
          query: `SELECT {project:String} AS project_id, toString(toDate(created_at)) AS day, count() AS n
                    FROM ${currentScores('{project:String}', [`created_at >= ${sFrom}`, `created_at < ${sTo}`], 'created_at, is_deleted')}
                   GROUP BY day`,
          query_params: s.params,
        });
      }),
    ).then((all) => all.flat()),
    ctx.ch.rows<{ table: string; project_id: string; n: string }>({
      query: `SELECT 'spans' AS table, project_id, count() AS n FROM spans WHERE project_id IN ${ids} GROUP BY project_id
              UNION ALL
              SELECT 'scores' AS table, project_id, count() AS n FROM scores WHERE project_id IN ${ids} GROUP BY project_id`,
      query_params: b.params,
    }),
    ctx.ch.rows<{ table: string; bytes: string; rows: string }>({
      query: `SELECT table, sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.parts
               WHERE active AND database = currentDatabase() AND table IN ('spans', 'scores') GROUP BY table`,
      query_params: {},
    }),
  ]);
  const byProject = new Map<string, UsageDay[]>();
  for (const id of projectIds) byProject.set(id, emptyUsageDays(startMs, endMs));
  const at = (id: string, day: string) => byProject.get(id)?.find((d) => d.date === day);
  for (const r of counters.rows) {
    const d = at(r.project_id, r.day);
    if (d)
      Object.assign(d, {
        spans: Number(r.spans),
        bytes: Number(r.bytes),
        masked_values: Number(r.masked_values),
        sampled_out_spans: Number(r.sampled_out_spans),
      });
  }
  for (const r of judge.rows) {
    const d = at(r.project_id, r.day);
    if (d) Object.assign(d, { judge_calls: Number(r.calls), judge_cost: Math.round(Number(r.cost) * 1e9) / 1e9 });
  }
  for (const r of traces) {
    const d = at(r.project_id, r.day);
    if (d) d.traces = Number(r.n);
  }
  for (const r of scores) {
    const d = at(r.project_id, r.day);
    if (d) d.scores = Number(r.n);
  }
  const perRow = new Map(parts.map((p) => [p.table, Number(p.rows) ? Number(p.bytes) / Number(p.rows) : 0]));
  const storage = new Map<string, number>(projectIds.map((id) => [id, 0]));
  for (const r of rows)
    storage.set(r.project_id, (storage.get(r.project_id) ?? 0) + Number(r.n) * (perRow.get(r.table) ?? 0));
  for (const [id, bytes] of storage) storage.set(id, Math.round(bytes));
  return { byProject, storage };
}
