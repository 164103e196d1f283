import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, uniqueEmail, useHarness } from '../support/harness.js';
import { OTHER_TENANT_BOUND_MS, timed } from '../support/other-tenant.js';
import { ingestSpans } from '../support/ingest.js';
import { HASH_QUEUE, HASH_THREADS, hashPool } from '../../src/auth/hash-pool.js';
import { hashPassword } from '../../src/auth/secrets.js';
import { TooManyRequestsError } from '../../src/errors.js';

/**
 * Issue 20, finding 3 (starvation): 16 logins at once, each with a new unknown e-mail, made another
 * tenant's `GET /traces?limit=1` take 50 s: scrypt ran on libuv's threadpool, which the embedded
 * engine's work shares. Hashing now runs on its own bounded pool of worker threads.
 */
const h = useHarness();

/** Another tenant's reads while the logins run must be answered within this (the behaviour under test). */
describe('logins cannot starve reads', () => {
  it('16 concurrent unknown-e-mail logins: another tenant reads traces and logs in within the bound', async () => {
    const other = await projectWithKey(h(), 'reader');
    await ingestSpans(h(), other.key.key, [
      { trace_id: 'r-1', span_id: 's', name: 'n', start_time: new Date(Date.now() - 60_000).toISOString() },
    ]);
    // The attacker's own address: with Redis, login counters are shared by every test file of the run.
    const attacker = `10.77.${crypto.randomInt(1, 250)}.${crypto.randomInt(1, 250)}`;

    let most = 0;
    let done = false;
    const watch = (async () => {
      while (!done) {
        most = Math.max(most, hashPool.load().running);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const logins = Promise.all(
      Array.from({ length: 16 }, () =>
        call(h().web, {
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: uniqueEmail('nobody'), password: 'guess-guess' },
          remoteAddress: attacker,
        }),
      ),
    );
    const meanwhile = await Promise.all([
      timed(() =>
        call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: other.key.key, query: { limit: '1' } }),
      ),
      timed(() =>
        call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/traces`,
          token: other.owner.token,
          query: { limit: '1', project_id: other.project.id },
        }),
      ),
      timed(() =>
        call(h().web, {
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: other.owner.user.email, password: other.owner.password },
        }),
      ),
    ]);
    const answers = await logins;
    done = true;
    await watch;

    // Reproduced: none of the 16 is refused by a budget (the per-address budget is larger than 16)…
    expect(answers.map((r) => r.statusCode)).toEqual(Array(16).fill(401));
    // …and the other tenant is answered within the bound, with hashing never wider than its pool.
    for (const answer of meanwhile) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
    }
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(HASH_THREADS);
  });

  it(`past ${HASH_THREADS} running and ${HASH_QUEUE} waiting, a hash is refused at once with a 429`, async () => {
    const extra = 3;
    const results = await Promise.allSettled(
      Array.from({ length: HASH_THREADS + HASH_QUEUE + extra }, (_, i) => hashPassword(`password-${i}`)),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(extra);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(TooManyRequestsError);
    expect(
      results
        .filter((r) => r.status === 'fulfilled')
        .every((r) => (r as PromiseFulfilledResult<string>).value.startsWith('scrypt$')),
    ).toBe(true);
    expect(hashPool.load()).toEqual({ running: 0, queued: 0 });
  });
});
