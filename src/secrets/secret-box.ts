import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Secrets at rest (docs/operations.md, "Secrets at rest"): tenant credentials such as LLM provider
 * keys are sealed with AES-256-GCM before they reach a store, and opened only where they are used.
 *
 * A sealed value reads `sb1.<key id>.<base64url(iv | tag | ciphertext)>`: the version prefix says
 * how to open it, and the key id (the first 8 hex digits of the key's SHA-256) which key sealed it,
 * so a deployment rotates by making the new key current and keeping the old one among the previous
 * keys until every value has been sealed again. The plaintext and the keys are never logged: the
 * box's own errors carry fixed sentences only.
 */

const VERSION = 'sb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** The file an embedded deployment keeps its generated key in, inside DATA_DIR. */
export const SECRETS_KEY_FILE = 'secrets.key';

export class SecretBoxError extends Error {}

export type SecretBox = Readonly<{
  /** Seals a secret under the current key. */
  seal(plaintext: string): string;
  /** Opens a value sealed under the current key or a previous one; throws SecretBoxError otherwise. */
  open(sealed: string): string;
  /** The id of the current key (not secret: a hash prefix), so an operator can see what a value needs. */
  keyId: string;
  /**
   * A 32-byte key for one purpose (`label`), derived from the current key (HMAC-SHA256): keyed hashes
   * (masking's `hash`) use it, so the stores never hold what would reverse them. Rotating the key
   * changes what it derives.
   */
  derive(label: string): Buffer;
}>;

/** A 32-byte key written as 64 hex digits or as base64/base64url (44 or 43 characters); null when neither. */
export function parseKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (key.length === KEY_BYTES) return key;
  }
  return null;
}

function keyIdOf(key: Buffer): string {
  return crypto.createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** A box over the current key and any previous ones (for values sealed before a rotation). */
export function secretBox(current: Buffer, previous: readonly Buffer[] = []): SecretBox {
  if (current.length !== KEY_BYTES) throw new SecretBoxError('the secrets key must be 32 bytes');
  const keys = new Map<string, Buffer>();
  for (const k of [current, ...previous]) keys.set(keyIdOf(k), k);
  const currentId = keyIdOf(current);
  return Object.freeze({
    keyId: currentId,
    derive(label: string): Buffer {
      return crypto.createHmac('sha256', current).update(`sightline-derive:${label}`).digest();
    },
    seal(plaintext: string): string {
      const iv = crypto.randomBytes(IV_BYTES);
      const cipher = crypto.createCipheriv('aes-256-gcm', current, iv);
      // The version and key id are authenticated too, so a value can't be relabelled to another key.
      cipher.setAAD(Buffer.from(`${VERSION}.${currentId}`));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${VERSION}.${currentId}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
    },
    open(sealed: string): string {
      const [version, id, payload, ...rest] = sealed.split('.');
      if (version !== VERSION || !id || payload === undefined || rest.length > 0)
        throw new SecretBoxError('the sealed value is not in a known format');
      const key = keys.get(id);
      if (!key) throw new SecretBoxError(`the sealed value needs key ${id}, which is not configured`);
      const bytes = Buffer.from(payload, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretBoxError('the sealed value is cut short');
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
        decipher.setAAD(Buffer.from(`${VERSION}.${id}`));
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new SecretBoxError('the sealed value does not open under its key');
      }
    },
  });
}

/**
 * The deployment's box: SECRETS_KEY (and SECRETS_PREVIOUS_KEYS) when set; otherwise a key generated
 * once into DATA_DIR/secrets.key with mode 0600 and read from there on every start. A server
 * deployment with several processes sets SECRETS_KEY, so they all open what any of them sealed.
 */
export function loadSecretBox(options: { key?: string; previousKeys: readonly string[]; dataDir: string }): SecretBox {
  const previous = options.previousKeys.map((text) => {
    const key = parseKey(text);
    if (!key) throw new SecretBoxError('SECRETS_PREVIOUS_KEYS holds a key that is not 32 bytes in hex or base64');
    return key;
  });
  if (options.key !== undefined) {
    const key = parseKey(options.key);
    if (!key) throw new SecretBoxError('SECRETS_KEY must be 32 bytes in hex or base64');
    return secretBox(key, previous);
  }
  return secretBox(keyFile(path.resolve(options.dataDir, SECRETS_KEY_FILE)), previous);
}

function keyFile(file: string): Buffer {
  try {
    const key = parseKey(fs.readFileSync(file, 'utf8'));
    if (!key) throw new SecretBoxError(`${file} does not hold a 32-byte key in hex or base64`);
    return key;
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const key = crypto.randomBytes(KEY_BYTES);
  try {
    // `wx`: two processes starting at once on one data directory keep the first key written.
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  } catch (error) {
    if ((error as { code?: string }).code === 'EEXIST') return keyFile(file);
    throw error;
  }
}
