import type { FastifyInstance } from 'fastify';
import { parseJsonKeepingRaw, type JsonPath } from './raw-json.js';

/**
 * Makes a Fastify context's JSON bodies keep the values at `keep` paths as the caller's text
 * (raw-json.ts), with its own body limit. Register it in a child context of the routes that need it,
 * so no other route's parsing changes. Invalid JSON is a SyntaxError: 400, as elsewhere (errors.ts).
 */
export function keepRawJson(child: FastifyInstance, keep: (path: JsonPath) => boolean, bodyLimit: number): void {
  child.removeContentTypeParser('application/json');
  child.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    try {
      done(null, parseJsonKeepingRaw(body as string, keep));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
