import type { AppContext } from '../context.js';
import { costOf, priceBookOf } from '../model-prices/pricing.js';

/**
 * What a judge call cost (docs/evaluators.md, "What a judge call costs"): its tokens priced with the
 * project's model price table (overrides over the defaults), as a span of that model would be; 0 when
 * the table has no price for the model.
 */
export async function judgeCost(
  ctx: AppContext,
  projectId: string,
  model: string,
  inputTokens: number,
  outputTokens: number,
): Promise<number> {
  const entry = (await priceBookOf(ctx.pg).tableFor(projectId)).lookup(model);
  if (!entry) return 0;
  return costOf(entry, {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    reasoning_tokens: 0,
  });
}
