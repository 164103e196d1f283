import { IDEMPOTENCY_HEADER } from './plugin.js';

/**
 * What the OpenAPI document says of a route that takes an `Idempotency-Key` (src/openapi.ts calls
 * this for every route): the optional header, and the 409 of a key reused for another request.
 */
export function documentIdempotency(
  config: { idempotent?: boolean | 'deferred' } | undefined,
  schema: Record<string, unknown>,
  conflict: object,
): Record<string, unknown> {
  if (!config?.idempotent) return schema;
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
  return {
    ...schema,
    headers: {
      ...headers,
      properties: {
        ...headers.properties,
        [IDEMPOTENCY_HEADER]: {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          pattern: '^[\\x20-\\x7e]+$',
          description:
            'Makes a retry of this create safe (docs/idempotency.md): for 24 hours, the same request with the same key from ' +
            'the same credential answers what the first answered (status and body, header `Idempotent-Replayed: true`) and ' +
            'creates nothing; the same key with a different request answers 409. 1 to 255 printable characters; use a UUID.',
        },
      },
    },
    response: {
      ...(schema.response as object | undefined),
      409: {
        ...conflict,
        description: 'A conflict; among them, an Idempotency-Key already used for a different request',
      },
    },
  };
}
