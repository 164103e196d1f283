import http from 'node:http';
import https from 'node:https';
import {
  DeadlineError,
  failureWording,
  isRefusedLiteralHost,
  publicOnlyLookup,
  RefusedAddressError,
} from './addresses.js';

/**
 * One HTTP exchange with a tenant-configured endpoint (an LLM provider): the outbound address rules
 * (addresses.ts), a deadline for the whole exchange, an answer read up to a byte bound, no redirects.
 * Never throws: every outcome is an ExchangeResult whose `error` is a fixed sentence.
 */

export type ExchangeRequest = {
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  /** How sentences name the far end: `the LLM provider host`. */
  target: string;
  /** Answers longer than this are cut off (a failed exchange, not retried). */
  maxAnswerBytes: number;
};

export type ExchangeResult =
  | { ok: true; status: number; body: string; latencyMs: number; retryAfter?: string }
  /**
   * `timedOut`: the deadline passed. `retry`: another attempt may succeed (a network failure, a
   * timeout); false when it can't (a refused address, a bad URL or header, an answer over the bound).
   */
  | { ok: false; status: null; error: string; timedOut: boolean; retry: boolean };

export function exchange(request: ExchangeRequest): Promise<ExchangeResult> {
  const failed = (error: string, retry: boolean, timedOut = false): ExchangeResult => ({
    ok: false,
    status: null,
    error,
    timedOut,
    retry,
  });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(failed(`the address of ${request.target} is not a valid URL`, false));
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.resolve(failed(`the address of ${request.target} is not http(s)`, false));
  if (!request.allowPrivate && isRefusedLiteralHost(url))
    return Promise.resolve(failed(`${request.target} is a loopback or private address`, false));
  const transport = url.protocol === 'https:' ? https : http;
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    // A deadline for the whole exchange, not only for an idle socket.
    const timer = setTimeout(
      () => req?.destroy(new DeadlineError(`${request.target} gave no answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    const settle = (result: ExchangeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    try {
      req = transport.request(
        url,
        {
          method: request.method,
          headers: {
            accept: 'application/json',
            'user-agent': 'Sightline-Evaluator/1',
            ...(request.body !== undefined
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) }
              : {}),
            ...request.headers,
          },
          ...(request.allowPrivate ? {} : { lookup: publicOnlyLookup(request.target) as never }),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let bytes = 0;
          res.on('data', (chunk: Buffer) => {
            bytes += chunk.length;
            if (bytes > request.maxAnswerBytes) {
              settle(failed(`the answer of ${request.target} is larger than ${request.maxAnswerBytes} bytes`, false));
              res.destroy();
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () =>
            settle({
              ok: true,
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              latencyMs: Math.round(performance.now() - started),
              ...(typeof res.headers['retry-after'] === 'string' ? { retryAfter: res.headers['retry-after'] } : {}),
            }),
          );
          res.on('error', () => settle(failed('the connection was closed before an answer', true)));
        },
      );
    } catch {
      // A header Node refuses to send (a key or header value with characters HTTP does not allow).
      return settle(failed(`the request to ${request.target} has a header value HTTP does not allow`, false));
    }
    req.on('error', (e: Error) =>
      settle(
        failed(failureWording(e, request.target), !(e instanceof RefusedAddressError), e instanceof DeadlineError),
      ),
    );
    req.end(request.body);
  });
}
