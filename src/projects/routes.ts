import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, userOf } from '../auth/principal.js';
import { DeleteReason } from '../edge-schemas.js';
import { createProject, deleteProject, getProject, listProjects, updateProject } from './service.js';
import { ProjectCreatedAnswer, ProjectDeletedAnswer, ProjectDetailAnswer, ProjectListAnswer } from './answers.js';

const CreateProjectBody = z.object({
  name: z.string().trim().min(1).max(200),
  workspace_id: z.string().min(1).optional(),
  trace_ttl_days: z.number().int().min(1).max(3650).optional(),
});

export function registerProjectRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };

  r.post(
    '/projects',
    {
      ...user,
      schema: { body: CreateProjectBody, response: { 200: ProjectCreatedAnswer, 201: ProjectCreatedAnswer } },
    },
    async (request, reply) => {
      const result = await createProject(ctx, userOf(request), request.body);
      return reply.status(result.created ? 201 : 200).send(result);
    },
  );

  r.get(
    '/projects',
    {
      ...user,
      schema: {
        querystring: z.object({ workspace_id: z.string().min(1).optional() }),
        response: { 200: ProjectListAnswer },
      },
    },
    async (request) => listProjects(ctx, userOf(request), request.query.workspace_id),
  );

  r.get(
    '/projects/:project_id',
    {
      ...user,
      schema: { params: z.object({ project_id: z.string().min(1) }), response: { 200: ProjectDetailAnswer } },
    },
    async (request) => getProject(ctx, userOf(request), request.params.project_id),
  );

  r.patch(
    '/projects/:project_id',
    {
      ...user,
      schema: {
        params: z.object({ project_id: z.string().min(1) }),
        body: z.object({
          name: z.string().trim().min(1).max(200).optional(),
          trace_ttl_days: z.number().int().min(1).max(3650).optional(),
        }),
        response: { 200: ProjectDetailAnswer },
      },
    },
    async (request) => updateProject(ctx, userOf(request), request.params.project_id, request.body),
  );

  r.delete(
    '/projects/:project_id',
    {
      ...user,
      schema: {
        params: z.object({ project_id: z.string().min(1) }),
        querystring: z.object({ reason: DeleteReason }),
        response: { 200: ProjectDeletedAnswer },
      },
    },
    async (request) => deleteProject(ctx, userOf(request), request.params.project_id, request.query.reason),
  );
}
