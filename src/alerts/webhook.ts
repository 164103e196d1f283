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
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net4, bits, 'ipv4');
// Non-global IPv6: unspecified, loopback, unique-local, link-local, site-local, multicast, discard,
// documentation, ORCHID, benchmarking, and NAT64's local-use prefix (RFC 8215), whose embedding of an
// IPv4 address depends on the operator's prefix length, so it is refused whole.
for (const [net6, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['2001:2::', 48],
  ['64:ff9b:1::', 48],
] as const)
  PRIVATE.addSubnet(net6, bits, 'ipv6');

/**
 * Loopback, private, link-local, shared, multicast and reserved addresses, and IPv6 addresses that
 * carry an IPv4 address which is one of those: IPv4-mapped (::ffff:a.b.c.d), IPv4-translated
 * (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d, which a NAT64 gateway
 * routes to the IPv4 address), 6to4 (2002:aabb:ccdd::) and Teredo (2001::/32, server and client).
 */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 0) return false;
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (PRIVATE.check(address, 'ipv6')) return true;
  return embeddedIpv4(address).some((v4) => PRIVATE.check(v4, 'ipv4'));
}

/** The IPv4 addresses an IPv6 address carries by the transition forms above (none for others). */
function embeddedIpv4(address: string): string[] {
  const b = ipv6Bytes(address);
  if (!b) return [];
  const v4 = (at: number, xor = 0) => [0, 1, 2, 3].map((i) => (b[at + i]! ^ xor).toString()).join('.');
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const word = (i: number) => (b[i]! << 8) | b[i + 1]!;
  const found: string[] = [];
  if (zero(0, 10) && word(10) === 0xffff) found.push(v4(12)); // mapped
  if (zero(0, 8) && word(8) === 0xffff && word(10) === 0) found.push(v4(12)); // translated
  if (zero(0, 12)) found.push(v4(12)); // compatible
  if (word(0) === 0x64 && word(2) === 0xff9b && zero(4, 12)) found.push(v4(12)); // NAT64 well-known prefix
  if (word(0) === 0x2002) found.push(v4(2)); // 6to4
  if (word(0) === 0x2001 && word(2) === 0) found.push(v4(4), v4(12, 0xff)); // Teredo server, client (inverted)
  return found;
}

/** The 16 bytes of an IPv6 address (with `::` and a trailing dotted IPv4), or null. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [, a, b, c, d] = dotted.map(Number) as [number, number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = 8 - head.length - tail.length;
  if (fill < 0 || (halves.length === 1 && fill !== 0)) return null;
  const words = [...head, ...Array<number>(fill).fill(0), ...tail];
  if (words.some((w) => !Number.isInteger(w) || w < 0 || w > 0xffff)) return null;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

/** The host of a URL as the resolver sees it: no IPv6 brackets, no trailing root dot, lower case. */
function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
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

export type DeliveryRequest = {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
};

class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

class DeadlineError extends Error {}

const REFUSED_LITERAL = 'the webhook host is a loopback or private address';
const REFUSED_RESOLVED = 'the webhook host name resolves to a loopback or private address';

/**
 * What `last_notify_error` says about a failed connection: one fixed sentence per kind of failure.
 * The network's own message is never shown: it can name addresses the name resolved to, ports, and
 * the names in a certificate, which are the receiver's network, not the project's business.
 */
function failureWording(e: Error): string {
  if (e instanceof RefusedAddressError || e instanceof DeadlineError) return e.message;
  const code = String((e as { code?: unknown }).code ?? '');
  if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME'].includes(code))
    return 'the webhook host name could not be resolved';
  if (code === 'ECONNREFUSED') return 'the webhook host refused the connection';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return 'the connection to the webhook host timed out';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN' || code === 'ENETDOWN')
    return 'the webhook host is unreachable';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED')
    return 'the connection was closed before an answer';
  const tls =
    /CERT|SSL|TLS|SELF_SIGNED|ALTNAME|UNABLE_TO_(GET|VERIFY)/.test(code) || /certificate|TLS|SSL/i.test(e.message);
  if (tls) return 'the TLS handshake with the webhook host failed';
  if (code.startsWith('HPE_')) return 'the webhook host did not answer in HTTP';
  return 'the request to the webhook host failed';
}

/** dns.lookup that fails when the name resolves to any private address. */
function publicOnlyLookup(hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void): void {
  dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error);
    const list = addresses as dns.LookupAddress[];
    const inside = list.find((a) => isPrivateAddress(a.address));
    if (inside) return callback(new RefusedAddressError(REFUSED_RESOLVED));
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
        ...(request.allowPrivate ? {} : { lookup: publicOnlyLookup as never }),
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
      resolve({ ok: false, statusCode: null, error: failureWording(e), retry: !(e instanceof RefusedAddressError) });
    });
    req.end(request.body);
  });
}
