import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import { answerError, clientErrorAnswer, installErrorHandler, RequestValidationError } from './errors.js';
import { zodIssuesToValidation } from './zod-issues.js';

export type ServerOptions = {
  logLevel: string;
  bodyLimit?: number;
  /** Proxies whose X-Forwarded-* headers are believed (config.trustProxy); none by default. */
  trustProxy?: boolean | number | readonly string[];
  /** Maps a request's URL before routing: aliases of a route under another path (app.ts). */
  rewriteUrl?: (url: string) => string;
};

/**
 * The longest raw (still percent-encoded) path parameter the router passes on: the longest id a
 * route takes is a session id of 1,024 characters, which may arrive fully encoded (3 bytes each).
 * Shorter ones reach the route's schema (422 at `path` when too long for it); longer ones are 414.
 */
export const MAX_PARAM_LENGTH = 3 * 1024;

/**
 * A Fastify instance wired the Sightline way: zod validates every part of a request (failures become
 * 422 with `loc` rooted at body/query/path), one error map answers every error, including those Fastify
 * and Node's HTTP parser meet before a route runs, and secrets never reach the logs.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const { rewriteUrl } = options;
  const fastifyOptions: FastifyServerOptions = {
    logger:
      options.logLevel === 'silent'
        ? false
        : { level: options.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    trustProxy: trustProxyOption(options.trustProxy),
    ...(rewriteUrl ? { rewriteUrl: (req) => rewriteUrl(req.url ?? '/') } : {}),
    // Per-request lines only at debug: ingest is high-volume and its log must stay readable.
    logController: new LogController({
      disableRequestLogging: options.logLevel !== 'debug' && options.logLevel !== 'trace',
    }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Errors met before routing (bad URL encoding, over-long path parameter) take the same map.
    frameworkErrors: (error, request, reply) => answerError(error, request, reply),
    clientErrorHandler,
    // Fastify's own 503 for requests met while closing has its body shape, not `{detail}`. Those
    // requests (already on an open connection) are answered normally instead: the stores close only
    // after the servers (main.ts).
    return503OnClosing: false,
  };
  const app = Fastify(fastifyOptions);
  app.decorateRequest('principal', null);
  app.setValidatorCompiler(({ schema, httpPart }) => (data) => {
    const result = (schema as ZodType).safeParse(data);
    if (result.success) return { value: result.data };
    return { error: new RequestValidationError(zodIssuesToValidation(httpPart ?? 'body', result.error.issues, data)) };
  });
  // Answers are plain JSON; their shapes are fixed by the services that build them. Routes' answer
  // schemas (`schema.response`) only document them (openapi.ts): this must stay JSON.stringify for
  // every schema, so a schema never drops, adds or coerces a field of an answer.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandler(app);
  app.addHook('onSend', async (request, reply, payload) => {
    // Only while the body is really still arriving (an injected request, or one read whole, is done).
    if (reply.statusCode === 413 && !request.raw.complete && !request.raw.readableEnded && !request.raw.destroyed)
      await drainRefusedBody(request.raw);
    return payload;
  });
  return app;
}

/** Fastify's forms: a list of addresses, or (for a hop count, which its types lack) a function of the hop. */
function trustProxyOption(value: ServerOptions['trustProxy']): FastifyServerOptions['trustProxy'] {
  if (typeof value === 'number') return (_address: string, hop: number) => hop < value;
  if (typeof value === 'object') return [...value];
  return value ?? false;
}

/**
 * Node's HTTP parser refused the request (headers too large, malformed, too slow): Fastify never sees
 * it, so the answer is written on the socket here, from the same map. Only the code is logged.
 */
function clientErrorHandler(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has no one left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, detail } = clientErrorAnswer(error);
  this.log.debug({ code: error.code, status }, 'client error');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({ detail });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** How much more of a refused body is read and thrown away, and for how long, before the socket is cut. */
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;
const DRAIN_LIMIT_MS = 30_000;

/**
 * A body refused as too large (413) while the client is still sending it: answered at once, the
 * connection would close under the client's feet (Fastify answers such errors with
 * `Connection: close`) and the client would see EPIPE instead of the 413. So the rest of the body is
 * read and discarded first, up to a bound, and the answer goes out when the client has finished
 * sending; past the bound the socket is cut.
 */
function drainRefusedBody(raw: FastifyRequest['raw']): Promise<void> {
  return new Promise((resolve) => {
    let drained = 0;
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    const cut = () => {
      raw.socket?.destroy();
      done();
    };
    const timer = setTimeout(cut, DRAIN_LIMIT_MS);
    raw.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > DRAIN_LIMIT_BYTES) cut();
    });
    raw.once('end', done);
    raw.once('close', done);
    raw.once('error', done);
    raw.resume();
  });
}

export function typed(app: FastifyInstance) {
  return app.withTypeProvider<ZodTypeProvider>();
}
