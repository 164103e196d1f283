import { Transform } from 'node:stream';
import type { FastifyReply, FastifyRequest, RequestPayload } from 'fastify';
import { BadRequestError } from '../errors.js';
import { PROJECT_ID_MISMATCH_DETAIL } from '../auth/access.js';
import { apiKeyOf } from '../auth/principal.js';
import { ClientGoneError, withIngestTicket, type IngestTicket, type SpanWriter } from './span-writer.js';

/**
 * The ingest routes' preconditions, decided before a body is read (docs/operations.md, "Overload"):
 * admission into the span writer's bounded queue from the declared Content-Length (429 or 503 with
 * Retry-After when it can't take the request), the byte count of bodies whose size isn't declared
 * (or that inflate), refused mid-read past the bound, and the request's ticket released when it is
 * answered or its client goes away.
 */

const tickets = new WeakMap<FastifyRequest, IngestTicket>();

/** onRequest, after authentication. `maxBodyBytes`: a larger declaration is the body limit's 413, not ours. */
export function admitIngest(writer: SpanWriter, maxBodyBytes: number) {
  return async function admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const declared = Number(request.headers['content-length']);
    const bytes = Number.isFinite(declared) && declared > 0 ? Math.min(declared, maxBodyBytes) : 0;
    const ticket = writer.admit(bytes);
    tickets.set(request, ticket);
    // 'close' comes after the answer is written, or when the connection ends before it: then
    // nobody will read the answer, and spans still waiting in the queue are dropped.
    reply.raw.once('close', () => (reply.raw.writableFinished ? ticket.release() : ticket.clientGone()));
  };
}

/** onResponse: the answer is out (also for injected requests, which have no socket to close). */
export async function releaseIngest(request: FastifyRequest): Promise<void> {
  tickets.get(request)?.release();
}

/**
 * preParsing, after gzip inflation: a body that declared its length (and isn't inflated) was
 * admitted for that length; any other is counted as it is read and refused with the queue's 429
 * once it would pass the byte bound.
 */
export function countIngestBody(writer: SpanWriter) {
  return async function count(
    request: FastifyRequest,
    _reply: FastifyReply,
    payload: RequestPayload,
  ): Promise<RequestPayload> {
    const ticket = tickets.get(request);
    if (!ticket || (payload === request.raw && request.headers['content-length'] !== undefined)) return payload;
    let read = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        read += chunk.length;
        if (ticket.grow(read)) callback(null, chunk);
        else callback(writer.queueFull());
      },
    });
    // Fastify checks Content-Length against the encoded size when the stream reports one (gzip).
    Object.defineProperty(counter, 'receivedEncodedLength', {
      get: () => (payload as { receivedEncodedLength?: number }).receivedEncodedLength,
    });
    payload.on('error', (error) => counter.destroy(error));
    payload.pipe(counter);
    return counter as unknown as RequestPayload;
  };
}

/**
 * Runs the storing part of an ingest request with its ticket, so its spans are dropped from the
 * queue if the client leaves first. A client already gone costs no parsing or storing at all.
 */
export function ingesting<T>(writer: SpanWriter, request: FastifyRequest, fn: () => Promise<T>): Promise<T> {
  const ticket = tickets.get(request);
  if (ticket?.signal.aborted) return Promise.reject(writer.refuse('client_gone', new ClientGoneError()));
  return withIngestTicket(ticket, fn);
}

/**
 * An API key names its project; a `project_id` sent along (query or body) must be that one, else
 * 400 (docs/authentication.md), rather than storing into the key's project what was meant for another.
 */
export function checkIngestProject(request: FastifyRequest, ...projectIds: (string | null | undefined)[]): void {
  const own = apiKeyOf(request).projectId;
  for (const id of projectIds) {
    if (id !== undefined && id !== null && id.toLowerCase() !== own)
      throw new BadRequestError(PROJECT_ID_MISMATCH_DETAIL);
  }
}
