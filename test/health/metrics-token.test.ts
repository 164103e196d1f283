import { describe, expect, it } from 'vitest';
import { call, useHarness } from '../support/harness.js';

/** Issue 20: `/metrics` answered without a credential. With METRICS_TOKEN set it needs the bearer token. */

const TOKEN = 'metrics-token-0123456789abcdef';
const h = useHarness({ METRICS_TOKEN: TOKEN });

describe('/metrics with METRICS_TOKEN', () => {
  it('answers 401 without the token or with a wrong one, and the Prometheus text with it', async () => {
    for (const token of [undefined, 'wrong-token', `${TOKEN}x`]) {
      const res = await call(h().api, { method: 'GET', url: '/metrics', token });
      expect(res.statusCode, res.body).toBe(401);
      expect(res.json()).toEqual({ detail: '/metrics needs Authorization: Bearer <METRICS_TOKEN>' });
      expect(res.body).not.toContain('sightline_http_request_duration_seconds');
    }
    const res = await call(h().api, { method: 'GET', url: '/metrics', token: TOKEN });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/sightline_http_request_duration_seconds/);
  });
});
