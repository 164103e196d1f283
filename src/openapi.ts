import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { documentIdempotency } from './idempotency/openapi.js';

/**
 * The OpenAPI 3.1 document of the public API, generated from the same zod schemas the routes validate
 * with (`GET /api/v1/public/openapi.json`), and a readable reference at `/docs`. Register before the
 * routes: the document is collected as they are added. Success answers come from each route's
 * `schema.response` (documentation only: the serializer ignores it, http.ts); the error envelopes
 * are added to every route here. The test harness checks every answer against this document.
 */

export const API_TITLE = 'Public API';
export const API_VERSION = '0.1.0';

const DETAIL = {
  type: 'object',
  required: ['detail'],
  properties: { detail: { type: 'string' } },
  additionalProperties: false,
  description: 'The error envelope',
} as const;

const VALIDATION = {
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
          ctx: { type: 'object' },
          input: {},
        },
      },
    },
  },
  description: 'Request validation failed',
} as const;

/** Every route answers its errors in these shapes (src/errors.ts is the one map). */
const ERROR_RESPONSES = {
  '4XX': DETAIL,
  '422': VALIDATION,
  '5XX': DETAIL,
} as const;

export function registerOpenApi(app: FastifyInstance, prefix: string): void {
  app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version: API_VERSION,
        description: 'Sightline: traces, SQL, dashboards, alerts, signals, datasets and evaluations.',
      },
      servers: [
        {
          url: '{base_url}',
          description: 'Self-hosted Sightline',
          variables: { base_url: { default: 'http://localhost:8000' } },
        },
      ],
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
      const out = jsonSchemaTransform({ ...input, schema: input.schema ?? {} });
      const schema = (out.schema ?? {}) as Record<string, unknown>;
      const documented = { ...schema, response: { ...(schema.response as object | undefined), ...ERROR_RESPONSES } };
      return { ...out, schema: documentIdempotency(input.route.config, documented, DETAIL) };
    },
  });
  app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } });
  app.get(`${prefix}/openapi.json`, { schema: { hide: true } }, async () => app.swagger());
}
