import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import type { Role } from '../auth/roles.js';
import { HttpUrl, Pagination, ProjectQuery, StoredText } from '../edge-schemas.js';
import { Deleted } from '../answer-schemas.js';
import { PROVIDERS } from './providers.js';
import { LlmConnectionAnswer, LlmConnectionListAnswer, LlmConnectionTestAnswer } from './answers.js';
import {
  createConnection,
  deleteConnection,
  getConnection,
  listConnections,
  testConnection,
  updateConnection,
} from './service.js';

/** The most extra headers a connection sends, and their bounds. */
export const MAX_EXTRA_HEADERS = 20;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
/** Headers the call itself sets: a connection may not replace them. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);

const OutboundUrl = HttpUrl('must be an absolute http(s) URL without credentials');
const ModelName = StoredText(1, 200);
const ExtraHeaders = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, 'must be an HTTP header name')
      .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()), 'this header is set by the call itself'),
    z
      .string()
      .max(2048)
      .refine(
        (v) => !v.includes('\r') && !v.includes('\n') && !v.includes('\u0000'),
        'header values may not contain line breaks or U+0000',
      ),
  )
  .refine((h) => Object.keys(h).length <= MAX_EXTRA_HEADERS, `at most ${MAX_EXTRA_HEADERS} extra headers`);

const ProjectInBody = { project_id: z.string().optional() };
const CreateBody = z.object({
  ...ProjectInBody,
  name: StoredText(1, 128),
  provider: z.enum(PROVIDERS),
  base_url: OutboundUrl.nullish(),
  api_key: StoredText(1, 1024),
  default_model: ModelName.nullish(),
  extra_headers: ExtraHeaders.nullish(),
});
const UpdateBody = z.object({
  ...ProjectInBody,
  name: StoredText(1, 128).optional(),
  base_url: OutboundUrl.nullish(),
  api_key: StoredText(1, 1024).optional(),
  default_model: ModelName.nullish(),
  extra_headers: ExtraHeaders.nullish(),
});
const TestBody = z.object({ ...ProjectInBody, model: ModelName.optional() }).nullish();
const ListQuery = ProjectQuery.extend(Pagination.shape);
const Params = z.object({ connection_id: z.string().min(1).max(64) });

/**
 * LLM connections (docs/evaluators.md, "LLM connections"): user credentials only (an API key is a
 * 403: a project key must not hand out provider accounts); reads VIEWER+, writes MEMBER+. The project
 * is `project_id` in the query, or in the body of a create or edit.
 */
export function registerLlmConnectionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };
  const project = (request: FastifyRequest & { query: { project_id?: string } }, role: Role, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, role);

  r.get(
    '/llm-connections',
    { ...user, schema: { querystring: ListQuery, response: { 200: LlmConnectionListAnswer } } },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return listConnections(ctx.pg.pool, scope.projectId, request.query);
    },
  );

  r.post(
    '/llm-connections',
    {
      ...user,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBody, response: { 201: LlmConnectionAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      return reply.status(201).send(await createConnection(ctx, scope.projectId, userOf(request).userId, request.body));
    },
  );

  r.get(
    '/llm-connections/:connection_id',
    { ...user, schema: { params: Params, querystring: ProjectQuery, response: { 200: LlmConnectionAnswer } } },
    async (request) => {
      const scope = await project(request, 'VIEWER');
      return getConnection(ctx.pg.pool, scope.projectId, request.params.connection_id);
    },
  );

  r.patch(
    '/llm-connections/:connection_id',
    {
      ...user,
      schema: { params: Params, querystring: ProjectQuery, body: UpdateBody, response: { 200: LlmConnectionAnswer } },
    },
    async (request) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      return updateConnection(ctx, scope.projectId, request.params.connection_id, request.body);
    },
  );

  r.delete(
    '/llm-connections/:connection_id',
    { ...user, schema: { params: Params, querystring: ProjectQuery, response: { 200: Deleted } } },
    async (request) => {
      const scope = await project(request, 'MEMBER');
      return deleteConnection(ctx.pg.pool, scope.projectId, request.params.connection_id);
    },
  );

  // A test spends a (tiny) provider call: MEMBER+, like any write.
  r.post(
    '/llm-connections/:connection_id/test',
    {
      ...user,
      schema: { params: Params, querystring: ProjectQuery, body: TestBody, response: { 200: LlmConnectionTestAnswer } },
    },
    async (request) => {
      const scope = await project(request, 'MEMBER', request.body?.project_id);
      return testConnection(ctx, scope.projectId, request.params.connection_id, request.body?.model);
    },
  );
}
