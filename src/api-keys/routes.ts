import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { apiKeyOf, authenticate, userOf } from '../auth/principal.js';
import { createApiKey, listApiKeys, revokeApiKey, whoami } from './service.js';
import { ApiKeyCreatedAnswer, ApiKeyListAnswer, ApiKeyRevokedAnswer, WhoamiAnswer } from './answers.js';

const ProjectParams = z.object({ project_id: z.string().min(1) });
const CreateKeyBody = z.object({
  name: z.string().trim().min(1).max(200),
  expires_at: z.iso
    .datetime({ offset: true })
    .refine((v) => Date.parse(v) > Date.now(), 'expires_at must be in the future')
    .optional(),
});

export function registerApiKeyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const user = { onRequest: authenticate(ctx, 'user') };

  r.post(
    '/projects/:project_id/api-keys',
    {
      ...user,
      config: { idempotent: true },
      schema: { params: ProjectParams, body: CreateKeyBody, response: { 201: ApiKeyCreatedAnswer } },
    },
    async (request, reply) =>
      reply.status(201).send(await createApiKey(ctx, userOf(request), request.params.project_id, request.body)),
  );

  r.get(
    '/projects/:project_id/api-keys',
    { ...user, schema: { params: ProjectParams, response: { 200: ApiKeyListAnswer } } },
    async (request) => listApiKeys(ctx, userOf(request), request.params.project_id),
  );

  r.delete(
    '/projects/:project_id/api-keys/:key_id',
    {
      ...user,
      schema: { params: ProjectParams.extend({ key_id: z.string().min(1) }), response: { 200: ApiKeyRevokedAnswer } },
    },
    async (request) => revokeApiKey(ctx, userOf(request), request.params.project_id, request.params.key_id),
  );

  r.get(
    '/whoami',
    { onRequest: authenticate(ctx, 'api_key'), schema: { response: { 200: WhoamiAnswer } } },
    async (request) => whoami(apiKeyOf(request)),
  );
}
