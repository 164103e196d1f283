import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { ProjectQuery } from '../edge-schemas.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { DETECTOR_TYPES, parseConfig } from './config.js';
import { createDetector, deleteDetector, getDetector, listDetectors, updateDetector } from './service.js';
import { Deleted } from '../answer-schemas.js';
import { DetectorAnswer, DetectorListAnswer } from './answers.js';

/** Reads: any credential (a user's needs `project_id`). */
const ReadQuery = ProjectQuery;
/** Writes name the project in the body, or in the query on delete (docs/authentication.md, rule 3). */
const DeleteQuery = z.object({ project_id: z.string().min(1) });
const Params = z.object({ detector_id: z.string().min(1) });

const Name = z.string().trim().min(1).max(200);
const Type = z.enum(DETECTOR_TYPES);
// `config` is checked against `type` (422 at body.config…); `{}` is a whole error detector's config.
const CreateBody = z
  .object({
    project_id: z.string().min(1),
    name: Name,
    type: Type,
    config: z.unknown().optional(),
    enabled: z.boolean().optional(),
  })
  .superRefine((body, ctx) => {
    const parsed = parseConfig(body.type, body.config);
    if (!parsed.ok)
      for (const issue of parsed.issues) ctx.addIssue({ ...issue, path: ['config', ...issue.path] } as never);
  });
// The resulting type and config are checked together in the service, which knows the stored ones.
const UpdateBody = z.object({
  project_id: z.string().min(1),
  name: Name.optional(),
  type: Type.optional(),
  config: z.unknown().optional(),
  enabled: z.boolean().optional(),
});

/** Detectors (docs/signals.md): a catalog per project, read with either credential, written by MEMBER+. */
export function registerDetectorRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  // Writes refuse API keys with 403 (docs/authentication.md, rule 2); the role is checked by the service.
  const writer = { onRequest: authenticate(ctx, 'user') };

  r.get(
    '/detectors',
    { ...reader, schema: { querystring: ReadQuery, response: { 200: DetectorListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listDetectors(ctx.pg.pool, scope.projectId);
    },
  );

  r.get(
    '/detectors/:detector_id',
    { ...reader, schema: { params: Params, querystring: ReadQuery, response: { 200: DetectorAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return getDetector(ctx.pg.pool, scope.projectId, request.params.detector_id);
    },
  );

  // 201 like every other create of the catalog (dashboards, widgets, alerts).
  r.post(
    '/detectors',
    { ...writer, config: { idempotent: true }, schema: { body: CreateBody, response: { 201: DetectorAnswer } } },
    async (request, reply) => reply.status(201).send(await createDetector(ctx, userOf(request), request.body)),
  );

  r.patch(
    '/detectors/:detector_id',
    { ...writer, schema: { params: Params, body: UpdateBody, response: { 200: DetectorAnswer } } },
    async (request) => updateDetector(ctx, userOf(request), request.params.detector_id, request.body),
  );

  r.delete(
    '/detectors/:detector_id',
    { ...writer, schema: { params: Params, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => deleteDetector(ctx, userOf(request), request.params.detector_id, request.query.project_id),
  );
}
