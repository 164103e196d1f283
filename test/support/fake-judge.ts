import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake LLM provider on loopback for judge and connection tests: it speaks the OpenAI chat
 * completions shape (`POST /v1/chat/completions`) and Anthropic's messages shape
 * (`POST /v1/messages`), records every request, and answers from a script: each request takes the
 * next scripted reply, then `fallback` once the script is used up. A test helper, not a mock of our
 * code: our provider client talks HTTP to it as it would to the real thing.
 */

export type FakeReply =
  /** A well-formed answer whose judgement is `{score, reasoning}` (or `judgement` as given). */
  | {
      kind: 'judgement';
      score?: unknown;
      reasoning?: string;
      judgement?: unknown;
      inputTokens?: number;
      outputTokens?: number;
    }
  /** An HTTP status with a provider-style error body (`code` goes in `error.code`), maybe a Retry-After. */
  | { kind: 'status'; status: number; code?: string; message?: string; retryAfter?: string }
  /** 200 whose judgement text is not JSON (OpenAI) or that has no tool call (Anthropic). */
  | { kind: 'malformed' }
  /** Holds the answer until the server closes or `release()` is called: a slow provider. */
  | { kind: 'hang' };

export type RecordedRequest = { path: string; headers: http.IncomingHttpHeaders; body: Record<string, unknown> };

export type FakeJudge = {
  /** `http://127.0.0.1:<port>/v1`: a connection's base_url. */
  baseUrl: string;
  requests: RecordedRequest[];
  script(...replies: FakeReply[]): void;
  fallback: FakeReply;
  /** Answers every held request (with the fallback). */
  release(): void;
  /** Held requests right now. */
  held(): number;
  /** Every reply waits this long first (a slow provider; the bench's 200 ms judge). */
  delayMs: number;
  /** Requests being answered right now, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
  close(): Promise<void>;
};

export async function startFakeJudge(): Promise<FakeJudge> {
  const queue: FakeReply[] = [];
  const held: (() => void)[] = [];
  const requests: RecordedRequest[] = [];
  const judge: FakeJudge = {
    baseUrl: '',
    requests,
    script: (...replies) => void queue.push(...replies),
    fallback: { kind: 'judgement', score: 1, reasoning: 'looks right' },
    release: () => held.splice(0).forEach((answer) => answer()),
    held: () => held.length,
    delayMs: 0,
    inFlight: 0,
    maxInFlight: 0,
    close: async () => {
      judge.release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // recorded as {}
      }
      const path = req.url ?? '/';
      requests.push({ path, headers: req.headers, body });
      const anthropic = path.endsWith('/messages');
      const reply = queue.shift() ?? judge.fallback;
      judge.inFlight++;
      judge.maxInFlight = Math.max(judge.maxInFlight, judge.inFlight);
      const send = (r: FakeReply) => {
        judge.inFlight--;
        answer(res, r, anthropic);
      };
      if (reply.kind === 'hang') held.push(() => send(judge.fallback));
      else if (judge.delayMs > 0) setTimeout(() => send(reply), judge.delayMs);
      else send(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  judge.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return judge;
}

function answer(res: http.ServerResponse, reply: FakeReply, anthropic: boolean): void {
  const json = (status: number, body: unknown) => {
    const retryAfter =
      reply.kind === 'status' && reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {};
    res.writeHead(status, { 'content-type': 'application/json', ...retryAfter });
    res.end(JSON.stringify(body));
  };
  if (reply.kind === 'status') {
    return json(reply.status, {
      error: {
        code: reply.code ?? null,
        type: reply.code ?? 'error',
        message: reply.message ?? 'secret provider detail',
      },
    });
  }
  if (reply.kind === 'malformed') {
    return json(
      200,
      anthropic
        ? { content: [{ type: 'text', text: 'I think it is fine' }], usage: { input_tokens: 5, output_tokens: 3 } }
        : { choices: [{ message: { role: 'assistant', content: 'score: 1 (not JSON)' } }], usage: {} },
    );
  }
  if (reply.kind === 'hang') return json(200, {});
  const judgement = reply.judgement ?? { score: reply.score, reasoning: reply.reasoning ?? 'because' };
  const [input, output] = [reply.inputTokens ?? 120, reply.outputTokens ?? 30];
  if (anthropic) {
    return json(200, {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_fake', name: 'record_judgement', input: judgement }],
      usage: { input_tokens: input, output_tokens: output },
    });
  }
  return json(200, {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: JSON.stringify(judgement) }, finish_reason: 'stop' }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  });
}
