import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { IsoDateOrDateTime, isoToEpochMs, Pagination, ProjectQuery } from '../edge-schemas.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import {
  ScoreAnswer,
  ScoreConfigAnswer,
  ScoreConfigListAnswer,
  ScoreListAnswer,
  ScoreWriteAnswer,
  SCORE_DATA_TYPES,
  SCORE_SOURCES,
} from './answers.js';
import { MAX_SCORES_PER_REQUEST } from './input.js';
import { deleteScore, getScore, listScores, writeScores } from './service.js';
import {
  createScoreConfig,
  getScoreConfig,
  listScoreConfigs,
  patchScoreConfig,
  ScoreConfigCreate,
  ScoreConfigPatch,
} from './configs.js';

/** Scores and score configs (quality.md §1; docs/scores.md). Reads VIEWER+, writes MEMBER+ (an API key may write). */

/** 1 MiB: the route's body bound (quality.md §1). */
export const MAX_SCORES_BODY_BYTES = 1024 * 1024;

const WriteBody = z.object({
  project_id: z.string().optional(),
  scores: z.array(z.unknown()).min(1).max(MAX_SCORES_PER_REQUEST),
});

const ListQuery = ProjectQuery.extend({
  trace_id: z.string().min(1).max(256).optional(),
  span_id: z.string().min(1).max(256).optional(),
  session_id: z.string().min(1).max(256).optional(),
  name: z.string().min(1).max(128).optional(),
  source: z.enum(SCORE_SOURCES).optional(),
  evaluator_id: z.string().min(1).max(128).optional(),
  evaluator_version: z.coerce.number().int().min(1).max(1_000_000).optional(),
  config_id: z.string().min(1).max(128).optional(),
  data_type: z.enum(SCORE_DATA_TYPES).optional(),
  start_after: IsoDateOrDateTime.optional().describe('scores created after this time'),
  start_before: IsoDateOrDateTime.optional().describe('scores created before this time'),
}).extend(Pagination.shape);

const ScoreParams = z.object({ score_id: z.string().min(1).max(128) });
const ConfigParams = z.object({ config_id: z.string().min(1).max(128) });
const ConfigListQuery = ProjectQuery.extend(Pagination.shape);

export function registerScoreRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  /** The project a request acts on: the body's `project_id`, else the query's; writes need MEMBER. */
  const scope = (
    request: FastifyRequest<{ Querystring: { project_id?: string } }>,
    body: { project_id?: string } | undefined,
    write: boolean,
  ) =>
    resolveReadProject(
      ctx,
      principalOf(request),
      body?.project_id ?? request.query.project_id,
      write ? 'MEMBER' : 'VIEWER',
    );

  r.post(
    '/scores',
    {
      ...any,
      bodyLimit: MAX_SCORES_BODY_BYTES,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: WriteBody, response: { 200: ScoreWriteAnswer } },
    },
    async (request) => {
      const principal = principalOf(request);
      const project = await scope(request, request.body, true);
      const origin =
        principal.kind === 'user'
          ? { source: 'api' as const, authorUserId: principal.userId }
          : { source: 'api' as const };
      const { accepted, rejected } = await writeScores(ctx, project, request.body.scores, origin);
      return { accepted, rejected };
    },
  );

  r.get(
    '/scores',
    { ...any, schema: { querystring: ListQuery, response: { 200: ScoreListAnswer } } },
    async (request) => {
      const q = request.query;
      const project = await scope(request, undefined, false);
      return listScores(
        ctx,
        project.projectId,
        {
          traceId: q.trace_id,
          spanId: q.span_id,
          sessionId: q.session_id,
          name: q.name,
          source: q.source,
          evaluatorId: q.evaluator_id,
          evaluatorVersion: q.evaluator_version,
          configId: q.config_id,
          dataType: q.data_type,
          createdAfterMs: q.start_after === undefined ? undefined : isoToEpochMs(q.start_after),
          createdBeforeMs: q.start_before === undefined ? undefined : isoToEpochMs(q.start_before),
        },
        q.limit,
        q.page,
      );
    },
  );

  r.get(
    '/scores/:score_id',
    { ...any, schema: { params: ScoreParams, querystring: ProjectQuery, response: { 200: ScoreAnswer } } },
    async (request) => getScore(ctx, (await scope(request, undefined, false)).projectId, request.params.score_id),
  );

  r.delete(
    '/scores/:score_id',
    {
      ...any,
      schema: { params: ScoreParams, querystring: ProjectQuery, response: { 204: z.undefined().describe('deleted') } },
    },
    async (request, reply) => {
      await deleteScore(ctx, await scope(request, undefined, true), request.params.score_id);
      return reply.status(204).send(undefined);
    },
  );

  r.post(
    '/score-configs',
    {
      ...any,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: ScoreConfigCreate, response: { 201: ScoreConfigAnswer } },
    },
    async (request, reply) => {
      const project = await scope(request, request.body, true);
      return reply.status(201).send(await createScoreConfig(ctx.pg.pool, project.projectId, request.body));
    },
  );

  r.get(
    '/score-configs',
    { ...any, schema: { querystring: ConfigListQuery, response: { 200: ScoreConfigListAnswer } } },
    async (request) =>
      listScoreConfigs(
        ctx.pg.pool,
        (await scope(request, undefined, false)).projectId,
        request.query.limit,
        request.query.page,
      ),
  );

  r.get(
    '/score-configs/:config_id',
    { ...any, schema: { params: ConfigParams, querystring: ProjectQuery, response: { 200: ScoreConfigAnswer } } },
    async (request) =>
      getScoreConfig(ctx.pg.pool, (await scope(request, undefined, false)).projectId, request.params.config_id),
  );

  r.patch(
    '/score-configs/:config_id',
    {
      ...any,
      schema: {
        params: ConfigParams,
        querystring: ProjectQuery,
        body: ScoreConfigPatch,
        response: { 200: ScoreConfigAnswer },
      },
    },
    async (request) => {
      const project = await scope(request, request.body, true);
      return patchScoreConfig(ctx.pg.pool, project.projectId, request.params.config_id, request.body);
    },
  );
}
