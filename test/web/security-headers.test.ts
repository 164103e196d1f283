import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, signUp, testConfig, useHarness } from '../support/harness.js';
import { webDirectives } from '../../src/web/security-headers.js';

/**
 * The web origin's security headers (src/web/security-headers.ts): a Content-Security-Policy that
 * allows the built application, the API origin and, on the CLI login page only, the loopback origin
 * its form ends up at; no CORS; and a Secure session cookie whenever the browser came over https,
 * directly or through a trusted proxy. The browser tests (test/web/*) fail on any CSP violation.
 */

// Injected requests come from 127.0.0.1: that "proxy" is trusted; any other address is not.
const h = useHarness({ TRUST_PROXY: '127.0.0.1' });

const policy = (header: unknown): Map<string, string[]> =>
  new Map(
    String(header)
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
const form = (fields: Record<string, string>) => ({
  payload: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});
const sha256 = (text: string) => `'sha256-${crypto.createHash('sha256').update(text, 'utf8').digest('base64')}'`;

describe('web origin: Content-Security-Policy and the other helmet headers', () => {
  it('sends the page policy with the application: own scripts only, the API origin for fetches, no framing', async () => {
    const res = await call(h().web, { method: 'GET', url: '/projects/p/traces' });
    expect(res.statusCode).toBe(200);
    const csp = policy(res.headers['content-security-policy']);
    expect(Object.fromEntries(csp)).toMatchObject({
      'default-src': ["'self'"],
      'script-src': ["'self'"],
      'script-src-attr': ["'none'"],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'", 'http://api.test'],
      'object-src': ["'none'"],
      'base-uri': ["'none'"],
      'frame-ancestors': ["'none'"],
      'form-action': ["'self'"],
    });
    // Styles: the origin's sheets and two hashed inline blocks, never 'unsafe-inline'.
    expect(csp.get('style-src')![0]).toBe("'self'");
    expect(
      csp
        .get('style-src')!
        .slice(1)
        .every((s) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(s)),
    ).toBe(true);
    expect(String(res.headers['content-security-policy'])).not.toMatch(/unsafe-(inline|eval)|\*/);
    // No https in WEB_URL: no upgrade of the loopback/http requests a local install makes.
    expect(csp.has('upgrade-insecure-requests')).toBe(false);
    expect(res.headers).toMatchObject({
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'referrer-policy': 'no-referrer',
      'strict-transport-security': expect.stringMatching(/^max-age=\d+/),
    });
    expect(res.headers['x-powered-by']).toBeUndefined();

    // The JSON routes carry them too.
    const json = await call(h().web, { method: 'GET', url: '/api/auth/session' });
    expect(json.statusCode).toBe(401);
    expect(json.headers['content-security-policy']).toBe(res.headers['content-security-policy']);
    expect(json.headers['x-content-type-options']).toBe('nosniff');
  });

  it('lets the CLI login page send its form on to exactly its loopback redirect_uri, and allows its inline style', async () => {
    const redirect = 'http://127.0.0.1:8765/callback';
    const page = await call(h().web, {
      method: 'GET',
      url: `/cli/login?${new URLSearchParams({ redirect_uri: redirect, state: 's1' })}`,
    });
    expect(page.statusCode).toBe(200);
    const csp = policy(page.headers['content-security-policy']);
    expect(csp.get('form-action')).toEqual(["'self'", 'http://127.0.0.1:8765']);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    const inline = /<style>([\s\S]*?)<\/style>/.exec(page.body)![1]!;
    expect(csp.get('style-src')).toContain(sha256(inline));
    expect(page.body).not.toMatch(/<script|style="/);

    const localhost = await call(h().web, {
      method: 'GET',
      url: `/cli/login?${new URLSearchParams({ redirect_uri: 'http://localhost:9000/cb' })}`,
    });
    expect(policy(localhost.headers['content-security-policy']).get('form-action')).toEqual([
      "'self'",
      'http://localhost:9000',
    ]);

    // The page drawn again after a wrong password keeps the same allowance; other pages never have it.
    const user = await signUp(h(), 'csp');
    const again = await call(h().web, {
      method: 'POST',
      url: '/cli/login',
      ...form({ redirect_uri: redirect, state: 's1', email: user.user.email, password: 'wrong password' }),
    });
    expect(again.statusCode).toBe(401);
    expect(policy(again.headers['content-security-policy']).get('form-action')).toEqual([
      "'self'",
      'http://127.0.0.1:8765',
    ]);
    const home = await call(h().web, { method: 'GET', url: '/' });
    expect(policy(home.headers['content-security-policy']).get('form-action')).toEqual(["'self'"]);
  });

  it('adds upgrade-insecure-requests when WEB_URL is https, and lists the API origin once when it is the same', () => {
    const https = webDirectives(
      testConfig({ WEB_URL: 'https://sightline.example', BASE_URL: 'https://api.sightline.example/' }),
    );
    expect(https['upgrade-insecure-requests']).toEqual([]);
    expect(https['connect-src']).toEqual(["'self'", 'https://api.sightline.example']);
    const same = webDirectives(
      testConfig({ WEB_URL: 'https://sightline.example', BASE_URL: 'https://sightline.example' }),
    );
    expect(same['connect-src']).toEqual(["'self'"]);
  });
});

describe('web origin: no CORS', () => {
  it('grants no cross-origin page a read or a preflight', async () => {
    const origin = 'https://evil.example';
    const preflight = await call(h().web, {
      method: 'OPTIONS',
      url: '/app-api/projects',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-sightline-csrf,content-type',
      },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-headers']).toBeUndefined();
    const read = await call(h().web, { method: 'GET', url: '/api/auth/session', headers: { origin } });
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    expect(read.headers['access-control-allow-credentials']).toBeUndefined();
  });
});

describe('web origin: the session cookie over https', () => {
  it("reads TRUST_PROXY as Fastify's forms: off by default, true, a hop count, or a list of addresses", () => {
    expect(testConfig({}).trustProxy).toBe(false);
    expect(testConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(testConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(testConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(testConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
  });

  const login = async (headers: Record<string, string>, remoteAddress?: string) => {
    const user = await signUp(h(), 'cookie');
    const res = await h().web.inject({
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'x-sightline-csrf': '1', ...headers },
      payload: { email: user.user.email, password: user.password },
      ...(remoteAddress ? { remoteAddress } : {}),
    });
    expect(res.statusCode).toBe(200);
    return String(res.headers['set-cookie']);
  };

  it('is Secure when a trusted proxy says the browser came over https, and only then', async () => {
    expect(await login({ 'x-forwarded-proto': 'https' })).toMatch(
      /^sightline_session=[^;]+;.*; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(await login({})).not.toMatch(/Secure/);
    // From an address that is not the trusted proxy, the header is the client's word: ignored.
    expect(await login({ 'x-forwarded-proto': 'https' }, '203.0.113.9')).not.toMatch(/Secure/);

    const user = await signUp(h(), 'logout');
    const session = await h().web.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { authorization: `Bearer ${user.token}`, 'x-forwarded-proto': 'https' },
    });
    expect(session.statusCode).toBe(204);
    expect(String(session.headers['set-cookie'])).toMatch(/^sightline_session=;.*Secure/);
  });
});
