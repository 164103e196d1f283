import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { authenticate, principalOf, type Principal } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { roleRefusal } from '../auth/roles.js';
import { IsoDateTime, isoToEpochMs, Pagination, ProjectQuery, QueryInt, StoredText } from '../edge-schemas.js';
import { BadRequestError, ForbiddenError } from '../errors.js';
import { Deleted } from '../answer-schemas.js';
import {
  createVersion,
  deletePrompt,
  fetchVersion,
  getVersion,
  LATEST,
  listPrompts,
  listVersions,
  matchesEtag,
  promptMetrics,
  setLabels,
  type Mover,
} from './service.js';
import { compilePrompt } from './compile.js';
import {
  CompiledPromptAnswer,
  PromptListAnswer,
  PromptMetricsAnswer,
  PromptVersionAnswer,
  PromptVersionListAnswer,
} from './answers.js';

/** 1-256 characters; `/` separates folders, so no empty folder (`a//b`, a leading or trailing `/`). */
const Name = StoredText(1, 256).refine(
  (name) => name.split('/').every((part) => part.trim() !== ''),
  'a prompt name has no empty folder: no leading, trailing or doubled `/`',
);
const Label = z
  .string()
  .regex(/^[a-z0-9_.-]{1,36}$/, 'a label is 1-36 of a-z, 0-9, `_`, `.` and `-`')
  .refine((label) => label !== LATEST, "'latest' is always the newest version and can't be set");
const Labels = z.array(Label).max(50);
const ChatMessage = z.object({ role: StoredText(1, 64), content: StoredText(0, 1_000_000) });
const Variables = z.record(z.string(), z.unknown());

const CreateBody = z
  .object({
    project_id: z.string().optional(),
    name: Name,
    type: z.enum(['text', 'chat']),
    prompt: z.union([StoredText(0, 1_000_000), z.array(ChatMessage).max(1000)]),
    config: z.record(z.string(), z.unknown()).optional(),
    labels: Labels.optional(),
    commit_message: StoredText(0, 2000).nullish(),
  })
  .refine((body) => (body.type === 'text') === (typeof body.prompt === 'string'), {
    message: 'a text prompt is a string; a chat prompt is an array of {role, content}',
    path: ['prompt'],
  });

const OneVersion = { version: QueryInt(1, 2_147_483_647).optional(), label: z.string().min(1).max(36).optional() };
const bothNamed = (v: { version?: number | undefined; label?: string | undefined }) =>
  v.version === undefined || v.label === undefined;
const BOTH_NAMED = { message: 'name a version or a label, not both', path: ['label'] };

const GetQuery = ProjectQuery.extend(OneVersion).refine(bothNamed, BOTH_NAMED);
const ListQuery = ProjectQuery.extend(Pagination.shape);
const NameParams = z.object({ name: Name });
const VersionParams = NameParams.extend({ version: QueryInt(1, 2_147_483_647) });
const LabelsBody = z.object({ project_id: z.string().optional(), labels: Labels });
const CompileBody = z
  .object({
    project_id: z.string().optional(),
    variables: Variables.default({}),
    version: z.number().int().min(1).optional(),
    label: z.string().min(1).max(36).optional(),
  })
  .refine(bothNamed, BOTH_NAMED);
const DeleteQuery = ProjectQuery;
const MetricsQuery = ProjectQuery.extend({ start_time: IsoDateTime.optional(), end_time: IsoDateTime.optional() });
/** The window of a comparison without one: the last 7 days. */
const DEFAULT_METRICS_WINDOW_MS = 7 * 86_400_000;

const NOT_MODIFIED = z.null().describe('Not Modified: `If-None-Match` names the current ETag (no body)');

/** Who may move `production` and delete: a user with ADMIN; an API key never (it counts as MEMBER). */
async function moverOf(ctx: AppContext, principal: Principal, projectId: string | undefined): Promise<Mover> {
  if (principal.kind === 'api_key') return { createdBy: `api_key:${principal.keyId}`, admin: false };
  const admin = await resolveReadProject(ctx, principal, projectId, 'ADMIN').then(
    () => true,
    () => false,
  );
  return { createdBy: `user:${principal.userId}`, admin };
}

/**
 * Prompts (docs/prompts.md): reads take any credential (VIEWER+), writes MEMBER+ (an API key may
 * write); moving `production` and deleting need a user with ADMIN. Names with `/` are addressed
 * URL-encoded (`/prompts/support%2Fgreeting`).
 */
export function registerPromptRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const any = { onRequest: authenticate(ctx, 'any') };
  const project = (
    request: FastifyRequest & { query: { project_id?: string } },
    fromBody?: string,
    minRole?: 'MEMBER',
  ) => resolveReadProject(ctx, principalOf(request), fromBody ?? request.query.project_id, minRole);

  r.get(
    '/prompts',
    { ...any, schema: { querystring: ListQuery, response: { 200: PromptListAnswer } } },
    async (request) => {
      const scope = await project(request);
      return listPrompts(ctx.pg.pool, scope.projectId, request.query.limit, request.query.page);
    },
  );

  r.post(
    '/prompts',
    {
      ...any,
      config: { idempotent: true },
      schema: { querystring: ProjectQuery, body: CreateBody, response: { 201: PromptVersionAnswer } },
    },
    async (request, reply) => {
      const projectId = request.body.project_id ?? request.query.project_id;
      const scope = await project(request, projectId, 'MEMBER');
      const mover = await moverOf(ctx, principalOf(request), projectId);
      return reply.status(201).send(await createVersion(ctx, scope.projectId, request.body, mover));
    },
  );

  r.get(
    '/prompts/:name',
    {
      ...any,
      schema: {
        description:
          'Without `version` or `label`: the version labelled `production`, else the newest. Answers an `ETag`; ' +
          'a request whose `If-None-Match` names it is answered 304 without a body.',
        params: NameParams,
        querystring: GetQuery,
        response: { 200: PromptVersionAnswer, 304: NOT_MODIFIED },
      },
    },
    async (request, reply) => {
      const scope = await project(request);
      const { version, label } = request.query;
      const { answer, etag } = await fetchVersion(ctx, scope.projectId, request.params.name, { version, label });
      reply.header('etag', etag).header('cache-control', 'private, no-cache');
      if (matchesEtag(request.headers['if-none-match'], etag))
        return reply.status(304).send(undefined as unknown as null);
      return answer;
    },
  );

  r.get(
    '/prompts/:name/versions',
    { ...any, schema: { params: NameParams, querystring: ListQuery, response: { 200: PromptVersionListAnswer } } },
    async (request) => {
      const scope = await project(request);
      const { limit, page } = request.query;
      return listVersions(ctx.pg.pool, scope.projectId, request.params.name, limit, page);
    },
  );

  r.patch(
    '/prompts/:name/versions/:version',
    {
      ...any,
      schema: {
        description:
          "Sets the version's labels to exactly `labels`: each moves here from the version it was on, and a label " +
          'on this version that is not listed comes off. Moving `production` on or off needs ADMIN.',
        params: VersionParams,
        querystring: ProjectQuery,
        body: LabelsBody,
        response: { 200: PromptVersionAnswer },
      },
    },
    async (request) => {
      const projectId = request.body.project_id ?? request.query.project_id;
      const scope = await project(request, projectId, 'MEMBER');
      const mover = await moverOf(ctx, principalOf(request), projectId);
      const { name, version } = request.params;
      return setLabels(ctx, scope.projectId, name, version, request.body.labels, mover);
    },
  );

  r.delete(
    '/prompts/:name',
    { ...any, schema: { params: NameParams, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => {
      const principal = principalOf(request);
      if (principal.kind === 'api_key') throw new ForbiddenError(roleRefusal('ADMIN'));
      const scope = await resolveReadProject(ctx, principal, request.query.project_id, 'ADMIN');
      return deletePrompt(ctx, scope.projectId, request.params.name);
    },
  );

  r.get(
    '/prompts/:name/metrics',
    {
      ...any,
      schema: {
        description:
          'The versions side by side over a window (default: the 7 days before `end_time`, itself default now): per ' +
          'version, the traces and spans naming it, latency p50/p95, cost, tokens and error rate.',
        params: NameParams,
        querystring: MetricsQuery,
        response: { 200: PromptMetricsAnswer },
      },
    },
    async (request) => {
      const scope = await project(request);
      const endMs = request.query.end_time ? isoToEpochMs(request.query.end_time) : Date.now();
      const startMs = request.query.start_time
        ? isoToEpochMs(request.query.start_time)
        : endMs - DEFAULT_METRICS_WINDOW_MS;
      if (startMs >= endMs) throw new BadRequestError('start_time must be before end_time');
      return promptMetrics(ctx, scope.projectId, request.params.name, startMs, endMs);
    },
  );

  r.post(
    '/prompts/:name/compile',
    {
      ...any,
      schema: {
        description:
          'Fills the `{{variable}}` placeholders of a version (chosen as by GET /prompts/{name}); a variable ' +
          'the prompt names and `variables` lacks is a 422 naming it. Values that are not strings are filled as JSON.',
        params: NameParams,
        querystring: ProjectQuery,
        body: CompileBody,
        response: { 200: CompiledPromptAnswer },
      },
    },
    async (request) => {
      const scope = await project(request, request.body.project_id ?? request.query.project_id);
      const { version, label, variables } = request.body;
      const found = await getVersion(ctx.pg.pool, scope.projectId, request.params.name, { version, label });
      return { prompt: compilePrompt(found.prompt, variables) };
    },
  );
}
