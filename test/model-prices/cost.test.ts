import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_TABLE, priceSpans } from '../../src/model-prices/pricing.js';
import { validateSpans, type NormalizedSpan } from '../../src/traces/span-input.js';

const tokens = (
  t: Partial<
    Record<'input_tokens' | 'output_tokens' | 'cache_read_tokens' | 'cache_write_tokens' | 'reasoning_tokens', number>
  >,
) => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  reasoning_tokens: 0,
  ...t,
});
const prices = (
  p: Partial<Record<string, number | null>> & { input_per_million: number; output_per_million: number },
) => ({
  cached_input_per_million: null,
  cache_write_per_million: null,
  reasoning_per_million: null,
  ...p,
});
const priceOf = (model: string) => DEFAULT_TABLE.lookup(model)!;

function span(fields: Record<string, unknown>): NormalizedSpan {
  const { accepted, rejected } = validateSpans([
    { trace_id: 't', span_id: 's', name: 'chat', start_time: '2025-01-01T00:00:00Z', ...fields },
  ]);
  expect(rejected).toEqual([]);
  return accepted[0]!;
}

describe('cost from prices and tokens (hand-computed)', () => {
  it('gpt-4o, 1M input and 1M output tokens: 2.50 + 10.00 USD', () => {
    expect(costOf(priceOf('gpt-4o'), tokens({ input_tokens: 1_000_000, output_tokens: 1_000_000 }))).toBeCloseTo(
      12.5,
      12,
    );
  });

  it('gpt-4o with cache reads: 6,000 × 2.50 + 4,000 × 1.25 + 2,000 × 10.00 per million = 0.04', () => {
    expect(
      costOf(
        priceOf('gpt-4o-2024-08-06'),
        tokens({ input_tokens: 10_000, cache_read_tokens: 4_000, output_tokens: 2_000 }),
      ),
    ).toBeCloseTo(0.04, 12);
  });

  it('o4-mini with reasoning billed as output: 4,000 × 1.10 + 1,000 × 0.275 + 1,000 × 4.40 + 2,000 × 4.40 per million = 0.017875', () => {
    const t = tokens({ input_tokens: 5_000, cache_read_tokens: 1_000, output_tokens: 3_000, reasoning_tokens: 2_000 });
    expect(costOf(priceOf('o4-mini-2025-04-16'), t)).toBeCloseTo(0.017875, 12);
  });

  it('claude-sonnet-4-5 with cache reads and writes: 2,000 × 3 + 6,000 × 0.30 + 2,000 × 3.75 + 1,000 × 15 per million = 0.0303', () => {
    const t = tokens({
      input_tokens: 10_000,
      cache_read_tokens: 6_000,
      cache_write_tokens: 2_000,
      output_tokens: 1_000,
    });
    expect(costOf(priceOf('us.anthropic.claude-sonnet-4-5-20250929-v1:0'), t)).toBeCloseTo(0.0303, 12);
  });

  it('a reasoning price of its own; missing cache prices fall back to the input price', () => {
    const p = prices({ input_per_million: 1, output_per_million: 2, reasoning_per_million: 4 });
    // 300 uncached × 1 + 500 read × 1 + 200 written × 1 + 600 × 2 + 400 reasoning × 4 = 3,800 per million
    const t = tokens({
      input_tokens: 1_000,
      cache_read_tokens: 500,
      cache_write_tokens: 200,
      output_tokens: 1_000,
      reasoning_tokens: 400,
    });
    expect(costOf(p, t)).toBeCloseTo(0.0038, 12);
    // No reasoning price: reasoning tokens cost what output tokens cost.
    expect(costOf(prices({ input_per_million: 1, output_per_million: 2 }), t)).toBeCloseTo(0.003, 12);
  });

  it('caps parts larger than their totals instead of billing tokens twice', () => {
    const p = prices({
      input_per_million: 1,
      output_per_million: 2,
      cached_input_per_million: 0.5,
      reasoning_per_million: 10,
    });
    // 100 input all read from cache (× 0.5), 50 output all reasoning (× 10): 50 + 500 = 550 per million
    expect(
      costOf(
        p,
        tokens({
          input_tokens: 100,
          cache_read_tokens: 400,
          cache_write_tokens: 50,
          output_tokens: 50,
          reasoning_tokens: 90,
        }),
      ),
    ).toBeCloseTo(0.00055, 12);
  });

  it('embeddings: input tokens only', () => {
    expect(costOf(priceOf('text-embedding-3-small'), tokens({ input_tokens: 2_000_000 }))).toBeCloseTo(0.04, 12);
  });
});

describe('pricing ingested spans', () => {
  it('a sent cost wins; a known model with tokens is computed; no price or no tokens leaves 0 and none', () => {
    const sent = span({ model_name: 'gpt-4o', input_tokens: 1_000_000, output_tokens: 0, cost: 0.01 });
    const computed = span({ model_name: 'openai/gpt-4o', input_tokens: 1_000_000, output_tokens: 1_000_000 });
    const sentZero = span({ model_name: 'gpt-4o', input_tokens: 1_000, cost: 0 });
    const unknown = span({ model_name: 'in-house-model', input_tokens: 1_000 });
    const noTokens = span({ model_name: 'gpt-4o' });
    const noModel = span({ input_tokens: 1_000, output_tokens: 10 });
    const cached = span({
      model_name: 'claude-3-5-haiku-20241022',
      input_tokens: 1_000_000,
      cache_read_tokens: 1_000_000,
      output_tokens: 0,
    });
    priceSpans(DEFAULT_TABLE, [sent, computed, sentZero, unknown, noTokens, noModel, cached]);
    expect([sent.cost, sent.cost_source]).toEqual([0.01, 'sent']);
    expect(computed.cost).toBeCloseTo(12.5, 12);
    expect(computed.cost_source).toBe('computed');
    expect([sentZero.cost, sentZero.cost_source]).toEqual([0, 'sent']);
    expect([unknown.cost, unknown.cost_source]).toEqual([0, 'none']);
    expect([noTokens.cost, noTokens.cost_source]).toEqual([0, 'none']);
    expect([noModel.cost, noModel.cost_source]).toEqual([0, 'none']);
    // 1M cache reads of Claude 3.5 Haiku at 0.08.
    expect(cached.cost).toBeCloseTo(0.08, 12);
  });
});
