import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { ProjectQuery } from '../edge-schemas.js';
import { WIDGET_TYPES } from '../widgets/spec.js';
import { answerDashboard, resolveWindow, type StoredWidget } from '../widgets/data.js';
import { utc, WindowFields } from '../widgets/window-query.js';
import { DashboardDataAnswer } from '../widgets/answers.js';
import {
  createDashboard,
  createWidget,
  deleteDashboard,
  deleteWidget,
  getDashboard,
  getWidget,
  listDashboards,
  updateDashboard,
  updateWidget,
  widgetSpecIssues,
} from './service.js';
import { Deleted } from '../answer-schemas.js';
import { DashboardDetailAnswer, DashboardListAnswer, WidgetAnswer } from './answers.js';

/** Reads: any credential (a user's needs `project_id`). */
const ReadQuery = ProjectQuery;
/** Writes name the project in the body, or in the query on delete (docs/authentication.md, rule 3). */
const DeleteQuery = z.object({ project_id: z.string().min(1) });
const ProjectId = z.string().min(1);

const DashboardParams = z.object({ dashboard_id: z.string().min(1) });
const WidgetParams = z.object({ widget_id: z.string().min(1) });
const WindowQuery = ProjectQuery.extend(WindowFields);

const Name = z.string().trim().min(1).max(200);
const Description = z.string().max(2000);
const CreateDashboardBody = z.object({ project_id: ProjectId, name: Name, description: Description.optional() });
const UpdateDashboardBody = z.object({
  project_id: ProjectId,
  name: Name.optional(),
  description: Description.optional(),
});

const Title = z.string().trim().min(1).max(200);
const WidgetType = z.enum(WIDGET_TYPES);
// `spec` is any JSON for markdown; query widgets need a valid spec (src/widgets/spec.ts), 422 at body.spec.
const CreateWidgetBody = z
  .object({ project_id: ProjectId, dashboard_id: z.string().min(1), title: Title, type: WidgetType, spec: z.unknown() })
  .superRefine((body, ctx) => {
    for (const issue of widgetSpecIssues(body.type, body.spec)) ctx.addIssue(issue);
  });
// The resulting type and spec are checked together in the service, which knows the stored ones.
const UpdateWidgetBody = z.object({
  project_id: ProjectId,
  title: Title.optional(),
  type: WidgetType.optional(),
  spec: z.unknown().optional(),
});

/** The dashboard and widget catalog, and a dashboard's data (docs/dashboards.md). */
export function registerDashboardRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  // Writes refuse API keys with 403 (docs/authentication.md, rule 2); the role is checked by the service.
  const writer = { onRequest: authenticate(ctx, 'user') };

  r.get(
    '/dashboards',
    { ...reader, schema: { querystring: ReadQuery, response: { 200: DashboardListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listDashboards(ctx, scope.projectId);
    },
  );

  r.get(
    '/dashboards/:dashboard_id',
    {
      ...reader,
      schema: { params: DashboardParams, querystring: ReadQuery, response: { 200: DashboardDetailAnswer } },
    },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return getDashboard(ctx.pg.pool, scope.projectId, request.params.dashboard_id);
    },
  );

  r.post(
    '/dashboards',
    {
      ...writer,
      config: { idempotent: true },
      schema: { body: CreateDashboardBody, response: { 201: DashboardDetailAnswer } },
    },
    async (request, reply) => reply.status(201).send(await createDashboard(ctx, userOf(request), request.body)),
  );

  r.patch(
    '/dashboards/:dashboard_id',
    {
      ...writer,
      schema: { params: DashboardParams, body: UpdateDashboardBody, response: { 200: DashboardDetailAnswer } },
    },
    async (request) => updateDashboard(ctx, userOf(request), request.params.dashboard_id, request.body),
  );

  r.delete(
    '/dashboards/:dashboard_id',
    { ...writer, schema: { params: DashboardParams, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => deleteDashboard(ctx, userOf(request), request.params.dashboard_id, request.query.project_id),
  );

  r.get(
    '/widgets/:widget_id',
    { ...reader, schema: { params: WidgetParams, querystring: ReadQuery, response: { 200: WidgetAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return getWidget(ctx.pg.pool, scope.projectId, request.params.widget_id);
    },
  );

  r.post(
    '/widgets',
    { ...writer, config: { idempotent: true }, schema: { body: CreateWidgetBody, response: { 201: WidgetAnswer } } },
    async (request, reply) => reply.status(201).send(await createWidget(ctx, userOf(request), request.body)),
  );

  r.patch(
    '/widgets/:widget_id',
    { ...writer, schema: { params: WidgetParams, body: UpdateWidgetBody, response: { 200: WidgetAnswer } } },
    async (request) => updateWidget(ctx, userOf(request), request.params.widget_id, request.body),
  );

  r.delete(
    '/widgets/:widget_id',
    { ...writer, schema: { params: WidgetParams, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => deleteWidget(ctx, userOf(request), request.params.widget_id, request.query.project_id),
  );

  // A dashboard's widgets answered over one window (src/widgets/data.ts answers each widget).
  r.get(
    '/dashboards/:dashboard_id/data',
    {
      ...reader,
      schema: {
        params: DashboardParams,
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
}
