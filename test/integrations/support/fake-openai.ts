import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ANSWER,
  FAILING_PROMPT,
  FAILURE_MESSAGE,
  FAILURE_STATUS,
  TOOL_ARGS,
  TOOL_CALL_ID,
  TOOL_NAME,
  USAGE,
} from './scenario.js';

/**
 * A fake OpenAI-compatible provider on loopback for the instrumented `openai` client: answers
 * POST /v1/chat/completions the way the real API does (dated response model, usage with cached
 * tokens). A prompt with tools gets a get_weather tool call, one with a tool result gets the answer,
 * and FAILING_PROMPT gets a 429 error body. No network beyond 127.0.0.1.
 */
export interface FakeOpenAi {
  baseUrl: string;
  /** Bodies of the chat completion requests received, in order. */
  requests: Record<string, unknown>[];
  close(): Promise<void>;
}

type ChatMessage = { role: string; content?: unknown };

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${requests.length}` });
        res.end(JSON.stringify(body));
      };
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        return send(404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' } });
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push(body);
      send(...chatAnswer(body, requests.length));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function chatAnswer(body: Record<string, unknown>, n: number): [number, unknown] {
  const messages = (body.messages ?? []) as ChatMessage[];
  const text = (m: ChatMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
  if (messages.some((m) => text(m).includes(FAILING_PROMPT))) {
    return [
      FAILURE_STATUS,
      { error: { message: FAILURE_MESSAGE, type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    ];
  }
  const wantsTool = Array.isArray(body.tools) && !messages.some((m) => m.role === 'tool');
  const message = wantsTool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: TOOL_CALL_ID, type: 'function', function: { name: TOOL_NAME, arguments: JSON.stringify(TOOL_ARGS) } },
        ],
        refusal: null,
      }
    : { role: 'assistant', content: ANSWER, refusal: null };
  return [
    200,
    {
      id: `chatcmpl-fake${n}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'gpt-4o-2024-08-06',
      system_fingerprint: 'fp_fake',
      choices: [{ index: 0, message, logprobs: null, finish_reason: wantsTool ? 'tool_calls' : 'stop' }],
      usage: {
        prompt_tokens: USAGE.input,
        completion_tokens: USAGE.output,
        total_tokens: USAGE.input + USAGE.output,
        prompt_tokens_details: { cached_tokens: USAGE.cachedInput, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
    },
  ];
}
