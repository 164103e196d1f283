import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import type { Role } from '../auth/roles.js';
import { IsoDateOrDateTime, isoToEpochMs, Pagination, ProjectQuery, StoredText } from '../edge-schemas.js';
import { Deleted } from '../answer-schemas.js';
import { PredicateSchema } from '../query/predicates.js';
import { MAX_FILTERS } from '../traces/filters.js';
import { MAX_COMMENT_LENGTH } from '../scores/input.js';
import { MAX_COMMENT_TEXT } from '../comments/service.js';
import {
  AnnotationCompleteAnswer,
  AnnotationDatasetAnswer,
  AnnotationItemAnswer,
  AnnotationItemListAnswer,
  AnnotationItemsAddAnswer,
  AnnotationNextAnswer,
  AnnotationQueueAnswer,
  AnnotationQueueListAnswer,
  ITEM_STATUSES,
} from './answers.js';
import {
  addItemToDataset,
  addItems,
  claimNext,
  completeItem,
  createQueue,
  deleteItem,
  deleteQueue,
  DEFAULT_FILL_LIMIT,
  getQueue,
  listItems,
  listQueues,
  MAX_ITEMS_PER_REQUEST,
  MAX_QUEUE_CONFIGS,
  patchQueue,
  releaseItem,
} from './service.js';

/**
 * Annotation queues (quality.md §3; docs/annotation.md). Queues and items: an API key or a user
 * credential, reads VIEWER+, writes MEMBER+. Review (`next`, `complete`, `release`): a user
 * credential, MEMBER+ (a score by a person has that person as its author).
 */

const Id = z.string().min(1).max(64);
const TraceRef = StoredText(1, 256);
const ConfigIds = z.array(z.string().min(1).max(64)).min(1).max(MAX_QUEUE_CONFIGS);
const CreateBody = z.object({
  project_id: z.string().optional(),
  name: StoredText(1, 128).refine((n) => n.trim() !== '', 'a name needs some text'),
  description: StoredText(0, 4096).nullish(),
  score_config_ids: ConfigIds,
});
const PatchBody = z.object({
  project_id: z.string().optional(),
  name: StoredText(1, 128)
    .refine((n) => n.trim() !== '', 'a name needs some text')
    .optional(),
  description: StoredText(0, 4096).nullish(),
  score_config_ids: ConfigIds.optional(),
});
const ItemsBody = z
  .object({
    project_id: z.string().optional(),
    items: z
      .array(z.object({ trace_id: TraceRef, span_id: TraceRef.nullish() }))
      .min(1)
      .max(MAX_ITEMS_PER_REQUEST)
      .optional()
      .describe('the traces (or spans of them) to add; or give `filters`'),
    filters: z
      .array(PredicateSchema)
      .max(MAX_FILTERS)
      .optional()
      .describe('add the traces the trace list gives for these predicates (docs/filters.md); or give `items`'),
    start_after: IsoDateOrDateTime.optional().describe('with `filters`: traces started at or after this time'),
    start_before: IsoDateOrDateTime.optional().describe('with `filters`: traces started before this time'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_ITEMS_PER_REQUEST)
      .optional()
      .describe(`with \`filters\`: at most this many traces, newest first (default ${DEFAULT_FILL_LIMIT})`),
  })
  .superRefine((b, ctx) => {
    if ((b.items === undefined) === (b.filters === undefined))
      ctx.addIssue({ code: 'custom', path: ['items'], message: 'give either items or filters' });
    else if (b.items && (b.start_after ?? b.start_before ?? b.limit) !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['items'],
        message: 'start_after, start_before and limit go with filters, not items',
      });
  });
const ItemsQuery = ProjectQuery.extend({ status: z.enum(ITEM_STATUSES).optional() }).extend(Pagination.shape);
const NextBody = z
  .object({
    project_id: z.string().optional(),
    exclude_item_ids: z
      .array(Id)
      .max(1000)
      .optional()
      .describe('items to pass over (the ones the reviewer skipped this sitting)'),
  })
  .nullish();
const CompleteBody = z.object({
  project_id: z.string().optional(),
  scores: z
    .array(
      z.object({
        config_id: Id,
        value: z.number().refine(Number.isFinite, 'Input should be a finite number').optional(),
        string_value: z.string().min(1).max(256).optional(),
        comment: StoredText(0, MAX_COMMENT_LENGTH).optional(),
      }),
    )
    .max(MAX_QUEUE_CONFIGS),
  comment: StoredText(0, MAX_COMMENT_TEXT).optional().describe('a comment on the trace (or span), by the reviewer'),
});
const DatasetBody = z.object({
  project_id: z.string().optional(),
  dataset_id: Id,
  label: StoredText(1, 200).nullish(),
  expected: z
    .unknown()
    .optional()
    .describe("the case's expected output (any JSON); left out, the trace's (or span's) output is copied"),
});
const ReleaseBody = z.object({ project_id: z.string().optional() }).nullish();
const QueueParams = z.object({ queue_id: Id });
const ItemParams = z.object({ queue_id: Id, item_id: Id });
const ListQuery = ProjectQuery.extend(Pagination.shape);

export function registerAnnotationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  const user = { onRequest: authenticate(ctx, 'user') };
  const scope = (request: FastifyRequest & { query: { project_id?: string } }, role: Role, fromBody?: string | null) =>
    resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, role);
  const db = ctx.pg.pool;

  r.post(
    '/annotation-queues',
    {
      ...any,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBody, response: { 201: AnnotationQueueAnswer } },
    },
    async (request, reply) => {
      const project = await scope(request, 'MEMBER', request.body.project_id);
      const principal = principalOf(request);
      const by = principal.kind === 'user' ? principal.userId : null;
      return reply.status(201).send(await createQueue(db, project.projectId, by, request.body));
    },
  );

  r.get(
    '/annotation-queues',
    { ...any, schema: { querystring: ListQuery, response: { 200: AnnotationQueueListAnswer } } },
    async (request) =>
      listQueues(db, (await scope(request, 'VIEWER')).projectId, request.query.limit, request.query.page),
  );

  r.get(
    '/annotation-queues/:queue_id',
    { ...any, schema: { params: QueueParams, querystring: ProjectQuery, response: { 200: AnnotationQueueAnswer } } },
    async (request) => getQueue(db, (await scope(request, 'VIEWER')).projectId, request.params.queue_id),
  );

  r.patch(
    '/annotation-queues/:queue_id',
    {
      ...any,
      schema: {
        params: QueueParams,
        querystring: ProjectQuery,
        body: PatchBody,
        response: { 200: AnnotationQueueAnswer },
      },
    },
    async (request) => {
      const project = await scope(request, 'MEMBER', request.body.project_id);
      return patchQueue(db, project.projectId, request.params.queue_id, request.body);
    },
  );

  r.delete(
    '/annotation-queues/:queue_id',
    { ...any, schema: { params: QueueParams, querystring: ProjectQuery, response: { 200: Deleted } } },
    async (request) => deleteQueue(db, (await scope(request, 'MEMBER')).projectId, request.params.queue_id),
  );

  r.post(
    '/annotation-queues/:queue_id/items',
    {
      ...any,
      config: { idempotent: true },
      schema: {
        params: QueueParams,
        querystring: ProjectQuery,
        body: ItemsBody,
        response: { 201: AnnotationItemsAddAnswer },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const project = await scope(request, 'MEMBER', b.project_id);
      const input = b.items
        ? { items: b.items }
        : {
            filters: b.filters ?? [],
            startAfterMs: b.start_after === undefined ? undefined : isoToEpochMs(b.start_after),
            startBeforeMs: b.start_before === undefined ? undefined : isoToEpochMs(b.start_before),
            limit: b.limit ?? DEFAULT_FILL_LIMIT,
          };
      return reply.status(201).send(await addItems(ctx, project.projectId, request.params.queue_id, input));
    },
  );

  r.get(
    '/annotation-queues/:queue_id/items',
    {
      ...any,
      schema: { params: QueueParams, querystring: ItemsQuery, response: { 200: AnnotationItemListAnswer } },
    },
    async (request) => {
      const q = request.query;
      const project = await scope(request, 'VIEWER');
      return listItems(db, project.projectId, request.params.queue_id, q.status, q.limit, q.page);
    },
  );

  r.delete(
    '/annotation-queues/:queue_id/items/:item_id',
    {
      ...any,
      schema: { params: ItemParams, querystring: ProjectQuery, response: { 204: z.undefined().describe('deleted') } },
    },
    async (request, reply) => {
      const project = await scope(request, 'MEMBER');
      await deleteItem(db, project.projectId, request.params.queue_id, request.params.item_id);
      return reply.status(204).send(undefined);
    },
  );

  r.post(
    '/annotation-queues/:queue_id/next',
    {
      ...user,
      schema: {
        params: QueueParams,
        querystring: ProjectQuery,
        body: NextBody,
        response: { 200: AnnotationNextAnswer, 204: z.undefined().describe('no pending item is free') },
      },
    },
    async (request, reply) => {
      const reviewer = userOf(request);
      const project = await scope(request, 'MEMBER', request.body?.project_id);
      const next = await claimNext(
        ctx,
        project.projectId,
        request.params.queue_id,
        reviewer.userId,
        request.body?.exclude_item_ids ?? [],
      );
      return next ? next : reply.status(204).send(undefined);
    },
  );

  r.post(
    '/annotation-queues/:queue_id/items/:item_id/complete',
    {
      ...user,
      schema: {
        params: ItemParams,
        querystring: ProjectQuery,
        body: CompleteBody,
        response: { 200: AnnotationCompleteAnswer },
      },
    },
    async (request) => {
      const reviewer = userOf(request);
      const project = await scope(request, 'MEMBER', request.body.project_id);
      const { queue_id: queueId, item_id: itemId } = request.params;
      return completeItem(ctx, project, queueId, itemId, reviewer.userId, request.body);
    },
  );

  r.post(
    '/annotation-queues/:queue_id/items/:item_id/release',
    {
      ...user,
      schema: {
        params: ItemParams,
        querystring: ProjectQuery,
        body: ReleaseBody,
        response: { 200: AnnotationItemAnswer },
      },
    },
    async (request) => {
      const reviewer = userOf(request);
      const project = await scope(request, 'MEMBER', request.body?.project_id);
      const { queue_id: queueId, item_id: itemId } = request.params;
      return releaseItem(db, project.projectId, queueId, itemId, reviewer.userId);
    },
  );

  // Beside the spec (the review screen's "add to dataset"): a reviewer, signed in, makes the next
  // version of a dataset with the item's trace added; dataset authoring routes take API keys only.
  r.post(
    '/annotation-queues/:queue_id/items/:item_id/add-to-dataset',
    {
      ...user,
      config: { idempotent: true },
      schema: {
        params: ItemParams,
        querystring: ProjectQuery,
        body: DatasetBody,
        response: { 201: AnnotationDatasetAnswer },
      },
    },
    async (request, reply) => {
      userOf(request);
      const b = request.body;
      const project = await scope(request, 'MEMBER', b.project_id);
      const { queue_id: queueId, item_id: itemId } = request.params;
      const made = await addItemToDataset(ctx, project.projectId, queueId, itemId, {
        dataset_id: b.dataset_id,
        label: b.label,
        expected: b.expected,
        hasExpected: Object.hasOwn(b, 'expected'),
      });
      return reply.status(201).send(made);
    },
  );
}
