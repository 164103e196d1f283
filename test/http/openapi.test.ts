import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createServer, typed } from '../../src/http.js';
import { registerOpenApi } from '../../src/openapi.js';
import { watchAnswers, type OpenApiDoc } from '../support/answers.js';
import { call, PUBLIC, useHarness } from '../support/harness.js';

/** The OpenAPI 3.1 document of the public API, generated from the routes' zod schemas (src/openapi.ts). */

const h = useHarness();

/** Every public route the api serves, as OpenAPI paths (`/traces/{trace_id}`) with their methods. */
function servedRoutes(): Map<string, Set<string>> {
  const routes = new Map<string, Set<string>>();
  // printRoutes draws a tree: each line's segment continues the path of the nearest shallower line.
  const stack: { depth: number; path: string }[] = [];
  for (const line of h().api.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^([│\s]*)[├└]── (\S+)(?: \(([^)]+)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length;
    while (stack.length && stack.at(-1)!.depth >= depth) stack.pop();
    const full = `${stack.at(-1)?.path ?? ''}${m[2]}`;
    stack.push({ depth, path: full });
    if (!m[3] || !full.startsWith(`${PUBLIC}/`) || full === `${PUBLIC}/openapi.json`) continue;
    const path = full.slice(PUBLIC.length).replace(/:(\w+)/g, '{$1}');
    const methods = m[3]
      .split(', ')
      .filter((x) => x !== 'HEAD')
      .map((x) => x.toLowerCase());
    routes.set(path, new Set([...(routes.get(path) ?? []), ...methods]));
  }
  return routes;
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document titled "Public API", version 0.1.0, with a variable self-hosted server and bearer security', async () => {
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], String(JSON.stringify(result.errors)).slice(0, 1000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'Public API', version: '0.1.0' });
    // The server /docs' "Try it out" calls is BASE_URL's (issue 37: it was localhost:8000 whatever BASE_URL said).
    expect(doc.servers[0].url).toBe('{base_url}');
    expect(doc.servers[0].variables.base_url.default).toBe(h().config.baseUrl);
    expect(h().config.baseUrl).toBe('http://api.test');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearer: [] }]);
  });

  it('is reachable from the web origin: /docs there redirects to the API reference (issue 37)', async () => {
    const res = await call(h().web, { method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('http://api.test/docs');
    const docs = await call(h().api, { method: 'GET', url: '/docs/' });
    expect(docs.statusCode).toBe(200);
  });

  it('documents every public route the api serves, with its parameters and error answers', async () => {
    const doc = (await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` })).json() as {
      paths: Record<
        string,
        Record<string, { responses: Record<string, unknown>; parameters?: { name: string; in: string }[] }>
      >;
    };
    const served = servedRoutes();
    expect(served.size).toBeGreaterThan(20);
    for (const [path, methods] of served) {
      const item = doc.paths[`${PUBLIC}${path}`] ?? doc.paths[path];
      expect(item, `${path} is not in the document`).toBeDefined();
      for (const method of methods) {
        expect(item![method], `${method.toUpperCase()} ${path} is not in the document`).toBeDefined();
        expect(Object.keys(item![method]!.responses)).toEqual(expect.arrayContaining(['4XX', '422']));
      }
    }
    const list = doc.paths[`${PUBLIC}/traces`]!.get!;
    expect(list.parameters!.map((p) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'filters', 'project_id', 'start_after', 'end_before']),
    );
    expect(Object.keys(doc.paths).some((p) => p.includes('/healthz') || p.includes('openapi.json'))).toBe(false);
  });

  it("documents every public route's success answer: a 2xx with a schema, or a non-JSON content type", async () => {
    const doc = (await call(h().api, { method: 'GET', url: `${PUBLIC}/openapi.json` })).json() as OpenApiDoc;
    const undocumented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2(\d\d|XX)$/.test(status));
        // 204 No Content (DELETE /scores/{id}): no body, so nothing to document.
        const documented =
          success.some(([status, answer]) => status === '204' && answer.content === undefined) ||
          success.some(([, answer]) =>
            Object.entries(answer.content ?? {}).some(
              ([type, media]) =>
                !type.includes('json') || (media.schema !== undefined && Object.keys(media.schema).length > 0),
            ),
          );
        if (!documented) undocumented.push(`${method.toUpperCase()} ${path}`);
      }
    }
    expect(undocumented).toEqual([]);
    // Streamed and non-JSON answers carry their own content types.
    expect(Object.keys(doc.paths[`${PUBLIC}/otel/v1/traces`]!.post!.responses!['200']!.content!)).toEqual([
      'application/json',
      'application/x-protobuf',
    ]);
    expect(
      doc.paths[`${PUBLIC}/dataset-versions/{version_id}`]!.get!.responses!['200']!.content!['application/json']!
        .schema,
    ).toMatchObject({
      required: expect.arrayContaining([
        'dataset_id',
        'dataset_version_id',
        'version_number',
        'label',
        'items',
        'next_cursor',
      ]),
    });
  });

  it('answer schemas document without reshaping: the answer is the bytes the handler built, and the test harness flags what the schema does not allow', async () => {
    const app = createServer({ logLevel: 'silent' });
    registerOpenApi(app, '/p');
    const watch = watchAnswers(app, () => app.swagger() as unknown as OpenApiDoc, '/p');
    const built = { n: 1.5, extra: 'kept', when: new Date(0) };
    // In a plugin, as the public routes are: the document collects routes added after swagger loads.
    app.register(async (p) => {
      typed(p).get(
        '/p/thing',
        { schema: { response: { 200: z.object({ n: z.number().int() }) } } },
        async () => built as never,
      );
    });
    await app.ready();
    try {
      const res = await app.inject({ method: 'GET', url: '/p/thing' });
      expect(res.body).toBe(JSON.stringify(built));
      const found = watch.take();
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/^GET \/p\/thing → 200: the body does not conform/);
      expect(found[0]).toContain("must NOT have additional properties 'extra'");
      expect(found[0]).toContain('/n must be integer');
      const missing = await app.inject({ method: 'GET', url: '/p/nowhere' });
      expect(missing.statusCode).toBe(404);
      expect(watch.take()).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('serves a readable reference at /docs', async () => {
    const res = await call(h().api, { method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
