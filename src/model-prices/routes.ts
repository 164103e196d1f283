import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { ProjectQuery } from '../edge-schemas.js';
import { typed } from '../http.js';
import { authenticate, principalOf, userOf } from '../auth/principal.js';
import { resolveReadProject } from '../auth/access.js';
import { Deleted } from '../answer-schemas.js';
import { canonicalModel } from './matcher.js';
import { createOverride, deleteOverride, listModelPrices, updateOverride } from './service.js';
import { ModelPriceAnswer, ModelPriceListAnswer } from './answers.js';

/** Reads: any credential (a user's needs `project_id`); `model` asks which price applies to a model name. */
const ReadQuery = ProjectQuery.extend({ model: z.string().min(1).max(1024).optional() });
/** Writes name the project in the body, or in the query on delete (docs/authentication.md, rule 3). */
const DeleteQuery = z.object({ project_id: z.string().min(1) });
const Params = z.object({ price_id: z.string().min(1) });

/** Prices past a million dollars per million tokens are a typo, not a price. */
const PerMillion = z.number().min(0).max(1_000_000);
const Pattern = z
  .string()
  .trim()
  .min(1)
  .max(256)
  .refine((p) => canonicalModel(p) !== '', 'the pattern names no model (docs/model-prices.md, "Matching")');
const Prices = {
  input_per_million: PerMillion,
  output_per_million: PerMillion,
  cached_input_per_million: PerMillion.nullish(),
  cache_write_per_million: PerMillion.nullish(),
  reasoning_per_million: PerMillion.nullish(),
};
const Currency = z.literal('USD').optional();
const CreateBody = z.object({ project_id: z.string().min(1), model_pattern: Pattern, ...Prices, currency: Currency });
const UpdateBody = z.object({
  project_id: z.string().min(1),
  model_pattern: Pattern.optional(),
  input_per_million: PerMillion.optional(),
  output_per_million: PerMillion.optional(),
  cached_input_per_million: Prices.cached_input_per_million,
  cache_write_per_million: Prices.cache_write_per_million,
  reasoning_per_million: Prices.reasoning_per_million,
  currency: Currency,
});

/** Model prices (docs/model-prices.md): the default table and the project's overrides, read with either credential, written by MEMBER+. */
export function registerModelPriceRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);
  const reader = { onRequest: authenticate(ctx, 'any') };
  // Writes refuse API keys with 403 (docs/authentication.md, rule 2); the role is checked by the service.
  const writer = { onRequest: authenticate(ctx, 'user') };

  r.get(
    '/model-prices',
    { ...reader, schema: { querystring: ReadQuery, response: { 200: ModelPriceListAnswer } } },
    async (request) => {
      const scope = await resolveReadProject(ctx, principalOf(request), request.query.project_id);
      return listModelPrices(ctx.pg.pool, scope.projectId, request.query.model);
    },
  );

  r.post(
    '/model-prices',
    { ...writer, config: { idempotent: true }, schema: { body: CreateBody, response: { 201: ModelPriceAnswer } } },
    async (request, reply) => reply.status(201).send(await createOverride(ctx, userOf(request), request.body)),
  );

  r.patch(
    '/model-prices/:price_id',
    { ...writer, schema: { params: Params, body: UpdateBody, response: { 200: ModelPriceAnswer } } },
    async (request) => updateOverride(ctx, userOf(request), request.params.price_id, request.body),
  );

  r.delete(
    '/model-prices/:price_id',
    { ...writer, schema: { params: Params, querystring: DeleteQuery, response: { 200: Deleted } } },
    async (request) => deleteOverride(ctx, userOf(request), request.params.price_id, request.query.project_id),
  );
}
