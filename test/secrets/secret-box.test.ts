import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSecretBox, parseKey, secretBox, SecretBoxError, SECRETS_KEY_FILE } from '../../src/secrets/secret-box.js';
import { loadConfig } from '../../src/config.js';
import { tempDataDir } from '../support/harness.js';

const key = () => crypto.randomBytes(32);

describe('the secret box', () => {
  it('seals to a versioned value that hides the secret and opens to it again', () => {
    const box = secretBox(key());
    const sealed = box.seal('sk-live-abcdef123456');
    expect(sealed).toMatch(new RegExp(`^sb1\\.${box.keyId}\\.[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('abcdef');
    expect(box.open(sealed)).toBe('sk-live-abcdef123456');
    // A fresh IV each time: the same secret never seals to the same text.
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('opens values sealed under a previous key after a rotation, and seals under the new one', () => {
    const [oldKey, newKey] = [key(), key()];
    const sealedBefore = secretBox(oldKey).seal('old secret');
    const rotated = secretBox(newKey, [oldKey]);
    expect(rotated.open(sealedBefore)).toBe('old secret');
    expect(rotated.seal('x').split('.')[1]).toBe(rotated.keyId);
    expect(() => secretBox(newKey).open(sealedBefore)).toThrow(SecretBoxError);
  });

  it('refuses tampered, relabelled and unknown values with fixed sentences', () => {
    const k = key();
    const box = secretBox(k);
    const sealed = box.seal('secret');
    const [v, id, payload] = sealed.split('.') as [string, string, string];
    const bytes = Buffer.from(payload, 'base64url');
    bytes[bytes.length - 1]! ^= 1;
    expect(() => box.open(`${v}.${id}.${bytes.toString('base64url')}`)).toThrow('does not open under its key');
    expect(() => box.open(`sb2.${id}.${payload}`)).toThrow('not in a known format');
    expect(() => box.open(`${v}.deadbeef.${payload}`)).toThrow('needs key deadbeef');
    expect(() => box.open('plain text')).toThrow(SecretBoxError);
  });

  it('reads keys in hex and base64 only when they are 32 bytes', () => {
    const k = key();
    expect(parseKey(k.toString('hex'))).toEqual(k);
    expect(parseKey(k.toString('base64'))).toEqual(k);
    expect(parseKey(k.toString('base64url'))).toEqual(k);
    expect(parseKey('too-short')).toBeNull();
    expect(parseKey(crypto.randomBytes(16).toString('hex'))).toBeNull();
    expect(() => loadConfig({ SECRETS_KEY: 'nope' })).toThrow('SECRETS_KEY');
    expect(loadConfig({ SECRETS_KEY: k.toString('hex') }).secrets.key).toBe(k.toString('hex'));
  });

  it('without SECRETS_KEY, generates one key into the data directory (0600) and keeps using it', () => {
    const dataDir = tempDataDir('secrets');
    const first = loadSecretBox({ previousKeys: [], dataDir });
    const file = path.join(dataDir, SECRETS_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const sealed = first.seal('kept');
    const again = loadSecretBox({ previousKeys: [], dataDir });
    expect(again.keyId).toBe(first.keyId);
    expect(again.open(sealed)).toBe('kept');
  });
});
