import { describe, expect, it } from 'vitest';
import { baseUrlOf, classifyStatus, readJudgeAnswer, retryAfterSeconds } from '../../src/llm-connections/providers.js';
import { keyPreview } from '../../src/llm-connections/service.js';

describe('provider failures', () => {
  it('are retryable for 429, 408 and 5xx, fatal for key, model and billing answers', () => {
    const retryable = (status: number, body = '') => classifyStatus(status, body).retryable;
    expect([429, 408, 500, 502, 503, 529].map((s) => retryable(s))).toEqual([true, true, true, true, true, true]);
    expect([400, 401, 402, 403, 404, 422].map((s) => retryable(s))).toEqual([false, false, false, false, false, false]);
    // OpenAI answers an exhausted quota with 429: billing, not a rate limit.
    expect(classifyStatus(429, JSON.stringify({ error: { code: 'insufficient_quota', message: 'x' } }))).toEqual({
      ok: false,
      retryable: false,
      status: 429,
      error: 'HTTP 429: the provider account has no credit or no billing set up',
      pauses: true,
    });
    // What pauses an evaluator (docs/evaluators.md, "Auto-pause"): key, billing, access, unknown model.
    const pauses = (status: number) => classifyStatus(status, '').pauses === true;
    expect([401, 402, 403, 404].map(pauses)).toEqual([true, true, true, true]);
    expect([400, 408, 429, 500, 418].map(pauses)).toEqual([false, false, false, false, false]);
    expect(retryAfterSeconds('7')).toBe(7);
    expect(retryAfterSeconds(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThanOrEqual(9);
    expect(retryAfterSeconds('soon')).toBeNull();
    expect(retryAfterSeconds(undefined)).toBeNull();
    expect(classifyStatus(400, JSON.stringify({ error: { code: 'model_not_found' } })).error).toBe(
      'HTTP 400: the provider does not know this model or endpoint',
    );
    // The provider's own words never reach the sentence.
    expect(classifyStatus(418, '{"error":{"message":"internal host db-7.corp"}}').error).toBe(
      'HTTP 418: the provider answered with an error',
    );
  });
});

describe('judge answers as the providers shape them', () => {
  it('read the judgement and token counts of OpenAI and Anthropic answers', () => {
    const openai = JSON.stringify({
      choices: [{ message: { content: '{"score": 1, "reasoning": "ok"}' } }],
      usage: { prompt_tokens: 12, completion_tokens: 3 },
    });
    expect(readJudgeAnswer('openai', openai)).toEqual({
      ok: true,
      answer: { score: 1, reasoning: 'ok' },
      inputTokens: 12,
      outputTokens: 3,
    });
    const anthropic = JSON.stringify({
      content: [
        { type: 'text', text: 'thinking' },
        { type: 'tool_use', name: 'record_judgement', input: { score: true, reasoning: 'fine' } },
      ],
      usage: { input_tokens: 20, output_tokens: 5 },
    });
    expect(readJudgeAnswer('anthropic', anthropic)).toMatchObject({
      ok: true,
      answer: { score: true },
      inputTokens: 20,
    });
  });

  it('are fatal failures with fixed sentences when they hold no judgement', () => {
    expect(readJudgeAnswer('openai', 'not json')).toMatchObject({ ok: false, retryable: false });
    expect(
      readJudgeAnswer('openai_compatible', JSON.stringify({ choices: [{ message: { content: 'yes' } }] })),
    ).toEqual({
      ok: false,
      retryable: false,
      status: null,
      error: 'the judge did not answer in JSON',
    });
    expect(readJudgeAnswer('anthropic', JSON.stringify({ content: [{ type: 'text', text: 'hi' }] }))).toMatchObject({
      ok: false,
      error: 'the provider answered with something other than a judgement',
    });
  });
});

describe('connections', () => {
  it('call the provider default address unless given one, and preview at most half of a short key', () => {
    expect(baseUrlOf({ provider: 'openai', baseUrl: null })).toBe('https://api.openai.com/v1');
    expect(baseUrlOf({ provider: 'anthropic', baseUrl: 'https://gw.example/v1/' })).toBe('https://gw.example/v1');
    expect(keyPreview('sk-abcdefgh1234')).toBe('1234');
    expect(keyPreview('abcdef')).toBe('def');
    expect(keyPreview('ab')).toBe('b');
  });
});

describe('an exchange', () => {
  it('never throws: a key HTTP cannot carry is a failure with a fixed sentence', async () => {
    const { callJudge } = await import('../../src/llm-connections/providers.js');
    const result = await callJudge(
      { provider: 'openai_compatible', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'ключ\u0001', extraHeaders: {} },
      { model: 'm', prompt: 'p', scoreSchema: { type: 'number' } },
      { timeoutMs: 1000, allowPrivate: true },
    );
    expect(result).toEqual({
      ok: false,
      retryable: false,
      status: null,
      error: 'the request to the LLM provider host has a header value HTTP does not allow',
    });
  });
});
