import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import type { Role } from '../auth/roles.js';
import { HttpUrl, IsoDateTime, Pagination, ProjectQuery, QueryInt, StoredText } from '../edge-schemas.js';
import { Deleted } from '../answer-schemas.js';
import { PredicateSchema } from '../query/predicates.js';
import { EXPORT_FORMATS, EXPORT_KINDS } from '../query/exports.js';
import { MAX_FILTERS } from '../traces/filters.js';
import {
  ExportAnswer,
  ExportBucketAnswer,
  ExportBucketListAnswer,
  ExportCreatedAnswer,
  ExportListAnswer,
  ExportScheduleAnswer,
  ExportScheduleListAnswer,
} from './answers.js';
import { createExport, getExport, listExports, openDownload } from './service.js';
import { createBucket, deleteBucket, listBuckets } from './buckets.js';
import { createSchedule, deleteSchedule, getSchedule, listSchedules } from './schedules.js';

/**
 * Exports, export buckets and schedules (docs/exports.md; quality.md §6). Exports: an API key or a
 * user credential, MEMBER+ for every route (an export is the project's data in bulk). Buckets: user
 * credentials, ADMIN to create or delete, MEMBER+ to list. Schedules: user credentials, ADMIN to create
 * or delete (they write to a bucket every day), MEMBER+ to read.
 */

const ProjectInBody = { project_id: z.string().optional() };
const Filters = z.array(PredicateSchema).max(MAX_FILTERS);

const OutboundUrl = HttpUrl('must be an absolute http(s) URL without credentials');

const CreateExportBody = z.object({
  ...ProjectInBody,
  kind: z.enum(EXPORT_KINDS),
  format: z.enum(EXPORT_FORMATS),
  start_time: IsoDateTime,
  end_time: IsoDateTime,
  filters: Filters.nullish(),
  destination: z.object({ bucket_id: z.string().min(1).max(64) }).nullish(),
});

const CreateBucketBody = z.object({
  ...ProjectInBody,
  name: StoredText(1, 128),
  endpoint: OutboundUrl,
  region: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[a-z0-9-]+$/, 'must be a region name (a-z, 0-9, -)'),
  bucket: z
    .string()
    .min(3)
    .max(63)
    .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'must be an S3 bucket name'),
  prefix: z
    .string()
    .max(512)
    .refine((v) => !v.startsWith('/') && !v.includes('\u0000'), 'must not start with / or hold U+0000')
    .nullish(),
  access_key_id: StoredText(1, 256),
  secret_access_key: StoredText(1, 1024),
  force_path_style: z.boolean().nullish(),
});

const CreateScheduleBody = z.object({
  ...ProjectInBody,
  kind: z.enum(EXPORT_KINDS),
  format: z.enum(EXPORT_FORMATS),
  filters: Filters.nullish(),
  bucket_id: z.string().min(1).max(64),
  hour_utc: z.number().int().min(0).max(23),
});

const ListQuery = ProjectQuery.extend(Pagination.shape);
const DownloadQuery = ProjectQuery.extend({ part: QueryInt(1, 1_000_000).optional() });
const ExportParams = z.object({ export_id: z.string().min(1).max(64) });
const BucketParams = z.object({ bucket_id: z.string().min(1).max(64) });
const ScheduleParams = z.object({ schedule_id: z.string().min(1).max(64) });

export function registerExportRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  const user = { onRequest: authenticate(ctx, 'user') };
  const project = (request: FastifyRequest & { query: { project_id?: string } }, role: Role, fromBody?: string) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, role);

  r.post(
    '/exports',
    {
      ...any,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateExportBody, response: { 202: ExportCreatedAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'MEMBER', request.body.project_id);
      return reply.status(202).send(await createExport(ctx, scope.projectId, request.body));
    },
  );

  r.get(
    '/exports',
    { ...any, schema: { querystring: ListQuery, response: { 200: ExportListAnswer } } },
    async (request) => listExports(ctx.pg.pool, (await project(request, 'MEMBER')).projectId, request.query),
  );

  r.get(
    '/exports/:export_id',
    { ...any, schema: { params: ExportParams, querystring: ProjectQuery, response: { 200: ExportAnswer } } },
    async (request) => getExport(ctx.pg.pool, (await project(request, 'MEMBER')).projectId, request.params.export_id),
  );

  r.get(
    '/exports/:export_id/download',
    { ...any, schema: { params: ExportParams, querystring: DownloadQuery } },
    async (request, reply) => {
      const scope = await project(request, 'MEMBER');
      const file = await openDownload(ctx, scope.projectId, request.params.export_id, request.query.part);
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .send(file.body);
    },
  );

  r.post(
    '/export-buckets',
    {
      ...user,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBucketBody, response: { 201: ExportBucketAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'ADMIN', request.body.project_id);
      return reply.status(201).send(await createBucket(ctx, scope.projectId, request.body));
    },
  );

  r.get(
    '/export-buckets',
    { ...user, schema: { querystring: ListQuery, response: { 200: ExportBucketListAnswer } } },
    async (request) => listBuckets(ctx.pg.pool, (await project(request, 'MEMBER')).projectId, request.query),
  );

  r.delete(
    '/export-buckets/:bucket_id',
    { ...user, schema: { params: BucketParams, querystring: ProjectQuery, response: { 200: Deleted } } },
    async (request) => deleteBucket(ctx.pg.pool, (await project(request, 'ADMIN')).projectId, request.params.bucket_id),
  );

  r.post(
    '/export-schedules',
    {
      ...user,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateScheduleBody, response: { 201: ExportScheduleAnswer } },
    },
    async (request, reply) => {
      const scope = await project(request, 'ADMIN', request.body.project_id);
      return reply.status(201).send(await createSchedule(ctx, scope.projectId, request.body));
    },
  );

  r.get(
    '/export-schedules',
    { ...user, schema: { querystring: ListQuery, response: { 200: ExportScheduleListAnswer } } },
    async (request) => listSchedules(ctx.pg.pool, (await project(request, 'MEMBER')).projectId, request.query),
  );

  r.get(
    '/export-schedules/:schedule_id',
    { ...user, schema: { params: ScheduleParams, querystring: ProjectQuery, response: { 200: ExportScheduleAnswer } } },
    async (request) =>
      getSchedule(ctx.pg.pool, (await project(request, 'MEMBER')).projectId, request.params.schedule_id),
  );

  r.delete(
    '/export-schedules/:schedule_id',
    { ...user, schema: { params: ScheduleParams, querystring: ProjectQuery, response: { 200: Deleted } } },
    async (request) =>
      deleteSchedule(ctx.pg.pool, (await project(request, 'ADMIN')).projectId, request.params.schedule_id),
  );
}
