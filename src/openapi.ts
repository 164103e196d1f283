import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { SwaggerTransformObject } from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { documentIdempotency } from './idempotency/openapi.js';
import { OPERATIONS, TAGS, operationKey } from './openapi-operations.js';
import { documentedQuery, OPERATION_BODIES, OPERATION_RESPONSES } from './openapi-documented.js';

/**
 * The OpenAPI 3.1 document of the public API, generated from the same zod schemas the routes validate
 * with (`GET /api/v1/public/openapi.json`), and a readable reference at `/docs`. Register before the
 * routes: the document is collected as they are added. Success answers come from each route's
 * `schema.response` (documentation only: the serializer ignores it, http.ts); the error envelopes
 * are added to every route here, and each operation's name, summary and tag come from one table
 * (openapi-operations.ts). Schemas given an id (`.meta({ id })`) become named components. The test
 * harness checks every answer against this document, and `npm run lint:openapi` lints it.
 */

export const API_TITLE = 'Public API';
export const API_VERSION = '0.1.0';

const COMPONENTS = '#/components/schemas/';

/** The error envelope (docs/errors.md). */
const ErrorEnvelope = {
  type: 'object',
  required: ['detail'],
  properties: { detail: { type: 'string' } },
  additionalProperties: false,
  description: 'The error envelope',
} as const;

/** The envelope of a 422. */
const ValidationErrorEnvelope = {
  type: 'object',
  required: ['detail'],
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: {
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          type: { type: 'string' },
          ctx: { type: 'object', additionalProperties: true },
          input: {},
        },
      },
    },
  },
  description: 'Request validation failed',
} as const;

const DETAIL = { $ref: `${COMPONENTS}Error` };
const errorAnswer = (description: string) => ({ ...DETAIL, description });

/**
 * Every route answers its errors in these shapes (src/errors.ts is the one map): the statuses every
 * route can meet are listed by number (docs/errors.md), the rest (409, 413, 415, ...) fall under 4XX.
 */
const ERROR_RESPONSES = {
  '400': errorAnswer(
    'A malformed request: a bad JSON body or URL encoding, a missing or mismatched `project_id`, an invalid `filters` parameter',
  ),
  '401': errorAnswer('Authentication failed: no credential, or one that is invalid, expired or revoked'),
  '403': errorAnswer('The credential may not do this: an API key on a route needing a user, or no access'),
  '404': errorAnswer('Not found, or not visible to the caller'),
  '422': { $ref: `${COMPONENTS}ValidationError`, description: 'Request validation failed' },
  '429': errorAnswer('Rate limited; retry after the `Retry-After` header'),
  '4XX': errorAnswer('Another client error (409, 413, 414, 415, ...)'),
  '5XX': errorAnswer('A server error; 503 when a store or the credential check is unavailable (retry)'),
} as const;

/** `baseUrl`: config's BASE_URL, the server the document (and /docs' "Try it out") names by default. */
export function registerOpenApi(app: FastifyInstance, prefix: string, baseUrl = 'http://localhost:8000'): void {
  const zodTransform = createJsonSchemaTransform({});
  const zodComponents = createJsonSchemaTransformObject({});
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version: API_VERSION,
        description: 'Sightline: traces, SQL, dashboards, alerts, signals, datasets and evaluations.',
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [
        {
          url: '{base_url}',
          description: 'Self-hosted Sightline',
          variables: { base_url: { default: baseUrl } },
        },
      ],
      tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A project API key, a session token or a CLI access token',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: (input) => {
      if (!input.url.startsWith(`${prefix}/`) || input.url === `${prefix}/openapi.json`)
        return { schema: { hide: true }, url: input.url };
      const key = operationKey(input.route.method as string, input.url.slice(prefix.length));
      const documentedBody = OPERATION_BODIES[key];
      const routeSchema = { ...input.schema };
      // A body documented apart from the one validated (span ingest checks each span on its own).
      if (documentedBody && documentedBody instanceof z.ZodType) routeSchema.body = documentedBody;
      if (routeSchema.querystring) routeSchema.querystring = documentedQuery(routeSchema.querystring);
      const out = zodTransform({ ...input, schema: routeSchema });
      const schema = (out.schema ?? {}) as Record<string, unknown>;
      const operation = OPERATIONS[key];
      const documented = {
        ...schema,
        ...(documentedBody && !(documentedBody instanceof z.ZodType) ? { body: documentedBody } : {}),
        ...(operation ? { operationId: operation.operationId, summary: operation.summary, tags: [operation.tag] } : {}),
        // A status the route documents itself (SQL's 400 and 429 carry more than `detail`) keeps its schema.
        response: { ...ERROR_RESPONSES, ...(schema.response as object | undefined), ...OPERATION_RESPONSES[key] },
      };
      return { ...out, schema: documentIdempotency(input.route.config, documented, DETAIL) };
    },
    transformObject: (input) => {
      const doc = zodComponents(input) as { components?: { schemas?: Record<string, unknown> } };
      const schemas = { ...doc.components?.schemas, Error: ErrorEnvelope, ValidationError: ValidationErrorEnvelope };
      return withComponents(doc, referencedOnly(doc, schemas)) as ReturnType<SwaggerTransformObject>;
    },
  });
  app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}

/**
 * The document with these components; a schema used only in requests drops the `Input` suffix the
 * type provider gives request-side components (`Predicate`, not `PredicateInput`).
 */
function withComponents(doc: object, schemas: Record<string, unknown>): object {
  const renamed = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/Input$/, '');
    if (base !== name && !(base in schemas)) renamed.set(name, base);
  }
  const components = { ...(doc as { components?: object }).components, schemas };
  const text = JSON.stringify({ ...doc, components }, (key, value) =>
    key === '$ref' && typeof value === 'string' && renamed.has(value.slice(COMPONENTS.length))
      ? COMPONENTS + renamed.get(value.slice(COMPONENTS.length))
      : value,
  );
  const out = JSON.parse(text) as { components: { schemas: Record<string, unknown> } };
  out.components.schemas = Object.fromEntries(
    Object.entries(out.components.schemas).map(([name, schema]) => [renamed.get(name) ?? name, schema]),
  );
  return out;
}

/**
 * The components the document refers to, directly or through another component: every schema with
 * an id is registered as an input and an output component, and most are used one way only.
 */
function referencedOnly(doc: object, schemas: Record<string, unknown>): Record<string, unknown> {
  const kept = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (!value || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENTS)) {
        const name = v.slice(COMPONENTS.length);
        if (!kept.has(name) && name in schemas) {
          kept.add(name);
          visit(schemas[name]);
        }
      } else visit(v);
    }
  };
  visit({ ...doc, components: { ...(doc as { components?: object }).components, schemas: {} } });
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => kept.has(name)));
}
