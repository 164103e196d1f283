import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import type { Role } from '../auth/roles.js';
import { IsoDateTime, isoToEpochMs, Pagination, ProjectQuery } from '../edge-schemas.js';
import { Deleted } from '../answer-schemas.js';
import { getTrace } from '../traces/service.js';
import { CreateEvaluatorBody, UpdateEvaluatorBody } from './schema.js';
import {
  BackfillAnswer,
  DryRunAnswer,
  EvaluatorAnswer,
  EvaluatorExecutionListAnswer,
  EvaluatorListAnswer,
} from './answers.js';
import { EXECUTION_STATUSES } from './record.js';
import {
  createEvaluator,
  deleteEvaluator,
  getEvaluator,
  listEvaluators,
  listExecutions,
  updateEvaluator,
} from './service.js';
import { dryRun, type TraceReader } from './dry-run.js';
import { createBackfill, getBackfill } from './backfill.js';

const ListQuery = ProjectQuery.extend(Pagination.shape);
const ExecutionsQuery = ProjectQuery.extend({ status: z.enum(EXECUTION_STATUSES).optional(), ...Pagination.shape });
const Params = z.object({ evaluator_id: z.string().min(1).max(64) });
const BackfillParams = Params.extend({ backfill_id: z.string().min(1).max(64) });
const BackfillBody = z.object({
  project_id: z.string().optional(),
  start_time: IsoDateTime,
  end_time: IsoDateTime,
});
const DryRunBody = z.object({
  project_id: z.string().optional(),
  trace_id: z.string().min(1).max(128),
  span_id: z.string().min(1).max(128).optional(),
});

/**
 * Online evaluators (docs/evaluators.md): an API key or a user credential with `project_id` (in the
 * query, or in the body of a create, edit or dry run); reads VIEWER+, writes and dry runs MEMBER+ (a dry
 * run spends a judge call).
 */
export function registerEvaluatorRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  const project = (request: FastifyRequest & { query: { project_id?: string } }, role: Role, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, role);
  const createdBy = (request: FastifyRequest) => {
    const principal = principalOf(request);
    return principal.kind === 'user' ? principal.userId : null;
  };
  // The trace as GET /traces/{trace_id} reads it (bounded like that read).
  const readTrace: TraceReader = (projectId, traceId) => getTrace(ctx, projectId, traceId);

  r.get(
    '/evaluators',
    { ...any, schema: { querystring: ListQuery, response: { 200: EvaluatorListAnswer } } },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return listEvaluators(ctx.pg.pool, scope.projectId, request.query);
    },
  );

  r.post(
    '/evaluators',
    {
      ...any,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateEvaluatorBody, response: { 201: EvaluatorAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      return reply.status(201).send(await createEvaluator(ctx, scope.projectId, createdBy(request), request.body));
    },
  );

  r.get(
    '/evaluators/:evaluator_id',
    { ...any, schema: { params: Params, querystring: ProjectQuery, response: { 200: EvaluatorAnswer } } },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return getEvaluator(ctx.pg.pool, scope.projectId, request.params.evaluator_id);
    },
  );

  r.patch(
    '/evaluators/:evaluator_id',
    {
      ...any,
      schema: {
        params: Params,
        querystring: ProjectQuery,
        body: UpdateEvaluatorBody,
        response: { 200: EvaluatorAnswer },
      },
    },
    async (request) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      return updateEvaluator(ctx, scope.projectId, request.params.evaluator_id, request.body);
    },
  );

  r.delete(
    '/evaluators/:evaluator_id',
    { ...any, schema: { params: Params, querystring: ProjectQuery, response: { 200: Deleted } } },
    async (request) => {
      const scope = await project(request, 'MEMBER');
      return deleteEvaluator(ctx.pg.pool, scope.projectId, request.params.evaluator_id);
    },
  );

  r.get(
    '/evaluators/:evaluator_id/executions',
    {
      ...any,
      schema: { params: Params, querystring: ExecutionsQuery, response: { 200: EvaluatorExecutionListAnswer } },
    },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return listExecutions(ctx.pg.pool, scope.projectId, request.params.evaluator_id, request.query);
    },
  );

  r.post(
    '/evaluators/:evaluator_id/dry-run',
    {
      ...any,
      schema: { params: Params, querystring: ProjectQuery, body: DryRunBody, response: { 200: DryRunAnswer } },
    },
    async (request) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      const { trace_id, span_id } = request.body;
      return dryRun(ctx, readTrace, scope.projectId, request.params.evaluator_id, {
        trace_id,
        ...(span_id !== undefined ? { span_id } : {}),
      });
    },
  );

  r.post(
    '/evaluators/:evaluator_id/backfill',
    {
      ...any,
      config: { idempotent: true },
      schema: { params: Params, querystring: ProjectQuery, body: BackfillBody, response: { 202: BackfillAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      const { start_time, end_time } = request.body;
      return reply.status(202).send(
        await createBackfill(ctx, scope.projectId, request.params.evaluator_id, createdBy(request), {
          start_ms: isoToEpochMs(start_time),
          end_ms: isoToEpochMs(end_time),
        }),
      );
    },
  );

  r.get(
    '/evaluators/:evaluator_id/backfills/:backfill_id',
    { ...any, schema: { params: BackfillParams, querystring: ProjectQuery, response: { 200: BackfillAnswer } } },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return getBackfill(ctx.pg.pool, scope.projectId, request.params.evaluator_id, request.params.backfill_id);
    },
  );
}
