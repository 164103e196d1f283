/**
 * The default model price table (docs/model-prices.md): USD per million tokens, used for the spans of
 * every project that has no override for the model (src/model-prices/pricing.ts).
 *
 * How it was made, honestly: the prices below are the list prices of the providers' public pricing
 * pages (SOURCES) as they stood on PRICES_AS_OF, written down from what the author knew of those pages
 * on that date; the build had no internet access to re-read them. Prices change: a project that pays
 * something else (a discount, batch, another region, a newer price) sets an override.
 *
 * Conventions of the table:
 * - Patterns are matched in canonical form (matcher.ts): `gpt-4.1` also matches `openai/gpt-4.1-2025-04-14`,
 *   `claude-3-5-sonnet` also matches `us.anthropic.claude-3-5-sonnet-20241022-v2:0`. Dated snapshots share
 *   their family's current price unless the table lists the snapshot (gpt-4o-2024-05-13).
 * - `cached` is the price of a prompt-cache read, `cacheWrite` of a prompt-cache write; `reasoning` is
 *   left out where the provider bills reasoning (thinking) tokens as output tokens, which all of these do.
 *   A missing price falls back: cached and cache write to input, reasoning to output (pricing.ts).
 * - Long-context tiers (Gemini Pro past 200k tokens, Sonnet 4/4.5 past 200k) are not modelled: the table
 *   holds the standard tier.
 * - Open-weight models cost what their host charges. The id usually tells the host apart (Groq's
 *   `llama-3.1-8b-instant`, Together's `Meta-Llama-3.1-8B-Instruct-Turbo`, Fireworks' `llama-v3p1-8b-instruct`,
 *   Bedrock's `meta.llama3-1-8b-instruct-v1:0`); where it doesn't, the entry names the host it follows.
 * - Embedding models have input prices only (output 0).
 */

/** The day the table's prices describe. */
export const PRICES_AS_OF = '2025-11-24';

export type PriceSourceKey = keyof typeof SOURCES;

/** Where the prices come from: the providers' pricing pages. */
export const SOURCES = {
  openai: 'OpenAI API pricing (platform.openai.com/docs/pricing)',
  anthropic: 'Anthropic API pricing (claude.com/pricing, docs.claude.com "Pricing")',
  google: 'Gemini Developer API pricing (ai.google.dev/gemini-api/docs/pricing)',
  mistral: 'Mistral AI pricing (mistral.ai/pricing)',
  groq: 'Groq pricing (groq.com/pricing)',
  together: 'Together AI pricing (together.ai/pricing)',
  fireworks: 'Fireworks AI pricing (fireworks.ai/pricing)',
  bedrock: 'Amazon Bedrock pricing, on-demand, us-east-1 (aws.amazon.com/bedrock/pricing)',
  deepseek: 'DeepSeek API pricing (api-docs.deepseek.com/quick_start/pricing)',
  xai: 'xAI API pricing (docs.x.ai/docs/models)',
  cohere: 'Cohere pricing (cohere.com/pricing)',
} as const;

export type DefaultPrice = {
  model_pattern: string;
  provider: string;
  source: PriceSourceKey;
  input_per_million: number;
  output_per_million: number;
  cached_input_per_million: number | null;
  cache_write_per_million: number | null;
  reasoning_per_million: number | null;
};

type Extra = { cached?: number; cacheWrite?: number; reasoning?: number };

/** One row per pattern; `also` are other spellings of the same model (other hosts' ids, aliases). */
function rows(
  provider: string,
  source: PriceSourceKey,
  list: [string | string[], number, number, Extra?][],
): DefaultPrice[] {
  return list.flatMap(([patterns, input, output, extra = {}]) =>
    (Array.isArray(patterns) ? patterns : [patterns]).map((model_pattern) => ({
      model_pattern,
      provider,
      source,
      input_per_million: input,
      output_per_million: output,
      cached_input_per_million: extra.cached ?? null,
      cache_write_per_million: extra.cacheWrite ?? null,
      reasoning_per_million: extra.reasoning ?? null,
    })),
  );
}

/** Anthropic's cache prices: a 5-minute cache write costs 1.25× input, a cache read 0.1× input. */
const anthropicCache = (input: number): Extra => ({ cached: round(input * 0.1), cacheWrite: round(input * 1.25) });
const round = (n: number) => Math.round(n * 1e6) / 1e6;

// Azure OpenAI (global deployments) lists the same prices as OpenAI under the same ids, with
// `gpt-35-turbo` for gpt-3.5-turbo, which the matcher reads as the same model.
const OPENAI = rows('openai', 'openai', [
  ['gpt-5', 1.25, 10, { cached: 0.125 }],
  ['gpt-5.1', 1.25, 10, { cached: 0.125 }],
  ['gpt-5-mini', 0.25, 2, { cached: 0.025 }],
  ['gpt-5-nano', 0.05, 0.4, { cached: 0.005 }],
  ['gpt-5-pro', 15, 120],
  ['gpt-4.1', 2, 8, { cached: 0.5 }],
  ['gpt-4.1-mini', 0.4, 1.6, { cached: 0.1 }],
  ['gpt-4.1-nano', 0.1, 0.4, { cached: 0.025 }],
  ['gpt-4.5', 75, 150, { cached: 37.5 }],
  ['gpt-4o', 2.5, 10, { cached: 1.25 }],
  ['gpt-4o-2024-05-13', 5, 15],
  ['chatgpt-4o', 5, 15],
  ['gpt-4o-mini', 0.15, 0.6, { cached: 0.075 }],
  ['gpt-4o-realtime', 5, 20, { cached: 2.5 }],
  ['gpt-4o-mini-realtime', 0.6, 2.4, { cached: 0.3 }],
  ['gpt-4-turbo', 10, 30],
  ['gpt-4', 30, 60],
  ['gpt-4-32k', 60, 120],
  ['gpt-3.5-turbo', 0.5, 1.5],
  ['o1', 15, 60, { cached: 7.5 }],
  ['o1-mini', 1.1, 4.4, { cached: 0.55 }],
  ['o1-pro', 150, 600],
  ['o3', 2, 8, { cached: 0.5 }],
  ['o3-mini', 1.1, 4.4, { cached: 0.55 }],
  ['o3-pro', 20, 80],
  ['o3-deep-research', 10, 40, { cached: 2.5 }],
  ['o4-mini', 1.1, 4.4, { cached: 0.275 }],
  ['o4-mini-deep-research', 2, 8, { cached: 0.5 }],
  ['codex-mini', 1.5, 6, { cached: 0.375 }],
  // Fine-tuned models (`ft:gpt-4o-mini-2024-07-18:org::id`) cost more than their base.
  ['ft:gpt-4o', 3.75, 15, { cached: 1.875 }],
  ['ft:gpt-4o-mini', 0.3, 1.2, { cached: 0.15 }],
  ['ft:gpt-4.1', 3, 12, { cached: 0.75 }],
  ['ft:gpt-4.1-mini', 0.8, 3.2, { cached: 0.2 }],
  ['ft:gpt-4.1-nano', 0.2, 0.8, { cached: 0.05 }],
  ['text-embedding-3-small', 0.02, 0],
  ['text-embedding-3-large', 0.13, 0],
  ['text-embedding-ada-002', 0.1, 0],
]);

const ANTHROPIC = rows('anthropic', 'anthropic', [
  // Vertex spells Sonnet 3.5 v2 `claude-3-5-sonnet-v2@20241022`: the same price, matched as a prefix.
  [['claude-opus-4-5', 'claude-4.5-opus'], 5, 25, anthropicCache(5)],
  [['claude-opus-4-1', 'claude-4.1-opus'], 15, 75, anthropicCache(15)],
  [['claude-opus-4', 'claude-4-opus'], 15, 75, anthropicCache(15)],
  [['claude-sonnet-4-5', 'claude-4.5-sonnet'], 3, 15, anthropicCache(3)],
  [['claude-sonnet-4', 'claude-4-sonnet'], 3, 15, anthropicCache(3)],
  [['claude-haiku-4-5', 'claude-4.5-haiku'], 1, 5, anthropicCache(1)],
  ['claude-3-7-sonnet', 3, 15, anthropicCache(3)],
  ['claude-3-5-sonnet', 3, 15, anthropicCache(3)],
  ['claude-3-5-haiku', 0.8, 4, anthropicCache(0.8)],
  ['claude-3-opus', 15, 75, anthropicCache(15)],
  ['claude-3-sonnet', 3, 15],
  ['claude-3-haiku', 0.25, 1.25, { cached: 0.03, cacheWrite: 0.3 }],
]);

// Gemini Developer API, paid tier, prompts up to 200k tokens (128k for 1.5). Vertex AI lists the same
// prices for these ids (`gemini-1.5-pro-002`, `publishers/google/models/gemini-2.0-flash-001`).
const GOOGLE = rows('google', 'google', [
  ['gemini-3-pro', 2, 12, { cached: 0.2 }],
  ['gemini-2.5-pro', 1.25, 10, { cached: 0.125 }],
  ['gemini-2.5-flash', 0.3, 2.5, { cached: 0.03 }],
  ['gemini-2.5-flash-lite', 0.1, 0.4, { cached: 0.01 }],
  ['gemini-2.0-flash', 0.1, 0.4, { cached: 0.025 }],
  ['gemini-2.0-flash-lite', 0.075, 0.3],
  ['gemini-1.5-pro', 1.25, 5, { cached: 0.3125 }],
  ['gemini-1.5-flash', 0.075, 0.3, { cached: 0.01875 }],
  ['gemini-1.5-flash-8b', 0.0375, 0.15, { cached: 0.01 }],
  ['gemini-embedding-001', 0.15, 0],
]);

const MISTRAL = rows('mistral', 'mistral', [
  // Bedrock's `mistral.mistral-large-2407-v1:0` matches `mistral-large` at the same list price.
  ['mistral-large', 2, 6],
  ['mistral-medium', 0.4, 2],
  ['mistral-small', 0.1, 0.3],
  ['magistral-medium', 2, 5],
  ['magistral-small', 0.5, 1.5],
  ['codestral', 0.3, 0.9],
  ['devstral-medium', 0.4, 2],
  ['devstral-small', 0.1, 0.3],
  ['pixtral-large', 2, 6],
  ['pixtral-12b', 0.15, 0.15],
  [['mistral-nemo', 'open-mistral-nemo'], 0.15, 0.15],
  ['ministral-8b', 0.1, 0.1],
  ['ministral-3b', 0.04, 0.04],
  [['open-mistral-7b', 'mistral-7b'], 0.25, 0.25],
  ['open-mixtral-8x7b', 0.7, 0.7],
  [['open-mixtral-8x22b', 'mixtral-8x22b'], 2, 6],
  ['mistral-embed', 0.1, 0],
]);

// Groq ids (`llama-3.1-8b-instant`, `meta-llama/llama-4-scout-17b-16e-instruct`, `openai/gpt-oss-120b`).
const GROQ = rows('groq', 'groq', [
  ['llama-3.1-8b-instant', 0.05, 0.08],
  ['llama-3.3-70b-versatile', 0.59, 0.79],
  ['llama-3.3-70b-specdec', 0.59, 0.99],
  ['llama3-8b-8192', 0.05, 0.08],
  ['llama3-70b-8192', 0.59, 0.79],
  ['llama-4-scout-17b-16e', 0.11, 0.34],
  ['llama-4-maverick-17b-128e', 0.2, 0.6],
  ['deepseek-r1-distill-llama-70b', 0.75, 0.99],
  ['qwen3-32b', 0.29, 0.59],
  ['kimi-k2-instruct', 1, 3],
]);

// Together ids (`meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo`, `Qwen/Qwen2.5-72B-Instruct-Turbo`), and
// the generic Llama sizes and open-weight families other hosts name the same way (Together's price).
const TOGETHER = rows('together', 'together', [
  [['meta-llama-3.1-8b-instruct-turbo', 'llama-3.1-8b'], 0.18, 0.18],
  [['meta-llama-3.1-70b-instruct-turbo', 'llama-3.1-70b', 'llama-3.3-70b'], 0.88, 0.88],
  [['meta-llama-3.1-405b-instruct-turbo', 'llama-3.1-405b'], 3.5, 3.5],
  [['llama-3.2-3b-instruct-turbo', 'llama-3.2-3b'], 0.06, 0.06],
  ['llama-4-maverick-17b-128e-instruct-fp8', 0.27, 0.85],
  [['qwen2.5-72b-instruct-turbo', 'qwen2.5-72b'], 1.2, 1.2],
  [['mixtral-8x7b-instruct-v0.1', 'mixtral-8x7b'], 0.6, 0.6],
  ['gpt-oss-120b', 0.15, 0.6],
  ['gpt-oss-20b', 0.05, 0.2],
]);

// Fireworks ids (`accounts/fireworks/models/llama-v3p1-70b-instruct`): serverless size tiers.
const FIREWORKS = rows('fireworks', 'fireworks', [
  ['llama-v3p1-8b-instruct', 0.2, 0.2],
  ['llama-v3p1-70b-instruct', 0.9, 0.9],
  ['llama-v3p1-405b-instruct', 3, 3],
  ['llama-v3p2-3b-instruct', 0.1, 0.1],
  ['llama-v3p3-70b-instruct', 0.9, 0.9],
  ['llama4-maverick-instruct-basic', 0.22, 0.88],
  ['llama4-scout-instruct-basic', 0.15, 0.6],
  ['mixtral-8x7b-instruct', 0.5, 0.5],
  ['qwen3-235b-a22b', 0.22, 0.88],
  ['deepseek-v3', 0.9, 0.9],
  ['deepseek-r1', 3, 8],
]);

// Bedrock ids after their region and vendor prefixes (`us.meta.llama3-1-70b-instruct-v1:0`).
// Anthropic and Mistral models on Bedrock and Vertex list the provider's own price (rows above).
const BEDROCK = rows('bedrock', 'bedrock', [
  ['llama3-1-8b-instruct', 0.22, 0.22],
  ['llama3-1-70b-instruct', 0.72, 0.72],
  ['llama3-1-405b-instruct', 2.4, 2.4],
  ['llama3-2-1b-instruct', 0.1, 0.1],
  ['llama3-2-3b-instruct', 0.15, 0.15],
  ['llama3-2-11b-instruct', 0.16, 0.16],
  ['llama3-2-90b-instruct', 0.72, 0.72],
  ['llama3-3-70b-instruct', 0.72, 0.72],
  ['llama4-maverick-17b-instruct', 0.24, 0.97],
  ['llama4-scout-17b-instruct', 0.17, 0.66],
  ['nova-premier', 2.5, 12.5],
  ['nova-pro', 0.8, 3.2, { cached: 0.2 }],
  ['nova-lite', 0.06, 0.24, { cached: 0.015 }],
  ['nova-micro', 0.035, 0.14, { cached: 0.00875 }],
  ['titan-embed-text-v2', 0.02, 0],
]);

const OTHERS = [
  ...rows('deepseek', 'deepseek', [
    // DeepSeek's own API (V3.2): a cache hit costs a tenth of a miss.
    [['deepseek-chat', 'deepseek-reasoner'], 0.28, 0.42, { cached: 0.028 }],
  ]),
  ...rows('xai', 'xai', [
    ['grok-4', 3, 15, { cached: 0.75 }],
    ['grok-3', 3, 15, { cached: 0.75 }],
    ['grok-3-mini', 0.3, 0.5, { cached: 0.075 }],
  ]),
  ...rows('cohere', 'cohere', [
    ['command-a', 2.5, 10],
    ['command-r-plus', 2.5, 10],
    ['command-r', 0.15, 0.6],
    ['embed-english-v3', 0.1, 0],
    ['embed-multilingual-v3', 0.1, 0],
  ]),
];

/** The whole table, in a stable order (providers as above, then as listed). */
export const DEFAULT_PRICES: readonly DefaultPrice[] = Object.freeze([
  ...OPENAI,
  ...ANTHROPIC,
  ...GOOGLE,
  ...MISTRAL,
  ...GROQ,
  ...TOGETHER,
  ...FIREWORKS,
  ...BEDROCK,
  ...OTHERS,
]);
