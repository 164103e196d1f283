import dns from 'node:dns';
import net from 'node:net';

/**
 * The address rules of tenant-configured outbound calls (alert webhooks, LLM judge calls): public
 * addresses only unless the deployment allows private ones, applied where the connection is made.
 * A host name is resolved by our own `lookup`, which refuses the connection when any address it
 * resolves to is private, so a name that resolves differently between a check and the connect (DNS
 * rebinding) can't reach inside. Failures are told in fixed sentences, never the network's own words.
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
export function hostOf(url: URL): string {
  return url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
}

export function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** A literal private address or a `localhost` name: refused before any lookup. */
export function isRefusedLiteralHost(url: URL): boolean {
  const host = hostOf(url);
  return isLocalName(host) || isPrivateAddress(host);
}

/** Raised by `publicOnlyLookup`; its message is the fixed sentence for `target`. */
export class RefusedAddressError extends Error {
  readonly code = 'EREFUSEDADDRESS';
}

/** Raised when the whole exchange outlives its deadline. */
export class DeadlineError extends Error {}

/** `target` names the far end in sentences: `the webhook host`, `the LLM provider host`. */
export function refusedResolvedSentence(target: string): string {
  return `${target} name resolves to a loopback or private address`;
}

/**
 * What a failed connection says: one fixed sentence per kind of failure. The network's own message
 * is never shown: it can name addresses the name resolved to, ports, and the names in a
 * certificate, which are the receiver's network, not the project's business.
 */
export function failureWording(e: Error, target: string): string {
  if (e instanceof RefusedAddressError || e instanceof DeadlineError) return e.message;
  const code = String((e as { code?: unknown }).code ?? '');
  if (['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME'].includes(code))
    return `${target} name could not be resolved`;
  if (code === 'ECONNREFUSED') return `${target} refused the connection`;
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return `the connection to ${target} timed out`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'EHOSTDOWN' || code === 'ENETDOWN')
    return `${target} is unreachable`;
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED')
    return 'the connection was closed before an answer';
  const tls =
    /CERT|SSL|TLS|SELF_SIGNED|ALTNAME|UNABLE_TO_(GET|VERIFY)/.test(code) || /certificate|TLS|SSL/i.test(e.message);
  if (tls) return `the TLS handshake with ${target} failed`;
  if (code.startsWith('HPE_')) return `${target} did not answer in HTTP`;
  return `the request to ${target} failed`;
}

/** A dns.lookup that fails (with `target`'s sentence) when the name resolves to any private address. */
export function publicOnlyLookup(target: string) {
  return (hostname: string, options: dns.LookupOptions, callback: (...args: unknown[]) => void): void => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error);
      const list = addresses as dns.LookupAddress[];
      const inside = list.find((a) => isPrivateAddress(a.address));
      if (inside) return callback(new RefusedAddressError(refusedResolvedSentence(target)));
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}
