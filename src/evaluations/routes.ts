import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { AppError, PayloadTooLargeError, ServiceUnavailableError } from '../errors.js';
import { KeyTakenError } from '../idempotency/deferred.js';
import { writtenAsText } from '../answer-schemas.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { Pagination, ProjectQuery, QueryInt, StoredText } from '../edge-schemas.js';
import { keepRawJson } from '../raw-json-body.js';
import { completeRun, createRun, getEvaluation, listEvaluations, REQUESTED_STATUSES } from './service.js';
import { getRunSummary } from './summary.js';
import { writeResults } from './result-writer.js';
import { keepsResultValue, MAX_RESULTS_BODY_BYTES, MAX_RESULTS_PER_REQUEST, ResultsBody } from './result-input.js';
import { compareRuns, MAX_COMPARE_LIMIT } from './compare.js';
import {
  EvaluationDetailAnswer,
  EvaluationListAnswer,
  ResultsWrittenAnswer,
  RunComparisonAnswer,
  RunSummaryAnswer,
} from './answers.js';

const ListQuery = ProjectQuery.extend(Pagination.shape);
const CompareQuery = ProjectQuery.extend({
  other: z.string().min(1).max(64),
  threshold: z.coerce.number().min(0).max(1e12).default(0),
  limit: QueryInt(1, MAX_COMPARE_LIMIT).default(100),
  cursor: z.string().min(1).max(64).optional(),
});

const EvaluationParams = z.object({ evaluation_id: z.string().min(1).max(64) });
const RunParams = z.object({ run_id: z.string().min(1).max(64) });

const CreateRunBody = z.object({
  evaluation_name: StoredText(1, 200)
    .transform((s) => s.trim())
    .pipe(z.string().min(1)),
  evaluation_key: StoredText(1, 200).nullish(),
  dataset_version_id: z.string().min(1).max(64),
  candidate_version: StoredText(0, 200),
  environment: StoredText(0, 200),
  project_id: z.string().optional(),
});
const CompleteBody = z
  .object({ status: z.enum(REQUESTED_STATUSES).optional(), project_id: z.string().optional() })
  .nullish();
const WriteResultsBody = ResultsBody.extend({ project_id: z.string().optional() });

/**
 * Evaluations, runs and results (docs/datasets.md).
 * Run writes (`POST /evaluation-runs`, `.../results`, `.../complete`) take a project API key only; a
 * user credential there is a 401. Reads take either credential under the `project_id` rules.
 */
export function registerEvaluationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  const writer = { onRequest: authenticate(ctx, 'api_key') };
  const project = (request: FastifyRequest & { query: { project_id?: string } }, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id);

  r.get(
    '/evaluations',
    { ...reader, schema: { querystring: ListQuery, response: { 200: EvaluationListAnswer } } },
    async (request) => {
      const scope = await project(request);
      return listEvaluations(ctx.pg.pool, scope.projectId, request.query.limit, request.query.page);
    },
  );

  r.get(
    '/evaluations/:evaluation_id',
    {
      ...reader,
      schema: { params: EvaluationParams, querystring: ListQuery, response: { 200: EvaluationDetailAnswer } },
    },
    async (request) => {
      const scope = await project(request);
      return getEvaluation(ctx, scope.projectId, request.params.evaluation_id, request.query.limit, request.query.page);
    },
  );

  r.post(
    '/evaluation-runs',
    {
      ...writer,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateRunBody, response: { 201: RunSummaryAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, request.body.project_id);
      return reply.status(201).send(await createRun(ctx, scope.projectId, request.body));
    },
  );

  // Result bodies keep each `output` as the caller's JSON text (datasets/raw-json.ts).
  app.register(async (child) => {
    keepRawJson(child, keepsResultValue, MAX_RESULTS_BODY_BYTES);
    typed(child).post(
      '/evaluation-runs/:run_id/results',
      {
        ...writer,
        // A long create (chunks of their own transactions): its key is recorded with the last chunk.
        config: { idempotent: 'deferred' },
        bodyLimit: MAX_RESULTS_BODY_BYTES,
        schema: {
          params: RunParams,
          querystring: ProjectQuery,
          body: WriteResultsBody,
          response: { 200: writtenAsText(ResultsWrittenAnswer) },
        },
      },
      async (request, reply) => {
        if (request.body.results.length > MAX_RESULTS_PER_REQUEST) {
          throw new PayloadTooLargeError(
            `at most ${MAX_RESULTS_PER_REQUEST} results per request; this request has ${request.body.results.length}`,
          );
        }
        const scope = await project(request, request.body.project_id);
        const answer = await storing(request, () =>
          writeResults(ctx, scope.projectId, request.params.run_id, request.body.results),
        );
        return reply.type('application/json; charset=utf-8').send(answer);
      },
    );
  });

  r.post(
    '/evaluation-runs/:run_id/complete',
    {
      ...writer,
      config: { idempotent: true },
      schema: { params: RunParams, querystring: ProjectQuery, body: CompleteBody, response: { 200: RunSummaryAnswer } },
    },
    async (request) => {
      const scope = await project(request, request.body?.project_id);
      return completeRun(ctx, scope.projectId, request.params.run_id, request.body?.status);
    },
  );

  r.get(
    '/evaluation-runs/:run_id',
    { ...reader, schema: { params: RunParams, querystring: ProjectQuery, response: { 200: RunSummaryAnswer } } },
    async (request) => {
      const scope = await project(request);
      return getRunSummary(ctx.pg.pool, ctx.config, scope.projectId, request.params.run_id);
    },
  );

  r.get(
    '/evaluation-runs/:run_id/compare',
    { ...reader, schema: { params: RunParams, querystring: CompareQuery, response: { 200: RunComparisonAnswer } } },
    async (request) => {
      const scope = await project(request);
      const { other, threshold, limit, cursor } = request.query;
      return compareRuns(ctx, scope.projectId, request.params.run_id, other, { threshold, limit, cursor });
    },
  );
}

/** A store failure while writing results: 503 so the producer retries (nothing was committed). */
async function storing<T>(request: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    // A key a duplicate recorded first is the idempotency plugin's to answer (nothing failed).
    if (error instanceof AppError || error instanceof KeyTakenError) throw error;
    request.log.error({ err: error }, 'storing evaluation results failed');
    throw new ServiceUnavailableError('the results could not be stored; retry the request');
  }
}
