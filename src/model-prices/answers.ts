import { z } from 'zod';
import { DateTime } from '../answer-schemas.js';

/** The answers of the model price routes (docs/model-prices.md). */

const PerMillion = z.number().min(0).describe('USD per million tokens');
const Fallback = (to: string) =>
  PerMillion.nullable().describe(`USD per million tokens; null: the ${to} price applies`);

/** One price: a project override (`source: project`, with its id) or a row of the default table (`id: null`). */
export const ModelPriceAnswer = z
  .object({
    id: z.string().nullable().describe("the override's id; null for a row of the default table"),
    model_pattern: z
      .string()
      .describe(
        'matched against span model names in canonical form (docs/model-prices.md, "Matching"); `*` matches any characters',
      ),
    provider: z
      .string()
      .nullable()
      .describe('the provider or host whose list price a default row is; null for an override'),
    input_per_million: PerMillion,
    output_per_million: PerMillion,
    cached_input_per_million: Fallback('input'),
    cache_write_per_million: Fallback('input'),
    reasoning_per_million: Fallback('output'),
    currency: z.literal('USD'),
    source: z.enum(['default', 'project']),
    created_at: DateTime.nullable(),
    updated_at: DateTime.nullable(),
  })
  .meta({ id: 'ModelPrice' });

/** `GET /model-prices`: the project's overrides first (by pattern), then the default table. */
export const ModelPriceListAnswer = z
  .object({
    as_of: z.string().describe('the date (YYYY-MM-DD) whose list prices the default table holds'),
    sources: z
      .array(z.object({ provider: z.string(), name: z.string() }))
      .describe("the providers' pricing pages the default table follows"),
    data: z.array(ModelPriceAnswer),
    match: ModelPriceAnswer.nullable()
      .optional()
      .describe(
        'only with `?model=`: the price a span of that model is priced with now, one of `data`; null when none matches (cost 0)',
      ),
  })
  .meta({ id: 'ModelPriceList' });
