import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

/**
 * Webhook delivery: one signed POST with a timeout, to public addresses only unless the deployment
 * allows private ones (ALERT_WEBHOOK_ALLOW_PRIVATE; tests and a local `npm start` receiver need it).
 *
 * The address rule is applied where the connection is made: a host name is resolved by our own
 * `lookup`, which refuses the connection when any address it resolves to is private, so a name that
 * resolves differently between a check and the connect (DNS rebinding) can't reach inside. Redirects
 * are not followed (a 3xx is a failed attempt), for the same reason.
 */

const PRIVATE = new net.BlockList();
for (const [net4, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net4, bits, 'ipv4');
for (const [net6, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(net6, bits, 'ipv6');

/** Loopback, private, link-local, shared, multicast and reserved addresses (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as the resolver sees it: no IPv6 brackets, no trailing root dot, lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '').toLowerCase();
}

function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * Why a webhook URL is refused before any lookup: a literal private address or a `localhost` name.
 * Names that need DNS are judged when delivering. Null when acceptable.
 */
export function literalAddressRefusal(rawUrl: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  const host = hostOf(new URL(rawUrl));
  if (isLocalName(host) || isPrivateAddress(host)) {
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

export type DeliveryRequest = { url: string; body: string; headers: Record<string, string>; timeoutMs: number; allowPrivate: boolean };

class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

/** dns.lookup that fails when the name resolves to any private address. */
function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error);
    const list = addresses as dns.LookupAddress[];
    const inside = list.find((a) => isPrivateAddress(a.address));
    if (inside) return callback(new RefusedAddressError(`${hostname} resolves to ${inside.address}, a loopback or private address`));
    if (options.all) return callback(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
}

/** One POST attempt. Never throws: every outcome is a DeliveryResult. */
export function deliver(request: DeliveryRequest): Promise<DeliveryResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve({ ok: false, statusCode: null, error: 'webhook_url is not a valid URL', retry: false });
  }
  const host = hostOf(url);
  if (!request.allowPrivate && (isPrivateAddress(host) || isLocalName(host))) {
    return Promise.resolve({ ok: false, statusCode: null, error: `${host} is a loopback or private address`, retry: false });
  }
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body), 'user-agent': 'Sightline-Webhook/1', ...request.headers },
        ...(request.allowPrivate ? {} : { lookup: publicOnlyLookup as never }),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        // The answer's body is not needed; reading it frees the socket.
        res.resume();
        res.on('end', () => {
          if (status >= 200 && status < 300) resolve({ ok: true, statusCode: status });
          else resolve({ ok: false, statusCode: status, error: `HTTP ${status}`, retry: status >= 500 || status === 408 || status === 429 });
        });
        res.on('error', (e) => resolve({ ok: false, statusCode: status, error: e.message, retry: true }));
      },
    );
    // A deadline for the whole exchange, not only for an idle socket.
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${request.timeoutMs} ms`)), request.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (e: Error) => {
      clearTimeout(timer);
      resolve({ ok: false, statusCode: null, error: e.message, retry: !(e instanceof RefusedAddressError) });
    });
    req.end(request.body);
  });
}
