import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, signUp, uniqueEmail, useHarness } from '../support/harness.js';
import { loginsPerAddress, loginsPerEmail } from '../../src/rate-limits.js';

/**
 * Issue 20, finding 3 (budgets): logins with a different unknown e-mail each time were never limited
 * (the budget keyed on address and e-mail together), and every attempt costs a 32 MiB hash. Failed
 * logins now also have a budget per address across e-mails and per e-mail across addresses.
 */
const h = useHarness({ RATE_LIMIT_LOGIN_PER_MINUTE: '3' });

/** Each test its own addresses: with Redis the counters are shared by every test file of the run. */
const address = () => `10.${crypto.randomInt(1, 250)}.${crypto.randomInt(1, 250)}.${crypto.randomInt(1, 250)}`;

function login(email: string, password: string, remoteAddress: string) {
  return call(h().web, { method: 'POST', url: '/api/auth/login', payload: { email, password }, remoteAddress });
}

function expect429(res: Awaited<ReturnType<typeof login>>, scope: RegExp): void {
  expect(res.statusCode, res.body).toBe(429);
  expect(Object.keys(res.json())).toEqual(['detail']);
  expect(res.json().detail).toMatch(/^rate limit exceeded: at most \d+ requests per minute for failed logins /);
  expect(res.json().detail).toMatch(scope);
  expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
}

describe('login budgets across e-mails and addresses', () => {
  it('one address trying a new unknown e-mail each time is refused once its failures are spent', async () => {
    const from = address();
    const budget = loginsPerAddress(h().config);
    expect(budget).toBe(12);
    for (let i = 0; i < budget; i++)
      expect((await login(uniqueEmail('unknown'), 'whatever-guess', from)).statusCode).toBe(401);
    expect429(await login(uniqueEmail('unknown'), 'whatever-guess', from), /from this address, whatever the e-mail/);
    // Even a right password waits: the budget is checked before any hashing.
    const user = await signUp(h(), 'office');
    expect429(await login(user.user.email, user.password, from), /from this address/);
    // Other addresses are not affected, and successful logins never spend the per-e-mail budget.
    for (let i = 0; i < loginsPerEmail(h().config) + 2; i++)
      expect((await login(user.user.email, user.password, address())).statusCode).toBe(200);
  });

  it('one e-mail guessed from a new address each time is refused once its failures are spent', async () => {
    const user = await signUp(h(), 'target');
    const budget = loginsPerEmail(h().config);
    for (let i = 0; i < budget; i++)
      expect((await login(user.user.email, `guess-${i}-wrong`, address())).statusCode).toBe(401);
    expect429(await login(user.user.email, 'guess-again-wrong', address()), /to this e-mail, whatever the address/);
    // Another account from the same addresses logs in.
    const other = await signUp(h(), 'other');
    expect((await login(other.user.email, other.password, address())).statusCode).toBe(200);
  });
});
