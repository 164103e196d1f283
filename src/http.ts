import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ZodType } from 'zod';
import { installErrorHandler, RequestValidationError, zodIssuesToValidation } from './errors.js';

export type ServerOptions = { logLevel: string; bodyLimit?: number };

/**
 * A Fastify instance wired the Sightline way: zod validates every part of a request (failures become
 * 422 with `loc` rooted at body/query/path), one error handler answers every error, secrets never
 * reach the logs.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  const fastifyOptions: FastifyServerOptions = {
    logger:
      options.logLevel === 'silent'
        ? false
        : { level: options.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Per-request lines only at debug: ingest is high-volume and its log must stay readable.
    logController: new LogController({ disableRequestLogging: options.logLevel !== 'debug' && options.logLevel !== 'trace' }),
    routerOptions: { ignoreTrailingSlash: true },
  };
  const app = Fastify(fastifyOptions);
  app.decorateRequest('principal', null);
  app.setValidatorCompiler(({ schema, httpPart }) => (data) => {
    const result = (schema as ZodType).safeParse(data);
    if (result.success) return { value: result.data };
    return { error: new RequestValidationError(zodIssuesToValidation(httpPart ?? 'body', result.error.issues, data)) };
  });
  // Answers are plain JSON; their shapes are fixed by the services that build them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandler(app);
  return app;
}

export function typed(app: FastifyInstance) {
  return app.withTypeProvider<ZodTypeProvider>();
}
