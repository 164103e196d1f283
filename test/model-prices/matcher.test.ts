import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalModel, PriceTable, type PriceEntry } from '../../src/model-prices/matcher.js';
import { DEFAULT_TABLE } from '../../src/model-prices/pricing.js';
import { DEFAULT_PRICES, PRICES_AS_OF, SOURCES } from '../../src/model-prices/default-prices.js';

const patternOf = (model: string) => DEFAULT_TABLE.lookup(model)?.model_pattern ?? null;

function entry(model_pattern: string, source: PriceEntry['source'], input: number): PriceEntry {
  return {
    model_pattern,
    source,
    id: source === 'project' ? `id-${model_pattern}` : null,
    input_per_million: input,
    output_per_million: input,
    cached_input_per_million: null,
    cache_write_per_million: null,
    reasoning_per_million: null,
  };
}

describe('canonical model ids', () => {
  it.each([
    ['GPT-4o', 'gpt-4o'],
    ['openai/gpt-4.1', 'gpt-4-1'],
    ['models/gemini-1.5-pro-002', 'gemini-1-5-pro-002'],
    ['projects/p/locations/us-central1/publishers/google/models/gemini-2.0-flash-001', 'gemini-2-0-flash-001'],
    ['us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet-20241022-v2:0'],
    ['anthropic.claude-3-haiku-20240307-v1:0', 'claude-3-haiku-20240307-v1:0'],
    ['bedrock/eu.meta.llama3-2-90b-instruct-v1:0', 'llama3-2-90b-instruct-v1:0'],
    [
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-20250514-v1:0',
      'claude-sonnet-4-20250514-v1:0',
    ],
    ['accounts/fireworks/models/llama-v3p1-70b-instruct', 'llama-v3p1-70b-instruct'],
    ['meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo', 'meta-llama-3-1-8b-instruct-turbo'],
    ['azure/gpt-35-turbo', 'gpt-3-5-turbo'],
    ['gpt4o-mini', 'gpt-4o-mini'],
    ['  claude_3_haiku  ', 'claude-3-haiku'],
    ['gpt-4o-', 'gpt-4o'],
    ['openai/', ''],
  ])('%s → %s', (id, canonical) => {
    expect(canonicalModel(id)).toBe(canonical);
  });
});

describe('the default table', () => {
  it('is dated, names its sources, and has one row per canonical pattern', () => {
    expect(PRICES_AS_OF).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const canon = DEFAULT_PRICES.map((p) => canonicalModel(p.model_pattern));
    expect(new Set(canon).size).toBe(canon.length);
    for (const p of DEFAULT_PRICES) {
      expect(SOURCES[p.source]).toBeTruthy();
      expect(p.model_pattern).not.toContain('*');
      expect(p.input_per_million).toBeGreaterThanOrEqual(0);
    }
  });

  it('is the table docs/model-prices.md shows, row for row, with its date', () => {
    const doc = fs.readFileSync(new URL('../../docs/model-prices.md', import.meta.url), 'utf8');
    expect(doc).toContain(`Prices as of **${PRICES_AS_OF}**`);
    const dash = (v: number | null) => (v === null ? '–' : String(v));
    const table = doc.slice(doc.indexOf('## The default table'));
    const documented = table.split('\n').filter((l) => /^\| `/.test(l));
    expect(documented).toEqual(
      DEFAULT_PRICES.map(
        (p) =>
          `| \`${p.model_pattern}\` | ${p.provider} | ${p.input_per_million} | ${p.output_per_million} | ${dash(p.cached_input_per_million)} | ${dash(p.cache_write_per_million)} | ${dash(p.reasoning_per_million)} |`,
      ),
    );
  });

  // Real ids as producers send them (OpenAI/Anthropic/Google SDKs, LiteLLM, OpenRouter, Bedrock,
  // Vertex, Azure, Groq, Together, Fireworks) and the default row each must land on.
  it.each([
    // OpenAI and Azure
    ['gpt-4o', 'gpt-4o'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4o-2024-05-13', 'gpt-4o-2024-05-13'],
    ['openai/gpt-4o', 'gpt-4o'],
    ['openai/gpt-4o:extended', 'gpt-4o'],
    ['gpt-4o-audio-preview-2024-12-17', 'gpt-4o'],
    ['gpt-4o-realtime-preview-2024-12-17', 'gpt-4o-realtime'],
    ['gpt-4o-mini', 'gpt-4o-mini'],
    ['gpt-4o-mini-2024-07-18', 'gpt-4o-mini'],
    ['azure/gpt-4o-mini', 'gpt-4o-mini'],
    ['chatgpt-4o-latest', 'chatgpt-4o'],
    ['gpt-4.1', 'gpt-4.1'],
    ['gpt-4.1-2025-04-14', 'gpt-4.1'],
    ['gpt-4.1-mini-2025-04-14', 'gpt-4.1-mini'],
    ['openai/gpt-4.1-nano', 'gpt-4.1-nano'],
    ['gpt-4.5-preview', 'gpt-4.5'],
    ['gpt-4-turbo-2024-04-09', 'gpt-4-turbo'],
    ['gpt-4-0613', 'gpt-4'],
    ['gpt-4-32k-0613', 'gpt-4-32k'],
    ['gpt-3.5-turbo-0125', 'gpt-3.5-turbo'],
    ['gpt-35-turbo', 'gpt-3.5-turbo'],
    ['gpt-35-turbo-16k', 'gpt-3.5-turbo'],
    ['o1', 'o1'],
    ['o1-2024-12-17', 'o1'],
    ['o1-preview', 'o1'],
    ['o1-mini-2024-09-12', 'o1-mini'],
    ['o1-pro', 'o1-pro'],
    ['o3', 'o3'],
    ['o3-2025-04-16', 'o3'],
    ['o3-mini-2025-01-31', 'o3-mini'],
    ['o3-pro-2025-06-10', 'o3-pro'],
    ['o4-mini', 'o4-mini'],
    ['o4-mini-2025-04-16', 'o4-mini'],
    ['o4-mini-deep-research', 'o4-mini-deep-research'],
    ['gpt-5', 'gpt-5'],
    ['gpt-5-2025-08-07', 'gpt-5'],
    ['gpt-5-chat-latest', 'gpt-5'],
    ['gpt-5-codex', 'gpt-5'],
    ['gpt-5.1', 'gpt-5.1'],
    ['gpt-5-mini-2025-08-07', 'gpt-5-mini'],
    ['gpt-5-nano', 'gpt-5-nano'],
    ['gpt-5-pro', 'gpt-5-pro'],
    ['ft:gpt-4o-mini-2024-07-18:acme::A1b2C3', 'ft:gpt-4o-mini'],
    ['text-embedding-3-small', 'text-embedding-3-small'],
    ['text-embedding-ada-002', 'text-embedding-ada-002'],
    // Anthropic, Bedrock, Vertex, OpenRouter
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['claude-3-5-sonnet-latest', 'claude-3-5-sonnet'],
    ['anthropic/claude-3.5-sonnet', 'claude-3-5-sonnet'],
    ['anthropic/claude-3.7-sonnet:thinking', 'claude-3-7-sonnet'],
    ['anthropic.claude-3-5-sonnet-20240620-v1:0', 'claude-3-5-sonnet'],
    ['us.anthropic.claude-3-5-sonnet-20241022-v2:0', 'claude-3-5-sonnet'],
    ['bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0', 'claude-3-7-sonnet'],
    ['vertex_ai/claude-3-5-sonnet-v2@20241022', 'claude-3-5-sonnet'],
    ['claude-3-7-sonnet@20250219', 'claude-3-7-sonnet'],
    ['claude-3-5-haiku-20241022', 'claude-3-5-haiku'],
    ['claude-3-haiku-20240307', 'claude-3-haiku'],
    ['claude-3-opus-20240229', 'claude-3-opus'],
    ['claude-sonnet-4-20250514', 'claude-sonnet-4'],
    ['claude-sonnet-4@20250514', 'claude-sonnet-4'],
    ['claude-sonnet-4-5', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['global.anthropic.claude-sonnet-4-5-20250929-v1:0', 'claude-sonnet-4-5'],
    ['anthropic/claude-sonnet-4.5', 'claude-sonnet-4-5'],
    ['claude-opus-4-20250514', 'claude-opus-4'],
    ['claude-opus-4-1-20250805', 'claude-opus-4-1'],
    ['claude-opus-4-1@20250805', 'claude-opus-4-1'],
    ['claude-opus-4-5-20251101', 'claude-opus-4-5'],
    ['claude-haiku-4-5-20251001', 'claude-haiku-4-5'],
    ['claude-4-sonnet', 'claude-4-sonnet'],
    // Google (Gemini API, Vertex, LiteLLM)
    ['gemini-2.5-pro', 'gemini-2.5-pro'],
    ['models/gemini-2.5-pro-preview-05-06', 'gemini-2.5-pro'],
    ['gemini-2.5-flash', 'gemini-2.5-flash'],
    ['gemini-2.5-flash-preview-05-20', 'gemini-2.5-flash'],
    ['gemini-2.5-flash-lite', 'gemini-2.5-flash-lite'],
    ['gemini-2.5-flash-lite-preview-06-17', 'gemini-2.5-flash-lite'],
    ['vertex_ai/gemini-2.0-flash-001', 'gemini-2.0-flash'],
    ['publishers/google/models/gemini-2.0-flash-lite-001', 'gemini-2.0-flash-lite'],
    ['gemini-1.5-pro-002', 'gemini-1.5-pro'],
    ['gemini-1.5-flash-latest', 'gemini-1.5-flash'],
    ['gemini-1.5-flash-8b-001', 'gemini-1.5-flash-8b'],
    ['google/gemini-2.0-flash-exp:free', 'gemini-2.0-flash'],
    ['gemini-3-pro-preview', 'gemini-3-pro'],
    // Mistral
    ['mistral-large-latest', 'mistral-large'],
    ['mistral-large-2411', 'mistral-large'],
    ['mistral.mistral-large-2407-v1:0', 'mistral-large'],
    ['mistral-small-2503', 'mistral-small'],
    ['mistral-medium-2505', 'mistral-medium'],
    ['codestral-2501', 'codestral'],
    ['open-mistral-nemo', 'open-mistral-nemo'],
    ['mistralai/Mistral-7B-Instruct-v0.3', 'mistral-7b'],
    ['mistral-embed', 'mistral-embed'],
    // Llama and open-weight models on Groq, Together, Fireworks, Bedrock
    ['llama-3.1-8b-instant', 'llama-3.1-8b-instant'],
    ['groq/llama-3.3-70b-versatile', 'llama-3.3-70b-versatile'],
    ['meta-llama/llama-4-scout-17b-16e-instruct', 'llama-4-scout-17b-16e'],
    ['meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8', 'llama-4-maverick-17b-128e-instruct-fp8'],
    ['meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo', 'meta-llama-3.1-8b-instruct-turbo'],
    ['together_ai/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo', 'meta-llama-3.1-405b-instruct-turbo'],
    ['meta-llama/Llama-3.3-70B-Instruct-Turbo', 'llama-3.3-70b'],
    ['meta-llama/llama-3.1-8b-instruct:free', 'llama-3.1-8b'],
    ['accounts/fireworks/models/llama-v3p1-70b-instruct', 'llama-v3p1-70b-instruct'],
    ['fireworks_ai/accounts/fireworks/models/llama-v3p3-70b-instruct', 'llama-v3p3-70b-instruct'],
    ['accounts/fireworks/models/deepseek-v3', 'deepseek-v3'],
    ['accounts/fireworks/models/llama4-maverick-instruct-basic', 'llama4-maverick-instruct-basic'],
    ['meta.llama3-1-70b-instruct-v1:0', 'llama3-1-70b-instruct'],
    ['us.meta.llama3-2-11b-instruct-v1:0', 'llama3-2-11b-instruct'],
    ['us.meta.llama4-scout-17b-instruct-v1:0', 'llama4-scout-17b-instruct'],
    ['amazon.nova-pro-v1:0', 'nova-pro'],
    ['us.amazon.nova-micro-v1:0', 'nova-micro'],
    ['amazon.titan-embed-text-v2:0', 'titan-embed-text-v2'],
    ['openai/gpt-oss-120b', 'gpt-oss-120b'],
    ['openai.gpt-oss-20b-1:0', 'gpt-oss-20b'],
    ['Qwen/Qwen2.5-72B-Instruct-Turbo', 'qwen2.5-72b-instruct-turbo'],
    ['deepseek-chat', 'deepseek-chat'],
    ['cohere.command-r-plus-v1:0', 'command-r-plus'],
    ['cohere.embed-english-v3', 'embed-english-v3'],
    ['xai/grok-3-mini-beta', 'grok-3-mini'],
  ])('%s is priced as %s', (model, pattern) => {
    expect(patternOf(model)).toBe(pattern);
  });

  it.each(['gpt-4omni', 'my-company-model', 'gpt', 'claude', 'gemini-9-ultra', '', 'llama'])(
    '%s has no default price',
    (model) => {
      expect(patternOf(model)).toBeNull();
    },
  );
});

describe('overrides over the default table', () => {
  const base = new PriceTable([
    entry('gpt-4o', 'default', 2.5),
    entry('gpt-4o-mini', 'default', 0.15),
    entry('claude-3-5-sonnet', 'default', 3),
  ]);

  it('a project pattern beats the default pattern of the same specificity', () => {
    const t = new PriceTable([entry('GPT-4o', 'project', 2)], base);
    expect(t.lookup('gpt-4o-2024-08-06')).toMatchObject({ source: 'project', input_per_million: 2 });
    expect(t.lookup('openai/gpt-4o')).toMatchObject({ source: 'project' });
  });

  it('a more specific default still beats a shorter project pattern', () => {
    const t = new PriceTable([entry('gpt-4o', 'project', 2)], base);
    expect(t.lookup('gpt-4o-mini-2024-07-18')).toMatchObject({ source: 'default', model_pattern: 'gpt-4o-mini' });
  });

  it('a dated project pattern prices that snapshot only', () => {
    const t = new PriceTable([entry('gpt-4o-2024-05-13', 'project', 5)], base);
    expect(t.lookup('gpt-4o-2024-05-13')).toMatchObject({ source: 'project', input_per_million: 5 });
    expect(t.lookup('gpt-4o-2024-08-06')).toMatchObject({ source: 'default', model_pattern: 'gpt-4o' });
  });

  it('`*` patterns: any characters, ranked by their other characters, below a plain pattern of equal length', () => {
    const t = new PriceTable(
      [entry('acme-*-chat', 'project', 7), entry('*', 'project', 1), entry('gpt-4o*', 'project', 9)],
      base,
    );
    expect(t.lookup('acme-large-chat')).toMatchObject({ model_pattern: 'acme-*-chat' });
    expect(t.lookup('acme-large-chat-2')).toMatchObject({ model_pattern: '*' });
    expect(t.lookup('something-else')).toMatchObject({ model_pattern: '*' });
    // `gpt-4o*` (6 characters) ties with the default `gpt-4o` and wins as the project's.
    expect(t.lookup('gpt-4o-2024-11-20')).toMatchObject({ model_pattern: 'gpt-4o*' });
    expect(t.lookup('gpt-4omni')).toMatchObject({ model_pattern: 'gpt-4o*' });
    expect(t.lookup('gpt-4o-mini')).toMatchObject({ model_pattern: 'gpt-4o-mini', source: 'default' });
    // Prefixes are part of the canonical form: a Bedrock id reaches the default row.
    expect(t.lookup('us.anthropic.claude-3-5-sonnet-20241022-v2:0')).toMatchObject({
      model_pattern: 'claude-3-5-sonnet',
    });
  });

  it('remembers each model name it was asked about', () => {
    const t = new PriceTable([entry('x-model', 'project', 1)], base);
    const first = t.lookup('X-Model-2025-01-01');
    expect(t.lookup('X-Model-2025-01-01')).toBe(first);
    expect(t.lookup('unknown-model')).toBeNull();
    expect(t.lookup('unknown-model')).toBeNull();
  });
});
