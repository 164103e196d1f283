import { describe, expect, it } from 'vitest';
import helmet from 'helmet';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/** Security headers and CORS on the api origin (src/security-headers.ts). */

const h = useHarness({ CORS_ORIGINS: 'https://dash.example.com' });

describe('api security headers and CORS', () => {
  it('answers with helmet headers', async () => {
    const { key } = await projectWithKey(h());
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it("sets every header helmet's own middleware sets, on answers, refusals and unknown routes alike", async () => {
    // What helmet sets for the API's options, seen through a real response object.
    const { ServerResponse, IncomingMessage } = await import('node:http');
    const { Socket } = await import('node:net');
    const req = new IncomingMessage(new Socket());
    const raw = new ServerResponse(req);
    helmet({ contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'same-site' } })(req, raw, () => {});
    const expected = raw.getHeaders();
    expect(Object.keys(expected).length).toBeGreaterThanOrEqual(10);
    const { key } = await projectWithKey(h());
    const answers = [
      await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key.key }),
      await call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: 'sk-not-a-key' }),
      await call(h().api, { method: 'GET', url: `${PUBLIC}/no-such-route`, token: key.key }),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 401, 404]);
    for (const res of answers)
      for (const [name, value] of Object.entries(expected)) expect(res.headers[name], name).toBe(String(value));
    expect(answers[0]!.headers['content-security-policy']).toBeUndefined();
  });

  it('lets the web origin and the configured origins call it from a browser, with a bearer and no cookies', async () => {
    for (const origin of ['http://web.test', 'https://dash.example.com']) {
      const preflight = await call(h().api, {
        method: 'OPTIONS',
        url: `${PUBLIC}/traces`,
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
      });
      expect(preflight.statusCode).toBe(204);
      expect(preflight.headers['access-control-allow-origin']).toBe(origin);
      expect(String(preflight.headers['access-control-allow-headers'])).toContain('authorization');
      expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
    }
  });

  it('refuses every other origin', async () => {
    const preflight = await call(h().api, {
      method: 'OPTIONS',
      url: `${PUBLIC}/traces`,
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    const { key } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/whoami`,
      token: key.key,
      headers: { origin: 'https://evil.example' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});
