import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { listening, rawRequest } from '../support/raw-http.js';
import { MAX_PARAM_LENGTH } from '../../src/http.js';

/**
 * Errors Fastify and Node's HTTP parser raise before or around a route (issue 9, part 4) come out of
 * the one error map as `{detail: string}`, on the api and the web app alike; never Fastify's own
 * `{error, code, message}` body, never a stack.
 */

const h = useHarness();

function expectDetail(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
): string {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['detail']);
  expect(typeof body.detail).toBe('string');
  expect(res.body).not.toMatch(/FST_|node_modules|\.js:\d|\n\s+at /);
  return body.detail as string;
}

function expectPathValidation(res: LightMyRequestResponse, param: string) {
  expect(res.statusCode, res.body).toBe(422);
  expect(res.json().detail).toEqual([expect.objectContaining({ loc: ['path', param], type: 'string_too_long' })]);
}

describe('path parameters', () => {
  it('reads a trace whose id has the longest length ingest accepts (128), which the router used to refuse', async () => {
    const { key } = await projectWithKey(h());
    const traceId = 't'.repeat(128);
    await ingestSpans(h(), key.key, [
      { trace_id: traceId, span_id: 'root', name: 'long id', start_time: iso(Date.now() - 60_000) },
    ]);
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key.key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().trace_id).toBe(traceId);
  });

  it('answers an id longer than the route takes with 422 at path, and one past the router limit with 414 {detail}', async () => {
    const { key } = await projectWithKey(h());
    expectPathValidation(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${'x'.repeat(129)}`, token: key.key }),
      'trace_id',
    );
    expectPathValidation(
      await call(h().api, { method: 'GET', url: `${PUBLIC}/sessions/${'x'.repeat(1025)}`, token: key.key }),
      'session_id',
    );
    // A session id of the longest length, percent-encoded (3 bytes a character), still reaches the route.
    const encoded = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/sessions/${'%C3%A9'.repeat(512)}`,
      token: key.key,
    });
    expectDetail(encoded, 404);
    const tooLong = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces/${'x'.repeat(MAX_PARAM_LENGTH + 1)}`,
      token: key.key,
    });
    expect(expectDetail(tooLong, 414)).toBe('a path parameter is too long');
  });

  it('answers a path that is not valid percent-encoding with 400 {detail}, without echoing it', async () => {
    const { key } = await projectWithKey(h());
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/%E0%A4%A`, token: key.key });
    expect(expectDetail(res, 400)).toBe('the request URL is not valid');
  });
});

describe('bodies', () => {
  it('answers an unsupported content type with 415 {detail}', async () => {
    const { owner } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: owner.token,
      headers: { 'content-type': 'application/xml' },
      payload: '<name>x</name>',
    });
    expectDetail(res, 415);
  });

  it('answers ingest bodies that are too large (413), not gzip (400) or not JSON (400) with {detail}', async () => {
    const { key } = await projectWithKey(h());
    const big = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers: { 'content-type': 'application/json' },
      payload: `{"spans":["${'x'.repeat(10 * 1024 * 1024)}"]}`,
    });
    expectDetail(big, 413);
    const notGzip = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: 'plain',
    });
    expect(expectDetail(notGzip, 400)).toBe('request body is not valid gzip');
    const badJson = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: key.key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: zlib.gzipSync('{"spans": ['),
    });
    expect(expectDetail(badJson, 400)).toBe('request body is not valid JSON');
  });

  it('answers a JSON body carrying __proto__ with 400 {detail}', async () => {
    const { owner } = await projectWithKey(h());
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/workspaces`,
      token: owner.token,
      headers: { 'content-type': 'application/json' },
      payload: '{"name": "x", "__proto__": {"admin": true}}',
    });
    expectDetail(res, 400);
  });
});

describe('routes', () => {
  it('answers unknown routes and methods with 404 {detail} on both apps', async () => {
    expectDetail(await call(h().api, { method: 'DELETE', url: '/healthz' }), 404);
    expectDetail(await call(h().web, { method: 'GET', url: '/api/no/such/route' }), 404);
    // Any other path is a page of the web application, whose router draws its own not-found page.
    const page = await call(h().web, { method: 'GET', url: '/no/such/page' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expectDetail(await call(h().web, { method: 'PUT', url: '/api/auth/login', payload: {} }), 404);
    expect(expectDetail(await call(h().web, { method: 'GET', url: '/%E0%A4%A' }), 400)).toBe(
      'the request URL is not valid',
    );
  });
});

describe("requests Node's HTTP parser refuses", () => {
  for (const app of ['api', 'web'] as const) {
    it(`${app}: headers too large answer 431 {detail}; a malformed request 400 {detail}`, async () => {
      const port = await listening(h()[app]);
      const huge = await rawRequest(
        port,
        `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\nConnection: close\r\n\r\n`,
      );
      expect(huge.status).toBe(431);
      expect(JSON.parse(huge.body)).toEqual({ detail: 'request headers are too large' });
      expect(huge.headers['content-type']).toMatch(/^application\/json/);
      const garbage = await rawRequest(port, 'THIS IS NOT HTTP\r\n\r\n');
      expect(garbage.status).toBe(400);
      expect(JSON.parse(garbage.body)).toEqual({ detail: 'the request is not valid HTTP' });
      // The server still answers well-formed requests afterwards.
      const ok = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(ok.status).toBe(200);
    });
  }
});
