import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ValidationIssue } from './zod-issues.js';

/**
 * The typed errors of Sightline. Handlers and services throw these; `installErrorHandler`
 * is the one place they become HTTP answers (`{detail}`, or 422 `{detail: [...]}`).
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(detail: string) {
    super(400, 'bad_request', detail);
  }
}
export class UnauthorizedError extends AppError {
  constructor(detail = 'invalid, expired or revoked credential') {
    super(401, 'unauthorized', detail);
  }
}
export class ForbiddenError extends AppError {
  constructor(detail: string) {
    super(403, 'forbidden', detail);
  }
}
export class NotFoundError extends AppError {
  constructor(detail: string) {
    super(404, 'not_found', detail);
  }
}
export class ConflictError extends AppError {
  constructor(detail: string) {
    super(409, 'conflict', detail);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(detail: string) {
    super(413, 'payload_too_large', detail);
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(detail: string) {
    super(415, 'unsupported_media_type', detail);
  }
}
/** Seconds a 503 asks the client to wait before retrying (Retry-After). */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 2;

/** The caller sends more than its share right now; `retryAfterSeconds` becomes the Retry-After header. */
export class TooManyRequestsError extends AppError {
  constructor(
    detail: string,
    readonly retryAfterSeconds = 1,
  ) {
    super(429, 'too_many_requests', detail);
  }
}
/** A failure of ours with a detail the spec names (e.g. "failed to list traces"); no internals leak. */
export class InternalError extends AppError {
  constructor(detail: string) {
    super(500, 'internal', detail);
  }
}
export class ServiceUnavailableError extends AppError {
  constructor(detail: string) {
    super(503, 'service_unavailable', detail);
  }
}
/**
 * A read that hit one of its resource limits (time, memory, answer rows or bytes; src/query/limits.ts):
 * the caller's request is too big for one answer, so it is theirs to narrow (400, never 500).
 */
export class QueryLimitError extends AppError {
  constructor(detail: string) {
    super(400, 'query_limit', detail);
  }
}

export class RequestValidationError extends AppError {
  constructor(readonly issues: ValidationIssue[]) {
    super(422, 'validation_error', 'request validation failed');
  }
}

type Logger = { error: (obj: unknown, msg?: string) => void; debug: (obj: unknown, msg?: string) => void };

/**
 * What Fastify's own errors answer. Their messages are never passed on: some echo the raw URL, and
 * their wording is Fastify's, not the API's. Codes not listed answer their status's standard text.
 */
const FRAMEWORK_ERRORS: Record<string, { status: number; detail: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, detail: 'request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, detail: 'unsupported content type; send application/json' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, detail: 'request body is not valid JSON' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, detail: 'request body is not valid JSON' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, detail: 'request body size does not match Content-Length' },
  FST_ERR_BAD_URL: { status: 400, detail: 'the request URL is not valid' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 414, detail: 'a path parameter is too long' },
  FST_ERR_NOT_FOUND: { status: 404, detail: 'Not Found' },
  // Our own stream errors (traces/routes.ts marks a body that fails to inflate).
  SL_INVALID_GZIP: { status: 400, detail: 'request body is not valid gzip' },
};

/**
 * The one mapping of every error to the spec's envelopes (`{detail}`; 422 `{detail: [...]}`), for
 * errors thrown in a request's life (setErrorHandler) and for those Fastify meets before routing
 * (the `frameworkErrors` option: bad URL, over-long path parameter). No stack trace ever leaves the
 * process, and a caller's error is not logged as ours.
 */
export function answerError(error: FastifyError | AppError | Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof RequestValidationError) {
    return reply.status(422).send({ detail: error.issues });
  }
  if (error instanceof AppError) {
    if (error.status === 401) reply.header('www-authenticate', 'Bearer');
    if (error instanceof TooManyRequestsError) reply.header('retry-after', String(error.retryAfterSeconds));
    // Our own trouble, for a moment: tell clients (exporters, the CLI) when to try again.
    if (error.status === 503) reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_SECONDS));
    return reply.status(error.status).send({ detail: error.detail });
  }
  const fastifyError = error as FastifyError;
  const known = typeof fastifyError.code === 'string' ? FRAMEWORK_ERRORS[fastifyError.code] : undefined;
  if (known) return reply.status(known.status).send({ detail: known.detail });
  if (error instanceof SyntaxError) return reply.status(400).send({ detail: 'request body is not valid JSON' });
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    (request.log as Logger).debug({ code: fastifyError.code, status }, 'request refused by the framework');
    return reply.status(status).send({ detail: STATUS_CODES[status] ?? 'Bad Request' });
  }
  if (isStoreUnreachable(error)) {
    (request.log as Logger).error({ err: error }, 'a store is unreachable');
    return reply
      .status(503)
      .header('retry-after', String(RETRY_AFTER_UNAVAILABLE_SECONDS))
      .send({ detail: 'a backing store is unavailable; retry later' });
  }
  if (isQueryLimit(error)) {
    return reply
      .status(400)
      .send({ detail: 'the request needs more time, memory or answer size than one request may use; narrow it' });
  }
  (request.log as Logger).error({ err: error }, 'unhandled error');
  return reply.status(500).send({ detail: 'internal server error' });
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler(answerError);
  app.setNotFoundHandler((_request, reply) => reply.status(404).send({ detail: 'Not Found' }));
}

/**
 * The answer to a request Node's HTTP parser refused before Fastify saw it (the `clientErrorHandler`
 * option): too-large headers (431), a request that took too long to arrive (408), anything else
 * malformed (400). Written raw on the socket, as `{detail}` like every other answer.
 */
export function clientErrorAnswer(error: { code?: unknown }): { status: number; detail: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, detail: 'request headers are too large' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, detail: 'the request took too long to arrive' };
  return { status: 400, detail: 'the request is not valid HTTP' };
}

/** ClickHouse's codes for a query stopped by one of its limits (time, memory, rows read, answer size). */
const QUERY_LIMIT_CODES = new Set([158, 159, 160, 241, 307, 396]);

/** A ClickHouse error raised because a query hit one of the limits in its SETTINGS. */
export function isQueryLimit(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: unknown; type?: unknown };
  return typeof e.type === 'string' && QUERY_LIMIT_CODES.has(Number(e.code));
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * A store that could not be reached (refused, reset, timed out, shutting down) is the server's
 * trouble and the caller may retry: 503, never 500 (docs/errors.md).
 */
export function isStoreUnreachable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const e = error as { code?: unknown; errors?: unknown; message?: unknown };
  if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.some(isStoreUnreachable)) return true;
  return (
    typeof e.message === 'string' && /^Connection terminated|timeout exceeded when trying to connect/i.test(e.message)
  );
}
