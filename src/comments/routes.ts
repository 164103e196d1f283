import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import type { Role } from '../auth/roles.js';
import { ForbiddenError } from '../errors.js';
import { Pagination, ProjectQuery, StoredText } from '../edge-schemas.js';
import { CommentAnswer, CommentListAnswer } from './answers.js';
import { createComment, deleteComment, getComment, listComments, MAX_COMMENT_TEXT } from './service.js';

/**
 * Comments on traces and spans (quality.md §3; docs/annotation.md). Writing and deleting take a user
 * credential (a comment has an author); reading takes an API key too. Reads VIEWER+, writes MEMBER+;
 * a comment is deleted by its author or an ADMIN.
 */

export const NOT_YOURS_DETAIL = "only the comment's author or an ADMIN may delete it";

const TraceId = StoredText(1, 256);
const CreateBody = z.object({
  project_id: z.string().optional(),
  trace_id: TraceId,
  span_id: TraceId.nullish(),
  text: StoredText(1, MAX_COMMENT_TEXT).refine((t) => t.trim() !== '', 'a comment needs some text'),
});
const ListQuery = ProjectQuery.extend({
  trace_id: TraceId.describe("the trace whose comments (and its spans') to list"),
  span_id: TraceId.optional().describe("only this span's comments"),
}).extend(Pagination.shape);
const Params = z.object({ comment_id: z.string().min(1).max(64) });

export function registerCommentRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  const user = { onRequest: authenticate(ctx, 'user') };
  const scope = (request: FastifyRequest & { query: { project_id?: string } }, role: Role, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, role);

  r.post(
    '/comments',
    {
      ...user,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBody, response: { 201: CommentAnswer } },
    },
    async (request, reply) => {
      const author = userOf(request);
      const project = await scope(request, 'MEMBER', request.body.project_id);
      const made = await createComment(
        ctx.pg.pool,
        ctx.config.annotationHoldSeconds,
        project.projectId,
        author.userId,
        request.body,
      );
      return reply.status(201).send(made);
    },
  );

  r.get(
    '/comments',
    { ...any, schema: { querystring: ListQuery, response: { 200: CommentListAnswer } } },
    async (request) => {
      const q = request.query;
      const project = await scope(request, 'VIEWER');
      return listComments(ctx.pg.pool, project.projectId, { traceId: q.trace_id, spanId: q.span_id }, q.limit, q.page);
    },
  );

  r.get(
    '/comments/:comment_id',
    { ...any, schema: { params: Params, querystring: ProjectQuery, response: { 200: CommentAnswer } } },
    async (request) => getComment(ctx.pg.pool, (await scope(request, 'VIEWER')).projectId, request.params.comment_id),
  );

  r.delete(
    '/comments/:comment_id',
    {
      ...user,
      schema: { params: Params, querystring: ProjectQuery, response: { 204: z.undefined().describe('deleted') } },
    },
    async (request, reply) => {
      const who = userOf(request);
      const project = await scope(request, 'MEMBER');
      await deleteComment(ctx.pg.pool, project.projectId, request.params.comment_id, who.userId, () =>
        scope(request, 'ADMIN').catch((error: unknown) => {
          throw error instanceof ForbiddenError ? new ForbiddenError(NOT_YOURS_DETAIL) : error;
        }),
      );
      return reply.status(204).send(undefined);
    },
  );
}
