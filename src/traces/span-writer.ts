import type { ClickHouseStore } from '../stores/clickhouse.js';
import type { PostgresStore } from '../stores/postgres.js';
import type { NormalizedSpan } from './span-input.js';
import { PAYLOAD_COLUMNS, payloadValues, type PayloadValues } from './span-payload.js';
import { existingSpansQuery, type ExistingTraceRow } from './queries.js';
import { traceGroups, traceLockKey, traceLocks, type TraceLocks } from './ingest-locks.js';
import { isStoreUnreachable, ServiceUnavailableError, TooManyRequestsError } from '../errors.js';
import {
  ClientGoneError,
  currentTicket,
  IngestTicket,
  type IngestRefusal,
  type SpanWriterObserver,
} from './ingest-ticket.js';

export {
  ClientGoneError,
  IngestTicket,
  withIngestTicket,
  type IngestRefusal,
  type SpanWriterObserver,
} from './ingest-ticket.js';

/**
 * Group commit for span ingest (docs/design.md, decision 2). Requests hand their validated spans to
 * `write()`, which resolves only once an insert holding them has succeeded. While one insert runs,
 * newly arriving requests queue up and go out together in the next one, so under load the inserts
 * grow instead of multiplying.
 *
 * Exactly-once counting: each commit first asks ClickHouse which of its spans are already stored
 * (same project, trace_id, span_id) and leaves those out, so a retried request, a batch sent twice or
 * a span repeated inside a batch never reaches the trace rollup twice. One commit runs at a time in a
 * writer; the check and insert of a commit run holding one lock per trace it carries
 * (src/traces/ingest-locks.ts: Postgres advisory locks across API processes, in-process locks
 * embedded), so commits that share no trace, of one project or of several, run in parallel, and
 * two that share one check-and-insert in turn. The same check yields the hour a trace was filed
 * under: a trace keeps the hour it was first filed under (see `newRows`).
 *
 * Backpressure (docs/operations.md, "Overload"): the queue is bounded by spans (handed to `write()`,
 * not yet stored) and by bytes (bodies of ingest requests admitted and not yet answered, which is
 * what holds the memory: raw, parsed and queued). `admit()` decides before a body is read; past a
 * bound it refuses with 429 and a Retry-After from the recent insert rate, so a full queue answers
 * at once instead of growing latency and memory. One request is always admitted into an empty
 * queue, so any request within the body limit can pass.
 */

export type SpanWriterOptions = {
  /** Spans per insert at most; a larger request still goes out whole, alone. */
  maxBatchSpans?: number;
  /** Spans queued (handed to `write()`, not yet stored) past which more are refused. Unbounded by default. */
  maxQueuedSpans?: number;
  /** Body bytes of admitted, unanswered ingest requests past which more are refused. Unbounded by default. */
  maxQueuedBytes?: number;
  /** The locks of the exactly-once check; `traceLocks(ch, pg)` by default (bench/ingest-writers.ts passes others). */
  locks?: TraceLocks;
};

type Pending = {
  projectId: string;
  ttlDays: number;
  spans: NormalizedSpan[];
  signal?: AbortSignal;
  queuedAt: number;
  /** Spans of this request the commit inserted (not already stored, not outrun by a later copy). */
  stored: number;
  resolve: (stored: number) => void;
  reject: (error: unknown) => void;
};

const HOUR_MS = 3_600_000;
/** ClickHouse refuses an insert touching more partitions (months) than this by default. */
const MAX_PARTITIONS_PER_INSERT = 100;
/** Bounds of the Retry-After a full queue answers with, in seconds. */
const RETRY_AFTER_MIN_S = 1;
const RETRY_AFTER_MAX_S = 30;

export class SpanWriter {
  private queue: Pending[] = [];
  private running: Promise<void> | null = null;
  private closed = false;
  private readonly maxBatchSpans: number;
  private readonly maxQueuedSpans: number;
  private readonly maxQueuedBytes: number;
  /** Spans handed to `write()` and not yet stored or refused (waiting and committing). */
  private spansQueued = 0;
  /** Bytes of the tickets not yet released. */
  private bytesAdmitted = 0;
  private tickets = 0;
  /** Set when a commit failed because ClickHouse (or Postgres) was unreachable; cleared by a success. */
  private storeDown = false;
  private probing = false;
  /** Recent insert rate (spans per second, smoothed), for Retry-After. */
  private spansPerSecond = 0;
  private readonly observers = new Set<SpanWriterObserver>();
  private readonly locks: TraceLocks;

  constructor(
    private readonly ch: ClickHouseStore,
    private readonly pg: PostgresStore,
    options: SpanWriterOptions = {},
  ) {
    this.maxBatchSpans = options.maxBatchSpans ?? 50_000;
    this.maxQueuedSpans = options.maxQueuedSpans ?? Infinity;
    this.maxQueuedBytes = options.maxQueuedBytes ?? Infinity;
    this.locks = options.locks ?? traceLocks(ch, pg);
  }

  /** The queue's depth right now, for /metrics. */
  depth(): { spans: number; bytes: number; requests: number } {
    return { spans: this.spansQueued, bytes: this.bytesAdmitted, requests: this.tickets };
  }

  observe(observer: SpanWriterObserver): () => void {
    this.observers.add(observer);
    return () => void this.observers.delete(observer);
  }

  /**
   * Admits an ingest request declaring `bytes` of body (0 when unknown) before its body is read, or
   * throws the answer: 429 when the queue is past a bound, 503 while the store is down (one request
   * at a time goes through as a probe) or the process is stopping. Both carry Retry-After.
   */
  admit(bytes: number): IngestTicket {
    if (this.closed)
      throw this.refuse('stopping', new ServiceUnavailableError('the server is stopping; retry the request'));
    const busy = this.tickets > 0 || this.spansQueued > 0;
    if (busy && (this.spansQueued >= this.maxQueuedSpans || this.bytesAdmitted + bytes > this.maxQueuedBytes))
      throw this.queueFull();
    let probe = false;
    if (this.storeDown) {
      if (this.probing)
        throw this.refuse(
          'store_down',
          new ServiceUnavailableError('the span store is unavailable; retry the request'),
        );
      this.probing = probe = true;
    }
    this.tickets++;
    this.bytesAdmitted += bytes;
    return new IngestTicket(this, bytes, probe);
  }

  /** @internal IngestTicket.grow */
  growTicket(ticket: IngestTicket, total: number): boolean {
    const extra = total - ticket.bytes;
    // The only request in the queue may always finish reading (the body limit bounds it).
    if (this.tickets > 1 && this.bytesAdmitted + extra > this.maxQueuedBytes) return false;
    this.bytesAdmitted += extra;
    ticket.bytes = total;
    return true;
  }

  /** @internal IngestTicket.release */
  releaseTicket(ticket: IngestTicket): void {
    this.tickets--;
    this.bytesAdmitted -= ticket.bytes;
    if (ticket.probe) this.probing = false;
  }

  /** The 429 of a full queue, counted; thrown by the routes and by `write()`. */
  queueFull(): TooManyRequestsError {
    const rate = this.spansPerSecond;
    const wait = rate > 0 ? Math.ceil(this.spansQueued / rate) : RETRY_AFTER_MIN_S;
    const seconds = Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, wait));
    return this.refuse(
      'queue_full',
      new TooManyRequestsError(
        `ingest is at capacity; retry in ${seconds} s (nothing of this request was stored)`,
        seconds,
      ),
    );
  }

  /** Counts a refusal (the routes count the client_gone ones they meet). */
  refuse<E>(reason: IngestRefusal, error: E): E {
    for (const o of this.observers) o.refused?.(reason);
    return error;
  }

  /**
   * Stores the spans of one request; resolves when they are durably in ClickHouse, with how many of
   * them this write inserted (the others were stored before, or came again in a later request of the
   * same commit, whose copy was inserted instead).
   */
  write(projectId: string, ttlDays: number, spans: NormalizedSpan[]): Promise<number> {
    if (spans.length === 0) return Promise.resolve(0);
    if (this.closed) return Promise.reject(new Error('span writer is closed'));
    const ticket = currentTicket.getStore();
    if (ticket?.signal.aborted) return Promise.reject(this.refuse('client_gone', new ClientGoneError()));
    // The span bound again, now that the count is known: a queue with room takes any one request.
    if (this.spansQueued > 0 && this.spansQueued + spans.length > this.maxQueuedSpans)
      return Promise.reject(this.queueFull());
    this.spansQueued += spans.length;
    return new Promise<number>((resolve, reject) => {
      this.queue.push({
        projectId,
        ttlDays,
        spans,
        signal: ticket?.signal,
        queuedAt: performance.now(),
        stored: 0,
        resolve,
        reject,
      });
      this.running ??= this.drain();
    });
  }

  /** Waits for everything queued, then refuses new writes. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    // Yield once so requests arriving in the same tick join the first commit.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queue.length > 0) {
      const batch = this.takeBatch();
      if (batch.length === 0) continue;
      const spans = batch.reduce((n, p) => n + p.spans.length, 0);
      const started = performance.now();
      try {
        await this.commit(batch);
        const seconds = (performance.now() - started) / 1000;
        this.storeDown = false;
        // Smoothed, so one small or slow commit doesn't swing the advice.
        const rate = spans / Math.max(seconds, 0.001);
        this.spansPerSecond = this.spansPerSecond ? 0.7 * this.spansPerSecond + 0.3 * rate : rate;
        for (const o of this.observers) o.committed?.(seconds, spans);
        const now = performance.now();
        for (const p of batch) {
          for (const o of this.observers) o.acknowledged?.((now - p.queuedAt) / 1000);
          p.resolve(p.stored);
        }
      } catch (error) {
        if (isStoreUnreachable(error)) this.storeDown = true;
        for (const p of batch) p.reject(error);
      } finally {
        this.spansQueued -= spans;
      }
    }
    this.running = null;
  }

  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    let size = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (next.signal?.aborted) {
        // Its client has gone: nobody waits for these spans, so they are not stored (the client
        // retries them, or not; either way nothing counts twice).
        this.queue.shift();
        this.spansQueued -= next.spans.length;
        next.reject(this.refuse('client_gone', new ClientGoneError()));
        continue;
      }
      if (batch.length > 0 && size + next.spans.length > this.maxBatchSpans) break;
      batch.push(this.queue.shift()!);
      size += next.spans.length;
    }
    return batch;
  }

  private async commit(batch: Pending[]): Promise<void> {
    // project → trace → span id → span; a span repeated within the batch: the last copy sent wins.
    const byProject = new Map<string, { ttlDays: number; traces: Map<string, Map<string, NormalizedSpan>> }>();
    // Which request's copy of a span is the one inserted (the last), so each learns what it stored.
    const copyOf = new Map<NormalizedSpan, Pending>();
    for (const p of batch) {
      let entry = byProject.get(p.projectId);
      if (!entry) byProject.set(p.projectId, (entry = { ttlDays: p.ttlDays, traces: new Map() }));
      entry.ttlDays = p.ttlDays;
      for (const span of p.spans) {
        let trace = entry.traces.get(span.trace_id);
        if (!trace) entry.traces.set(span.trace_id, (trace = new Map()));
        trace.set(span.span_id, span);
        copyOf.set(span, p);
      }
    }
    const items = [...byProject].flatMap(([projectId, { traces }]) =>
      [...traces.keys()].map((traceId) => ({ key: traceLockKey(projectId, traceId), value: { projectId, traceId } })),
    );
    // Usually one group; a commit of more traces than one transaction may lock goes in several.
    for (const group of traceGroups(items)) {
      const keys = [...new Set(group.map((g) => g.key))];
      await this.locks.withLocks(keys, async () => {
        const rows: SpanRow[] = [];
        const groupProjects = new Map<string, Map<string, Map<string, NormalizedSpan>>>();
        for (const { value } of group) {
          let traces = groupProjects.get(value.projectId);
          if (!traces) groupProjects.set(value.projectId, (traces = new Map()));
          traces.set(value.traceId, byProject.get(value.projectId)!.traces.get(value.traceId)!);
        }
        const inserted: NormalizedSpan[] = [];
        for (const [projectId, traces] of groupProjects) {
          const fresh = await this.newSpans(projectId, traces);
          const ttlDays = byProject.get(projectId)!.ttlDays;
          for (const { span, hourMs } of fresh) {
            rows.push(toRow(projectId, ttlDays, span, hourMs));
            inserted.push(span);
          }
        }
        await this.insert(rows);
        for (const span of inserted) copyOf.get(span)!.stored++;
      });
    }
  }

  /** The spans not stored yet, each with its trace's start hour (epoch ms). */
  private async newSpans(
    projectId: string,
    traces: Map<string, Map<string, NormalizedSpan>>,
  ): Promise<{ span: NormalizedSpan; hourMs: number }[]> {
    const spans = new Map<string, NormalizedSpan>();
    for (const trace of traces.values())
      for (const span of trace.values()) spans.set(spanKey(span.trace_id, span.span_id), span);
    const keys = [...spans.values()].map((s): [string, string] => [s.trace_id, s.span_id]);
    const existing = await this.ch.rows<ExistingTraceRow>(existingSpansQuery(projectId, [...traces.keys()], keys));
    const traceHour = new Map<string, number>();
    const firstSeen = new Set<string>();
    for (const row of existing) {
      for (const spanId of row.stored_span_ids) spans.delete(spanKey(row.trace_id, spanId));
      traceHour.set(row.trace_id, Number(row.trace_start_hour) * 1000);
    }
    for (const span of spans.values()) {
      if (traceHour.has(span.trace_id) && !firstSeen.has(span.trace_id)) continue;
      // A trace seen for the first time is filed under the hour of its earliest span in this batch;
      // later spans join that hour whatever their start, so a trace's rows always meet in one place.
      firstSeen.add(span.trace_id);
      const hour = span.start_time - (span.start_time % HOUR_MS);
      const known = traceHour.get(span.trace_id);
      if (known === undefined || hour < known) traceHour.set(span.trace_id, hour);
    }
    return [...spans.values()].map((span) => ({ span, hourMs: traceHour.get(span.trace_id)! }));
  }

  private async insert(rows: SpanRow[]): Promise<void> {
    if (rows.length === 0) return;
    for (const chunk of chunkByPartition(rows)) {
      // Rows as arrays: shorter to encode and to parse than objects (JSONEachRow), same values.
      // The settings ride in the statement (chdb keeps `clickhouse_settings` on its session).
      await this.ch.insertCompact({ table: 'spans', columns: SPAN_COLUMNS, settings: INSERT_SETTINGS, rows: chunk });
    }
  }
}

/** The columns of `spans` the writer fills, in the order of a row's values. */
const SPAN_COLUMNS = [
  'project_id',
  'trace_id',
  'span_id',
  'parent_span_id',
  'name',
  'kind',
  'start_time',
  'end_time',
  'status',
  'error_type',
  'error_message',
  'model_name',
  'environment',
  'user_id',
  'session_id',
  ...PAYLOAD_COLUMNS,
  'metadata',
  'cost',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'evaluation_run_id',
  'trace_start_hour',
  'ttl_days',
  // clickhouse/0007_span_details.sql
  'cost_source',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'time_to_first_token_ms',
  'output_tokens_per_second',
  'events',
  'links',
  'resource',
  'dropped_attributes_count',
  // clickhouse/0020_span_tags.sql
  'tags',
  // clickhouse/0019_span_prompt.sql
  'prompt_name',
  'prompt_version',
  // clickhouse/0027_span_attributes.sql
  'attributes',
] as const;

/**
 * The insert's settings.
 * - optimize_on_insert = 0: the engine would merge each inserted block by its table's key before
 *   writing it (the replacing merge for `spans`, the aggregating merge for every rollup its views feed),
 *   which finds nothing to fold here: a commit never carries a span twice (`commit` keeps one copy),
 *   and each view's GROUP BY is its target's sort key, so its block holds a key once. Skipping it
 *   writes the same rows for ~6% less engine work per insert, on both bench corpora (docs/scaling.md,
 *   "Where the views' ingest work goes").
 * - input_format_parallel_parsing = 0: a commit's rows are parsed by the thread running the insert
 *   rather than cut into segments handed to parser threads and gathered again; the embedded engine
 *   shares the API's cores, where that hand-off is only more work.
 */
const INSERT_SETTINGS = { optimize_on_insert: 0, input_format_parallel_parsing: 0 };

/**
 * One row of the `spans` table as JSONCompactEachRow takes it: the values of SPAN_COLUMNS in order
 * (DateTime64(3) as epoch ms, DateTime as s, the metadata, resource and attributes Maps as objects, events and
 * links as JSON text).
 */
export type SpanRow = [
  project_id: string,
  trace_id: string,
  span_id: string,
  parent_span_id: string,
  name: string,
  kind: string,
  start_time: number,
  end_time: number | null,
  status: string,
  error_type: string,
  error_message: string,
  model_name: string,
  environment: string,
  user_id: string,
  session_id: string,
  ...payload: PayloadValues,
  metadata: Record<string, string>,
  cost: number,
  input_tokens: number,
  output_tokens: number,
  total_tokens: number,
  evaluation_run_id: string,
  trace_start_hour: number,
  ttl_days: number,
  cost_source: string,
  cache_read_tokens: number,
  cache_write_tokens: number,
  reasoning_tokens: number,
  time_to_first_token_ms: number | null,
  output_tokens_per_second: number | null,
  events: string,
  links: string,
  resource: Record<string, string>,
  dropped_attributes_count: number,
  tags: string[],
  prompt_name: string,
  prompt_version: number,
  attributes: Record<string, string>,
];

function toRow(projectId: string, ttlDays: number, s: NormalizedSpan, traceHourMs: number): SpanRow {
  return [
    projectId,
    s.trace_id,
    s.span_id,
    s.parent_span_id,
    s.name,
    s.kind,
    s.start_time,
    s.end_time,
    s.status,
    s.error_type,
    s.error_message,
    s.model_name,
    s.environment,
    s.user_id,
    s.session_id,
    ...payloadValues(s.input, s.output),
    s.metadata,
    s.cost,
    s.input_tokens,
    s.output_tokens,
    s.total_tokens,
    s.evaluation_run_id,
    traceHourMs / 1000,
    ttlDays,
    s.cost_source,
    s.cache_read_tokens,
    s.cache_write_tokens,
    s.reasoning_tokens,
    s.time_to_first_token_ms,
    s.output_tokens_per_second ?? outputTokensPerSecond(s),
    // Most spans carry neither: the constant spares a stringify per span on the ingest path.
    s.events.length ? JSON.stringify(s.events) : '[]',
    s.links.length ? JSON.stringify(s.links) : '[]',
    s.resource,
    s.dropped_attributes_count,
    s.tags,
    s.prompt_name,
    s.prompt_version,
    s.attributes,
  ];
}

/**
 * A span's output rate when the producer sent none (docs/spans.md, "More span fields"): its output
 * tokens over the seconds it spent generating them, from the first token (`time_to_first_token_ms`
 * after the start, when known) to its end. Null without output tokens, without an end, or when
 * that time is not positive (a first token at or past the end). Rounded to a thousandth.
 */
export function outputTokensPerSecond(
  s: Pick<NormalizedSpan, 'output_tokens' | 'start_time' | 'end_time' | 'time_to_first_token_ms'>,
): number | null {
  if (s.output_tokens <= 0 || s.end_time === null) return null;
  const generatingMs = s.end_time - s.start_time - (s.time_to_first_token_ms ?? 0);
  // To a thousandth: finer digits mean nothing for a rate, and would lengthen every row sent.
  return generatingMs > 0 ? Math.round((s.output_tokens * 1_000_000) / generatingMs) / 1000 : null;
}

function spanKey(traceId: string, spanId: string): string {
  return `${traceId}\u0000${spanId}`;
}

/** Splits rows so no insert touches more month partitions than ClickHouse allows at once. */
function chunkByPartition(rows: SpanRow[]): SpanRow[][] {
  const byMonth = new Map<string, SpanRow[]>();
  for (const row of rows) {
    const d = new Date(row[6]); // start_time
    const month = `${d.getUTCFullYear()}-${d.getUTCMonth()}`;
    let list = byMonth.get(month);
    if (!list) byMonth.set(month, (list = []));
    list.push(row);
  }
  if (byMonth.size <= MAX_PARTITIONS_PER_INSERT) return [rows];
  const groups = [...byMonth.values()];
  const chunks: SpanRow[][] = [];
  for (let i = 0; i < groups.length; i += MAX_PARTITIONS_PER_INSERT)
    chunks.push(groups.slice(i, i + MAX_PARTITIONS_PER_INSERT).flat());
  return chunks;
}
