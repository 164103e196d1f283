import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../errors.js';

/**
 * The parts of ingest admission the span writer (span-writer.ts) hands out and the routes hold
 * (ingest-admission.ts): one ticket per admitted request, what refusals are counted as, and the
 * request a write serves.
 */

/** The writer's side of a ticket: its byte budget. */
export type TicketBudget = {
  growTicket(ticket: IngestTicket, total: number): boolean;
  releaseTicket(ticket: IngestTicket): void;
};

/** Why ingest refused or dropped work, as the metrics count it. */
export type IngestRefusal = 'queue_full' | 'store_down' | 'stopping' | 'client_gone';

/** What the metrics (src/health/metrics.ts) hear from the writer. */
export type SpanWriterObserver = {
  refused?(reason: IngestRefusal): void;
  /** One commit (the existence check and the insert): its duration and the spans it held. */
  committed?(seconds: number, spans: number): void;
  /** One request's spans stored: the time from `write()` to the acknowledgement. */
  acknowledged?(seconds: number): void;
};

/** The answer never reaches anyone: the client closed its connection while its spans waited. */
export class ClientGoneError extends AppError {
  constructor() {
    super(499, 'client_closed', 'the client closed the connection before its spans were stored');
  }
}

/**
 * One admitted ingest request's share of the byte budget. `grow` raises it to what was really read
 * (a body without Content-Length, or a gzip body inflating) and answers false past the bound;
 * `release` gives it back when the request is answered or its connection closes. `signal` aborts when
 * the client went away, so its spans still waiting are dropped instead of stored for no one.
 */
export class IngestTicket {
  private released = false;
  private readonly abort = new AbortController();
  readonly signal = this.abort.signal;

  constructor(
    private readonly writer: TicketBudget,
    public bytes: number,
    readonly probe: boolean,
  ) {}

  grow(total: number): boolean {
    if (this.released || total <= this.bytes) return true;
    return this.writer.growTicket(this, total);
  }

  clientGone(): void {
    this.abort.abort();
    this.release();
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.writer.releaseTicket(this);
  }
}

/**
 * The request a `write()` serves, set by the ingest route around its call into the service
 * (`withIngestTicket`), so spans of a client that has gone are dropped before their commit.
 */
export const currentTicket = new AsyncLocalStorage<IngestTicket>();

export function withIngestTicket<T>(ticket: IngestTicket | undefined, fn: () => T): T {
  return ticket ? currentTicket.run(ticket, fn) : fn();
}
