import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { RequestValidationError } from '../errors.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { Pagination, ProjectQuery } from '../edge-schemas.js';
import { ALERT_STATUSES, CreateAlertBody, UpdateAlertBody } from './schema.js';
import {
  createAlert,
  deleteAlert,
  getAlert,
  listAlerts,
  listEvaluations,
  pauseAlert,
  resumeAlert,
  updateAlert,
} from './service.js';
import { Deleted } from '../answer-schemas.js';
import {
  AlertAnswer,
  AlertDetailAnswer,
  AlertEvaluationListAnswer,
  AlertListAnswer,
  CreatedAlertAnswer,
} from './answers.js';

/** Reads: any credential (a user's needs `project_id`). */
const ReadQuery = ProjectQuery;
const ListQuery = ReadQuery.extend({ status: z.enum(ALERT_STATUSES).optional(), ...Pagination.shape });
const EvaluationsQuery = ReadQuery.extend(Pagination.shape);
/** Deletes name the project in the query (docs/authentication.md, rule 3). */
const DeleteQuery = z.object({ project_id: z.string().min(1) });
/** Pause and resume are edits: the project in the body, or in the query like a delete. */
const StateChangeBody = z.object({ project_id: z.string().min(1).optional() }).nullish();
const StateChangeQuery = z.object({ project_id: z.string().min(1).optional() });
const Params = z.object({ alert_id: z.string().min(1) });

/** Threshold alerts (docs/alerts.md). */
export function registerAlertRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  // Writes refuse API keys with 403 (docs/authentication.md, rule 2); the role is checked by the service.
  const writer = { onRequest: authenticate(ctx, 'user') };

  r.get(
    '/alerts',
    { ...reader, schema: { querystring: ListQuery, response: { 200: AlertListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listAlerts(ctx.pg.pool, scope.projectId, request.query);
    },
  );

  r.get(
    '/alerts/:alert_id',
    { ...reader, schema: { params: Params, querystring: ReadQuery, response: { 200: AlertDetailAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return getAlert(ctx.pg.pool, scope.projectId, request.params.alert_id);
    },
  );

  r.get(
    '/alerts/:alert_id/evaluations',
    {
      ...reader,
      schema: { params: Params, querystring: EvaluationsQuery, response: { 200: AlertEvaluationListAnswer } },
    },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listEvaluations(ctx.pg.pool, scope.projectId, request.params.alert_id, request.query);
    },
  );

  // 201 like every other create of the catalog (dashboards, widgets, projects).
  r.post(
    '/alerts',
    {
      ...writer,
      config: { idempotent: true },
      schema: { body: CreateAlertBody, response: { 201: CreatedAlertAnswer } },
    },
    async (request, reply) => reply.status(201).send(await createAlert(ctx, userOf(request), request.body)),
  );

  r.patch(
    '/alerts/:alert_id',
    { ...writer, schema: { params: Params, body: UpdateAlertBody, response: { 200: AlertAnswer } } },
    async (request) => updateAlert(ctx, userOf(request), request.params.alert_id, request.body),
  );

  r.delete(
    '/alerts/:alert_id',
    { ...writer, schema: { params: Params, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => deleteAlert(ctx, userOf(request), request.params.alert_id, request.query.project_id),
  );

  for (const [action, change] of [
    ['pause', pauseAlert],
    ['resume', resumeAlert],
  ] as const) {
    r.post(
      `/alerts/:alert_id/${action}`,
      {
        ...writer,
        schema: {
          params: Params,
          body: StateChangeBody,
          querystring: StateChangeQuery,
          response: { 200: AlertAnswer },
        },
      },
      async (request) => {
        const projectId = request.body?.project_id ?? request.query.project_id;
        if (!projectId) throw missingProjectId();
        return change(ctx, userOf(request), request.params.alert_id, projectId);
      },
    );
  }
}

function missingProjectId() {
  return new RequestValidationError([{ loc: ['body', 'project_id'], msg: 'Field required', type: 'missing' }]);
}
