import crypto from 'node:crypto';

/**
 * What the idempotency store keeps of a key and an answer. The Idempotency-Key is stored only as a
 * hash, and the answer sealed with a key derived from it (AES-256-GCM): answers of creates carry
 * secrets (a new API key, an alert's webhook secret; docs/authentication.md keeps secrets hashed),
 * and the table alone must not give them away. Only a request bearing the key can open its answer.
 * The key is the client's to make unguessable (docs/idempotency.md: a UUID v4).
 */

const KEY_HASH_LABEL = 'sightline idempotency key\0';
const SEAL_INFO = 'sightline idempotency answer';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function keyHash(idempotencyKey: string): Buffer {
  return crypto.createHash('sha256').update(KEY_HASH_LABEL).update(idempotencyKey, 'utf8').digest();
}

/** SHA-256 over what makes two requests "the same request": method, path with query, body bytes. */
export function requestHash(method: string, url: string, bodyDigest: Buffer): Buffer {
  return crypto.createHash('sha256').update(`${method} ${url}\n`).update(bodyDigest).digest();
}

function sealingKey(idempotencyKey: string, credential: string): Buffer {
  return Buffer.from(
    crypto.hkdfSync('sha256', Buffer.from(idempotencyKey, 'utf8'), Buffer.from(credential, 'utf8'), SEAL_INFO, 32),
  );
}

/** iv ‖ tag ‖ ciphertext. */
export function seal(idempotencyKey: string, credential: string, plain: Buffer): Buffer {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealingKey(idempotencyKey, credential), iv);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

/** The answer sealed by `seal`; throws when it was sealed under another key (never the case for a row found by its key hash). */
export function open(idempotencyKey: string, credential: string, sealed: Buffer): Buffer {
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const decipher = crypto.createDecipheriv('aes-256-gcm', sealingKey(idempotencyKey, credential), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

/** A pass-through of a request body that digests it on the way to the body parser. */
export class BodyDigest {
  private readonly hash = crypto.createHash('sha256');
  private digest: Buffer | undefined;

  update(chunk: Buffer): void {
    this.hash.update(chunk);
  }

  /** The digest of what passed so far (all of it, once the body was parsed; empty when there was none). */
  done(): Buffer {
    this.digest ??= this.hash.digest();
    return this.digest;
  }
}
