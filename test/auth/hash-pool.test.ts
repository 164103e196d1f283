import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HASH_THREADS, hashPool } from '../../src/auth/hash-pool.js';

/**
 * The hashing pool serves its waiting hashes round-robin by caller (src/auth/hash-pool.ts): one
 * address's burst queues behind itself, and another caller's hash waits for at most one of it.
 */
describe('the hashing pool', () => {
  it("serves another caller's hash before the rest of one caller's burst", async () => {
    const job = () => ({
      password: 'p',
      salt: crypto.randomBytes(16),
      keylen: 32,
      N: 1 << 14,
      r: 8,
      p: 1,
      maxmem: 64 * 1024 * 1024,
    });
    const done: string[] = [];
    const burst = Array.from({ length: HASH_THREADS + 8 }, (_, i) =>
      hashPool.run(job(), 'burst').then(() => done.push(`burst-${i}`)),
    );
    // Queued after the whole burst: first come first served would finish it last.
    const other = hashPool.run(job(), 'other').then(() => done.push('other'));
    await Promise.all([...burst, other]);
    // Running: HASH_THREADS of the burst; then one more of the burst (its turn came first), then 'other'.
    expect(done.indexOf('other')).toBeLessThanOrEqual(HASH_THREADS + 1);
    expect(done).toHaveLength(HASH_THREADS + 9);
  });
});
