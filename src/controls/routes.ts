import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, userOf } from '../auth/principal.js';
import { requireProjectRole, requireWorkspaceRole } from '../auth/access.js';
import { IsoDateTime, isoToEpochMs } from '../edge-schemas.js';
import { BadRequestError } from '../errors.js';
import { MaskingSetting } from './masking.js';
import { QuotasSetting } from './quota-setting.js';
import { SAMPLING_DEFAULT, SamplingSetting, startSamplingSweep } from './sampling.js';
import { controlsOf } from './settings.js';
import { emptyUsageDays, MAX_USAGE_DAYS, projectUsage, type UsageDay } from './usage-report.js';
import { MaskingAnswer, ProjectUsageAnswer, QuotasAnswer, SamplingAnswer, WorkspaceUsageAnswer } from './answers.js';
import { closeQuotaCounter } from './quotas.js';
import { usageMeterOf } from './usage.js';

/**
 * Producer controls (quality.md §6; docs/producer-controls.md): a project's sampling, masking and quotas (user
 * credential; reads VIEWER+, writes ADMIN; a PUT replaces the whole setting and applies to spans
 * ingested from then on, within 10 s on every API process), and usage per day. Each API process runs
 * the sampling sweep (src/controls/sampling.ts).
 */
const ProjectParams = z.object({ project_id: z.string().min(1) });
const WorkspaceParams = z.object({ workspace_id: z.string().min(1) });
const UsageQuery = z.object({ start_time: IsoDateTime.optional(), end_time: IsoDateTime.optional() });
const DAY_MS = 86_400_000;
const DEFAULT_USAGE_DAYS = 30;

type Setting = 'sampling' | 'masking' | 'quotas';

function usageWindow(query: z.infer<typeof UsageQuery>): { startMs: number; endMs: number } {
  const endMs = query.end_time ? isoToEpochMs(query.end_time) : Date.now();
  const startMs = query.start_time ? isoToEpochMs(query.start_time) : endMs - DEFAULT_USAGE_DAYS * DAY_MS;
  if (startMs >= endMs) throw new BadRequestError('start_time must be before end_time');
  if (endMs - startMs > MAX_USAGE_DAYS * DAY_MS)
    throw new BadRequestError(`the window is at most ${MAX_USAGE_DAYS} days; ask for a narrower one`);
  return { startMs, endMs };
}

function sumDays(lists: UsageDay[][]): UsageDay[] {
  const first = lists[0] ?? [];
  return first.map((day, i) => {
    const total = { ...day };
    for (const list of lists.slice(1)) {
      const d = list[i]!;
      total.spans += d.spans;
      total.traces += d.traces;
      total.bytes += d.bytes;
      total.sampled_out_spans += d.sampled_out_spans;
      total.masked_values += d.masked_values;
      total.scores += d.scores;
      total.judge_calls += d.judge_calls;
      total.judge_cost = Math.round((total.judge_cost + d.judge_cost) * 1e9) / 1e9;
    }
    return total;
  });
}

export function registerControlRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };
  const stopSweep = startSamplingSweep(ctx, ctx.spanWriter);
  app.addHook('onClose', async () => {
    await stopSweep();
    closeQuotaCounter(ctx);
    await usageMeterOf(ctx).close();
  });

  const settingRoutes = <S extends z.ZodType>(setting: Setting, body: S, answer: z.ZodType, empty: unknown) => {
    r.get(
      `/projects/:project_id/${setting}`,
      { ...user, schema: { params: ProjectParams, response: { 200: answer } } },
      async (request) => {
        const project = await requireProjectRole(ctx.pg.pool, userOf(request), request.params.project_id, 'VIEWER');
        const { rows } = await ctx.pg.pool.query(
          `SELECT ${setting} AS value FROM project_controls WHERE project_id = $1`,
          [project.id],
        );
        return (rows[0]?.value as unknown) ?? empty;
      },
    );
    r.put(
      `/projects/:project_id/${setting}`,
      { ...user, schema: { params: ProjectParams, body, response: { 200: answer } } },
      async (request) => {
        const project = await requireProjectRole(ctx.pg.pool, userOf(request), request.params.project_id, 'ADMIN');
        const value = request.body as unknown;
        await ctx.pg.pool.query(
          `INSERT INTO project_controls (project_id, ${setting}, updated_at) VALUES ($1, $2, now())
           ON CONFLICT (project_id) DO UPDATE SET ${setting} = excluded.${setting}, updated_at = now()`,
          [project.id, JSON.stringify(value)],
        );
        controlsOf(ctx).forget(project.id);
        return value;
      },
    );
  };
  settingRoutes('sampling', SamplingSetting, SamplingAnswer, SAMPLING_DEFAULT);
  settingRoutes('masking', MaskingSetting, MaskingAnswer, { detectors: [], patterns: [], action: 'mask' });
  settingRoutes('quotas', QuotasSetting, QuotasAnswer, {});

  r.get(
    '/projects/:project_id/usage',
    { ...user, schema: { params: ProjectParams, querystring: UsageQuery, response: { 200: ProjectUsageAnswer } } },
    async (request) => {
      const project = await requireProjectRole(ctx.pg.pool, userOf(request), request.params.project_id, 'VIEWER');
      const { startMs, endMs } = usageWindow(request.query);
      const usage = await projectUsage(ctx, [project.id], startMs, endMs);
      return { data: usage.byProject.get(project.id)!, storage_bytes: usage.storage.get(project.id) ?? 0 };
    },
  );

  r.get(
    '/workspaces/:workspace_id/usage',
    { ...user, schema: { params: WorkspaceParams, querystring: UsageQuery, response: { 200: WorkspaceUsageAnswer } } },
    async (request) => {
      const workspace = await requireWorkspaceRole(ctx.pg.pool, userOf(request), request.params.workspace_id, 'VIEWER');
      const { startMs, endMs } = usageWindow(request.query);
      const { rows: projects } = await ctx.pg.pool.query<{ id: string; name: string }>(
        'SELECT id, name FROM projects WHERE workspace_id = $1 AND deleted_at IS NULL ORDER BY name, id',
        [workspace.id],
      );
      const usage = await projectUsage(
        ctx,
        projects.map((p) => p.id),
        startMs,
        endMs,
      );
      const perProject = projects.map((p) => ({
        project_id: p.id,
        name: p.name,
        data: usage.byProject.get(p.id)!,
        storage_bytes: usage.storage.get(p.id) ?? 0,
      }));
      const empty = emptyUsageDays(startMs, endMs);
      return {
        data: perProject.length ? sumDays(perProject.map((p) => p.data)) : empty,
        storage_bytes: perProject.reduce((n, p) => n + p.storage_bytes, 0),
        projects: perProject,
      };
    },
  );
}
