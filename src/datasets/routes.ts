import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { PayloadTooLargeError } from '../errors.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { Pagination, ProjectQuery, QueryInt, StoredText } from '../edge-schemas.js';
import { keepRawJson } from '../raw-json-body.js';
import { createDataset, createVersion, getDataset, listDatasets, updateDataset } from './service.js';
import {
  keepsVersionValue,
  MAX_TEST_CASES_PER_VERSION,
  MAX_VERSION_BODY_BYTES,
  validateTestCases,
  VersionBody,
} from './test-case-input.js';
import { DEFAULT_PAGE_LIMIT, findVersion, pageOfVersion, streamVersion } from './version-read.js';
import { writtenAsText } from '../answer-schemas.js';
import { MIB } from '../query/limits.js';
import { answerOfReference, MAX_RESOLVED_VERSION_BYTES } from './version-write.js';
import { DatasetDetailAnswer, DatasetListAnswer, DatasetVersionAnswer } from './answers.js';

const ListQuery = ProjectQuery.extend(Pagination.shape);
const VersionQuery = ProjectQuery.extend({
  limit: QueryInt(1, 1000).optional(),
  cursor: z.string().min(1).max(64).optional(),
});

const DatasetParams = z.object({ dataset_id: z.string().min(1).max(64) });
const VersionParams = z.object({ version_id: z.string().min(1).max(64) });

const Name = StoredText(1, 200)
  .transform((s) => s.trim())
  .pipe(z.string().min(1));
const Description = StoredText(0, 4000);
const CreateBody = z.object({ name: Name, description: Description.nullish(), project_id: z.string().optional() });
const UpdateBody = z.object({
  name: Name.optional(),
  description: Description.nullish(),
  project_id: z.string().optional(),
});
const VersionCreateBody = VersionBody.extend({ project_id: z.string().optional() });

const JSON_TYPE = 'application/json; charset=utf-8';

const VERSION_CREATE_DESCRIPTION =
  `Creates the next version from 1 to ${MAX_TEST_CASES_PER_VERSION} test cases (body at most ${MAX_VERSION_BODY_BYTES / MIB} MiB). ` +
  'A case without `input` copies it (and `expected`, unless given) from the trace or span named by `source_trace_id`/`source_span_id`. ' +
  `413 when there are too many cases, or when the version resolves to more than ${MAX_RESOLVED_VERSION_BYTES / MIB} MiB with the ` +
  'copied text counted in every case that shows it (measured before anything is copied; the detail names the size and the limit).';

/**
 * Datasets and dataset versions (docs/datasets.md).
 * Authoring takes a project API key only; a user credential there is a 401 (docs/authentication.md,
 * "Which routes take which credential"). Reads take either credential under the `project_id` rules.
 */
export function registerDatasetRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  const author = { onRequest: authenticate(ctx, 'api_key') };
  // An API key's own project (a project_id sent along must match it: 400); a user's named project.
  const project = (request: FastifyRequest & { query: { project_id?: string } }, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id);

  r.get(
    '/datasets',
    { ...reader, schema: { querystring: ListQuery, response: { 200: DatasetListAnswer } } },
    async (request) => {
      const scope = await project(request);
      return listDatasets(ctx.pg.pool, scope.projectId, request.query.limit, request.query.page);
    },
  );

  r.post(
    '/datasets',
    {
      ...author,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBody, response: { 201: DatasetDetailAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, request.body.project_id);
      return reply.status(201).send(await createDataset(ctx, scope.projectId, request.body));
    },
  );

  r.get(
    '/datasets/:dataset_id',
    { ...reader, schema: { params: DatasetParams, querystring: ProjectQuery, response: { 200: DatasetDetailAnswer } } },
    async (request) => {
      const scope = await project(request);
      return getDataset(ctx.pg.pool, scope.projectId, request.params.dataset_id);
    },
  );

  r.patch(
    '/datasets/:dataset_id',
    {
      ...author,
      schema: {
        params: DatasetParams,
        querystring: ProjectQuery,
        body: UpdateBody,
        response: { 200: DatasetDetailAnswer },
      },
    },
    async (request) => {
      const scope = await project(request, request.body.project_id);
      return updateDataset(ctx, scope.projectId, request.params.dataset_id, request.body);
    },
  );

  // Version bodies keep test case values as the caller's JSON text (raw-json.ts), in a child context
  // of their own so no other route's JSON parsing changes.
  app.register(async (child) => {
    keepRawJson(child, keepsVersionValue, MAX_VERSION_BODY_BYTES);
    typed(child).post(
      '/datasets/:dataset_id/versions',
      {
        ...author,
        // A long create: it never holds the store, and records its key as it numbers the version.
        config: {
          idempotent: 'deferred',
          replayReference: async (reference) => ({
            contentType: JSON_TYPE,
            body: Readable.from(await answerOfReference(ctx, reference)),
          }),
        },
        bodyLimit: MAX_VERSION_BODY_BYTES,
        schema: {
          description: VERSION_CREATE_DESCRIPTION,
          params: DatasetParams,
          querystring: ProjectQuery,
          body: VersionCreateBody,
          response: { 201: writtenAsText(DatasetVersionAnswer) },
        },
      },
      async (request, reply) => {
        // The count is the headline problem of an oversized request: said before any case is judged.
        if (request.body.test_cases.length > MAX_TEST_CASES_PER_VERSION) {
          throw new PayloadTooLargeError(
            `at most ${MAX_TEST_CASES_PER_VERSION} test cases per version; this request has ${request.body.test_cases.length}`,
          );
        }
        const scope = await project(request, request.body.project_id);
        const cases = validateTestCases(request.body.test_cases);
        const body = await createVersion(ctx, scope.projectId, request.params.dataset_id, request.body.label, cases);
        return reply.status(201).type(JSON_TYPE).send(Readable.from(body));
      },
    );
  });

  r.get(
    '/dataset-versions/:version_id',
    {
      ...reader,
      schema: {
        params: VersionParams,
        querystring: VersionQuery,
        response: { 200: writtenAsText(DatasetVersionAnswer) },
      },
    },
    async (request, reply) => {
      const scope = await project(request);
      const head = await findVersion(ctx.pg.pool, scope.projectId, request.params.version_id);
      const { limit, cursor } = request.query;
      // Paging is opt-in (the released SDKs read a version in one request and never follow next_cursor).
      if (limit === undefined && cursor === undefined)
        return reply.type(JSON_TYPE).send(Readable.from(streamVersion(ctx.pg.pool, head)));
      return reply.type(JSON_TYPE).send(await pageOfVersion(ctx, head, limit ?? DEFAULT_PAGE_LIMIT, cursor));
    },
  );
}
