import zlib from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';

/**
 * Bad input never gets a 500 (property-based, fast-check): every public route the OpenAPI document
 * lists gets arbitrary path parameters, query strings, bodies and content types, with an API key, a
 * user session or nothing. Every answer must be below 500, and every 4xx must be the spec's envelope
 * (`{detail: string}`, or 422 `{detail: [{loc, msg, type}]}`). A 4xx to ingest stores nothing.
 */

const h = useHarness();
type World = Awaited<ReturnType<typeof projectWithKey>>;
let world: World;
let routes: { method: string; path: string }[] = [];

beforeAll(async () => {
  world = await projectWithKey(h(), 'fuzz');
  const doc = (await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  routes = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => ({ method: method.toUpperCase(), path })),
  );
});

function expectEnvelope(res: LightMyRequestResponse, label: string): void {
  expect(res.statusCode, `${label} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeLessThan(500);
  if (res.statusCode < 400) return;
  let body: { detail?: unknown };
  try {
    body = JSON.parse(res.body);
  } catch {
    throw new Error(`${label} → ${res.statusCode} answered non-JSON: ${res.body.slice(0, 200)}`);
  }
  expect(Object.keys(body), `${label} → ${res.body.slice(0, 300)}`).toEqual(['detail']);
  if (res.statusCode === 422) {
    expect(Array.isArray(body.detail), label).toBe(true);
    for (const d of body.detail as { loc: unknown; msg: unknown; type: unknown }[]) {
      expect(
        Array.isArray(d.loc) && typeof d.msg === 'string' && typeof d.type === 'string',
        `${label}: ${JSON.stringify(d)}`,
      ).toBe(true);
    }
  } else {
    expect(typeof body.detail, `${label} → ${res.body.slice(0, 300)}`).toBe('string');
  }
  expect(res.body, label).not.toMatch(/\n\s+at |node_modules|DB::Exception/);
}

const segment = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    '',
    '0',
    '-1',
    '..',
    '%2e%2e',
    '%00',
    'null',
    'undefined',
    '00000000-0000-0000-0000-000000000000',
    'x'.repeat(300),
    '%E2%82',
    '__proto__',
    "'; DROP TABLE x; --",
  ),
);
const scalar = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.constantFrom('', 'true', 'null', '[]', '{}', '-1', '1e309', '99999999999999999999', 'NaN', '2026-13-45T99:99:99Z'),
);
const queryKeys = fc.constantFrom(
  'project_id',
  'limit',
  'page',
  'filters',
  'start_time',
  'end_time',
  'range',
  'status',
  'cursor',
  'other',
  'threshold',
  'signal_id',
  'detector_id',
  'start_after',
  'end_before',
  'include_evaluations',
  'name',
  '__proto__',
  'constructor',
);
const query = fc.dictionary(queryKeys, scalar, { maxKeys: 4 });
const deep = (n: number): unknown => (n === 0 ? 1 : { a: [deep(n - 1)] });
const jsonBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record(
    {
      name: scalar,
      project_id: fc.oneof(scalar, fc.constant('{own}')),
      query: scalar,
      spans: fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
      spec: fc.jsonValue({ maxDepth: 3 }),
    },
    { requiredKeys: [] },
  ),
  fc.constant(deep(200)),
  fc.constant({ __proto__: { admin: true }, constructor: { prototype: { x: 1 } } }),
);
const rawBody = fc.oneof(
  jsonBody.map((b) => ({ type: 'application/json', payload: JSON.stringify(b) })),
  fc.constant({ type: 'application/json', payload: '{"a": ' }),
  fc.constant({ type: 'application/json', payload: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) }),
  fc.string({ maxLength: 50 }).map((s) => ({ type: 'text/plain', payload: s })),
  fc.constant({ type: 'application/x-www-form-urlencoded', payload: 'a=1&b=%ZZ' }),
  fc.constant({ type: 'application/xml', payload: '<a/>' }),
);
const credential = fc.constantFrom('key', 'session', 'none', 'garbage');

describe('bad input never gets a 500', () => {
  it(
    'every public route, arbitrary path parameters, query strings, bodies, content types and credentials',
    { timeout: 600_000 },
    async () => {
      expect(routes.length).toBeGreaterThan(20);
      await fc.assert(
        fc.asyncProperty(
          fc.nat(),
          fc.array(segment, { minLength: 4, maxLength: 4 }),
          query,
          rawBody,
          credential,
          async (pick, segments, q, body, who) => {
            const route = routes[pick % routes.length]!;
            let i = 0;
            const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(segments[i++] ?? 'x'));
            const search = new URLSearchParams(
              Object.entries(q).map(([k, v]) => [k, v === '{own}' ? world.project.id : v]),
            );
            const token =
              who === 'key'
                ? world.key.key
                : who === 'session'
                  ? world.owner.token
                  : who === 'garbage'
                    ? 'sl_not-a-key'
                    : undefined;
            const withBody = route.method === 'POST' || route.method === 'PATCH';
            const payload =
              withBody && typeof body.payload === 'string'
                ? body.payload.replace('"{own}"', JSON.stringify(world.project.id))
                : body.payload;
            const res = await call(h().api, {
              method: route.method as 'GET',
              url: `${path}${search.size ? `?${search}` : ''}`,
              token,
              ...(withBody ? { headers: { 'content-type': body.type }, payload } : {}),
            });
            expectEnvelope(res, `${route.method} ${path}?${search} (${who}, ${withBody ? body.type : 'no body'})`);
          },
        ),
        { numRuns: Number(process.env.BAD_INPUT_RUNS ?? 4000), seed: 20261123 },
      );
    },
  );

  it('answers a body nested 110 levels deep on the exact-JSON routes (the scan once spun on it for ever)', async () => {
    const nested = (n: number): unknown => (n === 0 ? 1 : { a: [nested(n - 1)], s: 'text' });
    for (const url of [`${PUBLIC}/evaluation-runs/x/results`, `${PUBLIC}/datasets/x/versions`]) {
      const res = await call(h().api, {
        method: 'POST',
        url,
        token: world.key.key,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({
          results: [{ test_case_id: 'c', output: nested(55) }],
          test_cases: [{ input: nested(55), expected: 1 }],
        }),
      });
      expectEnvelope(res, `deep body on ${url}`);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
    }
  });

  it('ingest stores nothing from a refused request: a gzip bomb is a 413, bad spans a 4xx', async () => {
    const count = async () =>
      Number(
        (
          await (
            await h().ctx.ch.client.query({
              query: `SELECT count() AS n FROM ${h().ctx.ch.database}.spans WHERE project_id = {p:String}`,
              query_params: { p: world.project.id },
              format: 'JSONEachRow',
            })
          ).json<{ n: string }>()
        )[0]!.n,
      );
    const before = await count();
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20));
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: world.key.key,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: bomb,
    });
    expect(res.statusCode, res.body).toBe(413);
    expectEnvelope(res, 'gzip bomb');
    for (const spans of [[{}], [{ trace_id: 1 }], 'x', [null], Array.from({ length: 10_001 }, () => ({}))]) {
      const r = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/traces`,
        token: world.key.key,
        payload: { spans } as object,
      });
      expect(r.statusCode === 200 ? r.json().accepted : 0, r.body.slice(0, 200)).toBe(0);
      if (r.statusCode >= 400) expectEnvelope(r, 'bad spans');
    }
    expect(await count()).toBe(before);
  });
});
