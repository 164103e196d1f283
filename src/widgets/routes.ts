import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { ProjectQuery } from '../edge-schemas.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { QUERY_WIDGET_TYPES, WidgetSpecSchema } from './spec.js';
import { answerWidget, resolveWindow, windowAnswer } from './data.js';
import { utc, WindowFields } from './window-query.js';
import { WidgetQueryAnswer } from './answers.js';

const WidgetQueryBody = z.object({
  project_id: z.string().optional(),
  type: z.enum(QUERY_WIDGET_TYPES).default('timeseries'),
  title: z.string().max(200).optional(),
  spec: WidgetSpecSchema,
  ...WindowFields,
});

/** Ad-hoc widget queries (docs/dashboards.md); a dashboard's data is src/dashboards/routes.ts. Reads: any credential. */
export function registerWidgetDataRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };

  r.post(
    '/widgets/query',
    {
      ...reader,
      schema: {
        body: WidgetQueryBody,
        querystring: ProjectQuery,
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
