import { describe, expect, it } from 'vitest';
import { forgetVerifiedKeys, verifiedKey, VERIFIED_KEY_TTL_MS } from '../../src/auth/key-cache.js';
import type { ApiKeyPrincipal } from '../../src/auth/principal.js';
import type { PostgresStore } from '../../src/stores/postgres.js';

/** Verified API keys kept briefly on embedded Postgres (src/auth/key-cache.ts). */
describe('the verified key cache', () => {
  const store = (embedded = true) => ({ embedded }) as PostgresStore;
  const principal = (keyId: string, projectId = 'p1', workspaceId = 'w1'): ApiKeyPrincipal => ({
    kind: 'api_key',
    keyId,
    projectId,
    projectName: 'project',
    workspaceId,
    traceTtlDays: 30,
  });
  function counting(found: ApiKeyPrincipal | undefined, expiresAt: Date | null = null) {
    let loads = 0;
    return {
      load: async () => (loads++, found && { principal: found, expiresAt }),
      loads: () => loads,
    };
  }

  it('answers from memory within the TTL, then looks the key up again', async () => {
    const pg = store();
    let now = 1_000;
    const source = counting(principal('k1'));
    expect(await verifiedKey(pg, 'h1', source.load, () => now)).toEqual(principal('k1'));
    expect(await verifiedKey(pg, 'h1', source.load, () => now)).toEqual(principal('k1'));
    expect(source.loads()).toBe(1);
    now += VERIFIED_KEY_TTL_MS;
    await verifiedKey(pg, 'h1', source.load, () => now);
    expect(source.loads()).toBe(2);
  });

  it('never keeps a key past its expires_at, nor a refusal', async () => {
    const pg = store();
    let now = 1_000;
    const expiring = counting(principal('k1'), new Date(now + 100));
    await verifiedKey(pg, 'h1', expiring.load, () => now);
    now += 100;
    await verifiedKey(pg, 'h1', expiring.load, () => now);
    expect(expiring.loads()).toBe(2);
    const refused = counting(undefined);
    expect(await verifiedKey(pg, 'h2', refused.load, () => now)).toBeUndefined();
    expect(await verifiedKey(pg, 'h2', refused.load, () => now)).toBeUndefined();
    expect(refused.loads()).toBe(2);
  });

  it('drops the keys of a revoke, a project or a workspace at once, and only those', async () => {
    const pg = store();
    const keys = { h1: principal('k1', 'p1', 'w1'), h2: principal('k2', 'p2', 'w1'), h3: principal('k3', 'p3', 'w2') };
    const kept = async () => {
      const out: string[] = [];
      for (const [hash, key] of Object.entries(keys)) {
        const source = counting(key);
        await verifiedKey(pg, hash, source.load, () => 0);
        if (source.loads() === 0) out.push(hash);
      }
      return out;
    };
    await kept();
    expect(await kept()).toEqual(['h1', 'h2', 'h3']);
    forgetVerifiedKeys(pg, { keyId: 'k1' });
    expect(await kept()).toEqual(['h2', 'h3']);
    forgetVerifiedKeys(pg, { projectId: 'p2' });
    expect(await kept()).toEqual(['h1', 'h3']);
    forgetVerifiedKeys(pg, { workspaceId: 'w1' });
    expect(await kept()).toEqual(['h3']);
  });

  it('answers but does not keep a lookup that overlapped a forget (it may predate the write)', async () => {
    const pg = store();
    let release!: () => void;
    const slow = verifiedKey<ApiKeyPrincipal>(
      pg,
      'h1',
      () =>
        new Promise((resolve) => {
          release = () => resolve({ principal: principal('k1'), expiresAt: null });
        }),
      () => 0,
    );
    forgetVerifiedKeys(pg, { keyId: 'k1' });
    release();
    expect(await slow).toEqual(principal('k1'));
    const again = counting(principal('k1'));
    await verifiedKey(pg, 'h1', again.load, () => 0);
    expect(again.loads()).toBe(1);
  });

  it('keeps nothing on a Postgres server (shared by processes): every request looks its key up', async () => {
    const pg = store(false);
    const source = counting(principal('k1'));
    await verifiedKey(pg, 'h1', source.load, () => 0);
    await verifiedKey(pg, 'h1', source.load, () => 0);
    expect(source.loads()).toBe(2);
  });
});
