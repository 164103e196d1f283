import crypto from 'node:crypto';
import { hashPool } from './hash-pool.js';

/** scrypt on the hashing pool's own threads, never libuv's (hash-pool.ts); 429 when that pool is full. */
function scrypt(
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
  caller?: string,
): Promise<Buffer> {
  return hashPool.run({ password, salt, keylen, ...options }, caller);
}

// scrypt with N=2^15, r=8: 32 MiB per hash, memory-hard (docs/authentication.md).
const SCRYPT = { N: 1 << 15, r: 8, p: 1, keylen: 32 } as const;
const SCRYPT_MAXMEM = 64 * 1024 * 1024;

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, SCRYPT.keylen, {
    N: SCRYPT.N,
    r: SCRYPT.r,
    p: SCRYPT.p,
    maxmem: SCRYPT_MAXMEM,
  });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** `caller`: who asks (a login's remote address), so one caller's burst of logins can't delay another's (hash-pool.ts). */
export async function verifyPassword(password: string, stored: string, caller?: string): Promise<boolean> {
  const [scheme, n, r, p, saltText, hashText] = stored.split('$');
  if (scheme !== 'scrypt' || !saltText || !hashText) return false;
  const expected = Buffer.from(hashText, 'base64url');
  const actual = await scrypt(
    password,
    Buffer.from(saltText, 'base64url'),
    expected.length,
    {
      N: Number(n),
      r: Number(r),
      p: Number(p),
      maxmem: SCRYPT_MAXMEM,
    },
    caller,
  );
  return crypto.timingSafeEqual(actual, expected);
}

/** A hash to verify against when no user matched, so a login costs the same either way. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(crypto.randomBytes(16).toString('hex'));
  return dummyHash;
}

/**
 * Session tokens and API keys carry 122+ bits of randomness, so a fast hash is enough to store
 * them: the database is looked up by the hash, never compared with the secret itself.
 */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

export const API_KEY_PATTERN = /^sl_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** `sl_` followed by a UUID v4 (docs/authentication.md), and the prefix shown in lists. */
export function newApiKey(): { key: string; prefix: string } {
  const key = `sl_${crypto.randomUUID()}`;
  return { key, prefix: key.slice(0, 11) };
}

export const SESSION_TOKEN_PREFIX = 'sls_';

export function newSessionToken(): string {
  return SESSION_TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
}
