import { exchange, type ExchangeResult } from '../outbound/exchange.js';

/**
 * The provider calls of LLM connections (docs/evaluators.md): a connection's test and a judge's call,
 * over plain HTTP (src/outbound/exchange.ts: address rules, a deadline, a bounded answer). OpenAI and
 * OpenAI-compatible servers take `POST {base}/chat/completions` with a JSON schema response format;
 * Anthropic takes `POST {base}/messages` with one tool whose input schema is the judgement. A
 * provider's answer body is never passed on: its status picks one fixed sentence.
 */

export const PROVIDERS = ['openai', 'anthropic', 'openai_compatible'] as const;
export type Provider = (typeof PROVIDERS)[number];

export const DEFAULT_BASE_URLS: Readonly<Record<Exclude<Provider, 'openai_compatible'>, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com/v1',
};
/** The model a connection's test asks when neither the request nor the connection names one. */
export const DEFAULT_TEST_MODELS: Readonly<Record<Exclude<Provider, 'openai_compatible'>, string>> = {
  openai: 'gpt-4o-mini',
  anthropic: 'claude-3-5-haiku-latest',
};
const ANTHROPIC_VERSION = '2023-06-01';
/** A judge answer is a score and a few sentences; anything past this is not one. */
const MAX_ANSWER_BYTES = 1024 * 1024;
const JUDGE_MAX_TOKENS = 1024;
const TARGET = 'the LLM provider host';

/** A connection with its key opened, as a call needs it. */
export type OpenConnection = {
  provider: Provider;
  baseUrl: string | null;
  apiKey: string;
  extraHeaders: Record<string, string>;
};

export type CallOptions = { timeoutMs: number; allowPrivate: boolean };

/**
 * Why a call failed. `retryable`: a later attempt may succeed (429, 5xx, a timeout, a dropped
 * connection); otherwise no retry can fix it (401, 403, unknown model, billing) and the evaluator is
 * paused with `error` as its reason. `status` is the provider's HTTP status when it answered.
 */
export type CallFailure = {
  ok: false;
  retryable: boolean;
  status: number | null;
  error: string;
  /** A 429's `Retry-After` in seconds, when the provider sent one (delta-seconds or an HTTP date). */
  retryAfterS?: number;
  /**
   * No retry can fix it and no other call will go better until someone acts (a refused key, a model
   * the provider doesn't know, billing): an evaluator meeting it pauses itself.
   */
  pauses?: boolean;
};

export type JudgeRequest = {
  model: string;
  prompt: string;
  /** The JSON schema of `score`, from the evaluator's `output` (scorers.ts). */
  scoreSchema: Record<string, unknown>;
  temperature?: number;
};

export type JudgeAnswer = {
  ok: true;
  /** The judge's `{score, reasoning}` as parsed, not yet checked against `output`. */
  answer: unknown;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
};

export function baseUrlOf(connection: Pick<OpenConnection, 'provider' | 'baseUrl'>): string {
  const base =
    connection.baseUrl ?? (connection.provider === 'openai_compatible' ? '' : DEFAULT_BASE_URLS[connection.provider]);
  return base.replace(/\/+$/, '');
}

function headersOf(connection: OpenConnection): Record<string, string> {
  const auth: Record<string, string> =
    connection.provider === 'anthropic'
      ? { 'x-api-key': connection.apiKey, 'anthropic-version': ANTHROPIC_VERSION }
      : { authorization: `Bearer ${connection.apiKey}` };
  // The connection's own headers first: they may add, never replace, the credential.
  return { ...connection.extraHeaders, ...auth };
}

const STATUS_SENTENCES: Readonly<Record<number, string>> = {
  400: 'the provider refused the request',
  401: 'the provider refused the API key',
  402: 'the provider account has no credit or no billing set up',
  403: 'the API key may not use this model or endpoint',
  404: 'the provider does not know this model or endpoint',
  408: 'the provider timed out',
  413: 'the request was too large for the provider',
  429: 'the provider is rate limiting this key',
};

/** A provider's error code that means billing, whatever the status (OpenAI's quota answers 429). */
function providerErrorCode(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; type?: unknown } };
    const code = parsed.error?.code ?? parsed.error?.type;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

/** The failure of an answered call: its status, a fixed sentence, and whether a retry can help. */
export function classifyStatus(status: number, body: string): CallFailure {
  const code = providerErrorCode(body);
  if (code === 'insufficient_quota' || code === 'billing_hard_limit_reached' || code === 'billing_error')
    return { ...failure(status, false, STATUS_SENTENCES[402]!), pauses: true };
  if (code === 'model_not_found') return { ...failure(status, false, STATUS_SENTENCES[404]!), pauses: true };
  if (status === 401 || status === 402 || status === 403 || status === 404)
    return { ...failure(status, false, STATUS_SENTENCES[status]!), pauses: true };
  if (status === 429 || status === 408) return failure(status, true, STATUS_SENTENCES[status]!);
  if (status >= 500) return failure(status, true, 'the provider had an internal error');
  // Anthropic's overload answer (529) is a 5xx above; 400 with an unknown model is a 404 at both providers.
  return failure(status, false, STATUS_SENTENCES[status] ?? 'the provider answered with an error');
}

function failure(status: number | null, retryable: boolean, sentence: string): CallFailure {
  return { ok: false, retryable, status, error: status === null ? sentence : `HTTP ${status}: ${sentence}` };
}

function ofExchange(result: Exclude<ExchangeResult, { ok: true }>): CallFailure {
  return failure(null, result.retry, result.error);
}

function judgementSchema(scoreSchema: Record<string, unknown>) {
  return {
    type: 'object',
    properties: { score: scoreSchema, reasoning: { type: 'string' } },
    required: ['score', 'reasoning'],
    additionalProperties: false,
  };
}

function requestOf(connection: OpenConnection, request: JudgeRequest): { path: string; body: unknown } {
  const temperature = request.temperature === undefined ? {} : { temperature: request.temperature };
  if (connection.provider === 'anthropic') {
    return {
      path: '/messages',
      body: {
        model: request.model,
        max_tokens: JUDGE_MAX_TOKENS,
        ...temperature,
        messages: [{ role: 'user', content: request.prompt }],
        tools: [
          {
            name: 'record_judgement',
            description: 'Record the score and the reasoning behind it.',
            input_schema: judgementSchema(request.scoreSchema),
          },
        ],
        tool_choice: { type: 'tool', name: 'record_judgement' },
      },
    };
  }
  return {
    path: '/chat/completions',
    body: {
      model: request.model,
      ...temperature,
      messages: [{ role: 'user', content: request.prompt }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'judgement', strict: true, schema: judgementSchema(request.scoreSchema) },
      },
    },
  };
}

const MALFORMED = 'the provider answered with something other than a judgement';

/** The judgement and token counts of a 2xx answer, or why it holds none (not retried: the same prompt would likely answer the same). */
export function readJudgeAnswer(provider: Provider, body: string): Omit<JudgeAnswer, 'latencyMs'> | CallFailure {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return failure(null, false, MALFORMED);
  }
  const tokens = (usage: unknown, input: string, output: string) => {
    const u = (usage ?? {}) as Record<string, unknown>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v) : 0);
    return { inputTokens: n(u[input]), outputTokens: n(u[output]) };
  };
  const root = (parsed ?? {}) as Record<string, unknown>;
  if (provider === 'anthropic') {
    const content = Array.isArray(root.content) ? (root.content as Record<string, unknown>[]) : [];
    const call = content.find((c) => c && c.type === 'tool_use');
    if (!call || typeof call.input !== 'object' || call.input === null) return failure(null, false, MALFORMED);
    return { ok: true, answer: call.input, ...tokens(root.usage, 'input_tokens', 'output_tokens') };
  }
  const choices = Array.isArray(root.choices) ? (root.choices as Record<string, unknown>[]) : [];
  const message = (choices[0]?.message ?? {}) as Record<string, unknown>;
  if (typeof message.content !== 'string') return failure(null, false, MALFORMED);
  let answer: unknown;
  try {
    answer = JSON.parse(message.content);
  } catch {
    return failure(null, false, 'the judge did not answer in JSON');
  }
  return { ok: true, answer, ...tokens(root.usage, 'prompt_tokens', 'completion_tokens') };
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(header: string | undefined, now = Date.now()): number | null {
  if (header === undefined) return null;
  const text = header.trim();
  if (/^\d{1,9}$/.test(text)) return Number(text);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/** One POST to the provider: its 2xx answer, or the failure its exchange or status makes. Never throws. */
async function postTo(
  connection: OpenConnection,
  path: string,
  body: unknown,
  options: CallOptions,
): Promise<Extract<ExchangeResult, { ok: true }> | CallFailure> {
  const result = await exchange({
    url: `${baseUrlOf(connection)}${path}`,
    method: 'POST',
    body: JSON.stringify(body),
    headers: headersOf(connection),
    timeoutMs: options.timeoutMs,
    allowPrivate: options.allowPrivate,
    target: TARGET,
    maxAnswerBytes: MAX_ANSWER_BYTES,
  });
  if (!result.ok) return ofExchange(result);
  if (result.status < 200 || result.status >= 300) {
    const failed = classifyStatus(result.status, result.body);
    const after = retryAfterSeconds(result.retryAfter);
    return after === null ? failed : { ...failed, retryAfterS: after };
  }
  return result;
}

/** One judge call: the prompt, asking for `{score, reasoning}`. Never throws. */
export async function callJudge(
  connection: OpenConnection,
  request: JudgeRequest,
  options: CallOptions,
): Promise<JudgeAnswer | CallFailure> {
  const { path, body } = requestOf(connection, request);
  const result = await postTo(connection, path, body, options);
  if (!result.ok) return result;
  const read = readJudgeAnswer(connection.provider, result.body);
  return read.ok ? { ...read, latencyMs: result.latencyMs } : read;
}

/**
 * A connection's test: one small call (a one-token completion) with `model`. Its answer's content
 * doesn't matter, only that the provider took the key and the model.
 */
export async function testCall(
  connection: OpenConnection,
  model: string,
  options: CallOptions,
): Promise<{ ok: true; latencyMs: number } | CallFailure> {
  const message = [{ role: 'user', content: 'Reply with OK.' }];
  const [path, body] =
    connection.provider === 'anthropic'
      ? ['/messages', { model, max_tokens: 1, messages: message }]
      : ['/chat/completions', { model, max_tokens: 1, messages: message }];
  const result = await postTo(connection, path, body, options);
  if (!result.ok) return result;
  return { ok: true, latencyMs: result.latencyMs };
}
