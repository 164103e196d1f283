import type { AppContext } from '../../context.js';
import { writeScores } from '../../scores/service.js';

/**
 * LangSmith feedback as Sightline scores (quality.md §5; docs/langsmith-protocol.md): `key` is the
 * score's name, `id` its score id (a re-sent feedback replaces itself), `score` its value (a boolean
 * score is a boolean score, a number a numeric one), a string `value` a categorical label,
 * `comment` the comment; `correction` and `feedback_source.type` go to metadata. Source `api`.
 *
 * The score's trace: `trace_id` when the feedback names it (the SDK does when `traceId` is given),
 * else the trace of the run as it was received in the last day (its parts in span_parts, or its span
 * when it was written whole at once), else the run id itself: in LangSmith a root run's id is its
 * trace's id, which is what feedback is mostly about.
 */

type Project = { projectId: string; traceTtlDays: number };
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What a feedback says as the body of one score, or the sentence why it can't be one. */
export function feedbackToScore(feedback: Record<string, unknown>, traceId: string | undefined): unknown {
  const runId = str(feedback.run_id);
  const trace = str(feedback.trace_id) ?? traceId ?? runId;
  const metadata: Record<string, string> = {};
  const source = isRecord(feedback.feedback_source) ? str(feedback.feedback_source.type) : undefined;
  if (source) metadata.feedback_source = source.slice(0, 4_096);
  if (feedback.correction !== undefined && feedback.correction !== null) {
    const text = JSON.stringify(feedback.correction);
    if (text !== undefined) metadata.correction = text.slice(0, 4_096);
  }
  if (isRecord(feedback.value) || Array.isArray(feedback.value))
    metadata.value = JSON.stringify(feedback.value).slice(0, 4_096);
  const score: Record<string, unknown> = {
    ...(str(feedback.id) ? { score_id: feedback.id } : {}),
    ...(trace ? { trace_id: trace } : {}),
    ...(runId && runId !== trace ? { span_id: runId } : {}),
    ...(str(feedback.session_id) && !trace ? { session_id: feedback.session_id } : {}),
    name: feedback.key,
    ...(typeof feedback.comment === 'string' ? { comment: feedback.comment } : {}),
    ...(Object.keys(metadata).length ? { metadata } : {}),
  };
  const value = feedback.score;
  if (typeof value === 'boolean') return { ...score, data_type: 'boolean', value: value ? 1 : 0 };
  if (typeof value === 'number') return { ...score, data_type: 'numeric', value };
  if (typeof feedback.value === 'string' && feedback.value !== '')
    return { ...score, data_type: 'categorical', string_value: feedback.value };
  if (typeof feedback.value === 'number') return { ...score, data_type: 'numeric', value: feedback.value };
  if (typeof feedback.value === 'boolean') return { ...score, data_type: 'boolean', value: feedback.value ? 1 : 0 };
  // Only a key (and perhaps a comment): a categorical score labelled with its key.
  return { ...score, data_type: 'categorical', string_value: typeof feedback.key === 'string' ? feedback.key : '' };
}

/**
 * The traces of runs named by feedback without a trace id: from the parts received for them, or the
 * spans stored in the last day (a run written whole leaves no part; `ingested_at`'s index bounds the read).
 */
async function tracesOfRuns(ctx: AppContext, projectId: string, runIds: string[]): Promise<Map<string, string>> {
  if (runIds.length === 0) return new Map();
  const rows = await ctx.ch.rows<{ span_id: string; trace_id: string }>({
    query: `SELECT span_id, any(trace_id) AS trace_id
              FROM (SELECT span_id, trace_id FROM span_parts
                     WHERE project_id = {project:String} AND span_id IN {runs:Array(String)}
                    UNION ALL
                    SELECT span_id, trace_id FROM spans
                     WHERE project_id = {project:String} AND ingested_at >= now64(3) - INTERVAL 1 DAY
                       AND span_id IN {runs:Array(String)})
             GROUP BY span_id`,
    query_params: { project: projectId, runs: runIds },
  });
  return new Map(rows.map((r) => [r.span_id, r.trace_id]));
}

/** Stores feedback as scores (partial success, as `POST /scores`). */
export async function writeFeedback(ctx: AppContext, project: Project, feedback: Record<string, unknown>[]) {
  const unnamed = [
    ...new Set(
      feedback.flatMap((f) =>
        str(f.trace_id) === undefined && str(f.run_id) && (f.run_id as string).length <= 128
          ? [f.run_id as string]
          : [],
      ),
    ),
  ];
  const traces = await tracesOfRuns(ctx, project.projectId, unnamed);
  const scores = feedback.map((f) => feedbackToScore(f, traces.get(str(f.run_id) ?? '')));
  return writeScores(ctx, project, scores, { source: 'api' });
}
