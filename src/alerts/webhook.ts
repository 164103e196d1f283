import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  DeadlineError,
  failureWording,
  isRefusedLiteralHost,
  publicOnlyLookup,
  RefusedAddressError,
} from '../outbound/addresses.js';

export { isPrivateAddress } from '../outbound/addresses.js';

/**
 * Webhook delivery: one signed POST with a timeout, to public addresses only unless the deployment
 * allows private ones (ALERT_WEBHOOK_ALLOW_PRIVATE; tests and a local `npm start` receiver need it).
 * The address rules and failure sentences are the outbound ones (src/outbound/addresses.ts), shared
 * with LLM judge calls. Redirects are not followed (a 3xx is a failed attempt): a redirect could
 * point inside.
 */

/**
 * Why a webhook URL is refused before any lookup: a literal private address or a `localhost` name.
 * Names that need DNS are judged when delivering. Null when acceptable.
 */
export function literalAddressRefusal(rawUrl: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  if (isRefusedLiteralHost(new URL(rawUrl))) {
    return 'webhook_url points at a loopback or private address; set ALERT_WEBHOOK_ALLOW_PRIVATE=true to allow it';
  }
  return null;
}

/** Hex HMAC-SHA256 of the exact body bytes: what `X-Sightline-Signature` carries. */
export function signBody(secret: string, body: string): string {
  return crypto.createHmac('sha256', secret).update(body, 'utf8').digest('hex');
}

export type DeliveryResult =
  | { ok: true; statusCode: number }
  /** `retry: false` when another attempt can't help (refused address, a 4xx other than 408/429). */
  | { ok: false; statusCode: number | null; error: string; retry: boolean };

export type DeliveryRequest = {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
};

const TARGET = 'the webhook host';
const REFUSED_LITERAL = 'the webhook host is a loopback or private address';
const lookup = publicOnlyLookup(TARGET);

/** One POST attempt. Never throws: every outcome is a DeliveryResult. */
export function deliver(request: DeliveryRequest): Promise<DeliveryResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ ok: false, statusCode: null, error: 'webhook_url is not a valid URL', retry: false });
  }
  if (!request.allowPrivate && isRefusedLiteralHost(url)) {
    return Promise.resolve({ ok: false, statusCode: null, error: REFUSED_LITERAL, retry: false });
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(request.body),
          'user-agent': 'Sightline-Webhook/1',
          ...request.headers,
        },
        ...(request.allowPrivate ? {} : { lookup: lookup as never }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // The answer's body is not needed; reading it frees the socket.
        res.resume();
        res.on('end', () => {
          if (status >= 200 && status < 300) resolve({ ok: true, statusCode: status });
          else
            resolve({
              ok: false,
              statusCode: status,
              error: `HTTP ${status}`,
              retry: status >= 500 || status === 408 || status === 429,
            });
        });
        res.on('error', () => resolve({ ok: false, statusCode: status, error: 'the answer was cut off', retry: true }));
      },
    );
    // A deadline for the whole exchange, not only for an idle socket.
    const timer = setTimeout(
      () => req.destroy(new DeadlineError(`no answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', (e: Error) => {
      clearTimeout(timer);
      resolve({
        ok: false,
        statusCode: null,
        error: failureWording(e, TARGET),
        retry: !(e instanceof RefusedAddressError),
      });
    });
    req.end(request.body);
  });
}
