import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { isoToEpochMs } from '../traces/span-input.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { getDashboard } from '../dashboards/service.js';
import { QUERY_WIDGET_TYPES, WidgetSpecSchema } from './spec.js';
import { answerDashboard, answerWidget, RANGES, resolveWindow, windowAnswer, type StoredWidget } from './data.js';
import { DashboardDataAnswer, WidgetQueryAnswer } from './answers.js';

const IsoDateTime = z.iso.datetime({ offset: true, local: true });
const WindowQuery = z.object({
  project_id: z.string().optional(),
  range: z.enum(Object.keys(RANGES) as [string, ...string[]]).optional(),
  start_time: IsoDateTime.optional(),
  end_time: IsoDateTime.optional(),
});

const WidgetQueryBody = z.object({
  project_id: z.string().optional(),
  type: z.enum(QUERY_WIDGET_TYPES).default('timeseries'),
  title: z.string().max(200).optional(),
  spec: WidgetSpecSchema,
  range: z.enum(Object.keys(RANGES) as [string, ...string[]]).optional(),
  start_time: IsoDateTime.optional(),
  end_time: IsoDateTime.optional(),
});

/** A time without an offset is UTC (as everywhere in the API). */
function utc(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = isoToEpochMs(value);
  // An impossible date stays as sent: resolveWindow answers it with a 422.
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}

/** Dashboard data and ad-hoc widget queries (docs/dashboards.md). Reads: any credential. */
export function registerWidgetDataRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };

  r.get(
    '/dashboards/:dashboard_id/data',
    {
      ...reader,
      schema: {
        params: z.object({ dashboard_id: z.string().min(1) }),
        querystring: WindowQuery,
        response: { 200: DashboardDataAnswer },
      },
    },
    async (request) => {
      const q = request.query;
      const scope = await resolveReadProject(ctx, principalOf(request), q.project_id);
      const window = resolveWindow(
        { range: q.range, start_time: utc(q.start_time), end_time: utc(q.end_time) },
        Date.now(),
        scope.traceTtlDays,
      );
      const { widgets, ...dashboard } = await getDashboard(ctx.pg.pool, scope.projectId, request.params.dashboard_id);
      const answer = await answerDashboard(ctx, scope.projectId, widgets as StoredWidget[], window);
      return { dashboard, ...answer };
    },
  );

  r.post(
    '/widgets/query',
    {
      ...reader,
      schema: {
        body: WidgetQueryBody,
        querystring: z.object({ project_id: z.string().optional() }),
        response: { 200: WidgetQueryAnswer },
      },
    },
    async (request) => {
      const body = request.body;
      const scope = await resolveReadProject(ctx, principalOf(request), body.project_id ?? request.query.project_id);
      const window = resolveWindow(
        { range: body.range, start_time: utc(body.start_time), end_time: utc(body.end_time) },
        Date.now(),
        scope.traceTtlDays,
        'body',
      );
      // Answered like a dashboard's widget: a query that fails is `status: "error"`, not a 500; one too big
      // for its limits is a 400 saying how to narrow it.
      const answer = await answerWidget(
        ctx,
        scope.projectId,
        { id: '', title: body.title ?? '', type: body.type, spec: body.spec },
        window,
        { throwLimits: true },
      );
      return { ...answer, window: windowAnswer(window) };
    },
  );
}
