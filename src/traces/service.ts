import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import type { SpanWriter } from './span-writer.js';
import { validateSpans, type NormalizedSpan, type RejectedSpan } from './span-input.js';
import { fetchTracesQuery, selectTracesQuery, type TraceListParams } from './list-query.js';
import { sessionTraceIdsQuery, traceSpansQuery, type Query, type StoredSpanRow, type TraceAggregateRow } from './queries.js';
import { deriveTrace, isoOf, listItemOf, roundCost, spanRecordOf, type SpanRecord, type TraceListItem } from './trace-item.js';
import { sessionListQuery, type SessionRow } from './session-query.js';

export type IngestResult = { accepted: number; rejected: RejectedSpan[] };

/** `POST /traces`: validates each span, stores the valid ones (partial success, extensions.md §3). */
export async function ingestSpans(writer: SpanWriter, key: ApiKeyPrincipal, raw: readonly unknown[]): Promise<IngestResult> {
  const { accepted, rejected } = validateSpans(raw);
  await storeSpans(writer, key, accepted);
  return { accepted: accepted.length, rejected };
}

export function storeSpans(writer: SpanWriter, key: ApiKeyPrincipal, spans: NormalizedSpan[]): Promise<void> {
  return writer.write(key.projectId, key.traceTtlDays, spans);
}

async function rows<T>(ctx: AppContext, q: Query): Promise<T[]> {
  const result = await ctx.ch.client.query({ ...q, format: 'JSONEachRow' });
  return result.json<T>();
}

export type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };

/** `GET /traces`: newest first (see list-query.ts for the plan). */
export async function listTraces(ctx: AppContext, params: TraceListParams): Promise<Page<TraceListItem>> {
  type Chosen = { trace_id: string; hour: string | number; total: string | number };
  let chosen = await rows<Chosen>(ctx, selectTracesQuery(params));
  let total = chosen.length ? Number(chosen[0]!.total) : 0;
  if (chosen.length === 0 && params.page > 0) {
    // A page past the end still reports how many traces match.
    const first = await rows<Chosen>(ctx, selectTracesQuery({ ...params, page: 0, limit: 1 }));
    total = first.length ? Number(first[0]!.total) : 0;
    chosen = [];
  }
  if (chosen.length === 0) return { data: [], meta: { page: params.page, limit: params.limit, total } };
  const page = chosen.map((c) => ({ trace_id: c.trace_id, hour: Number(c.hour) }));
  const aggregates = await rows<TraceAggregateRow>(ctx, fetchTracesQuery(params, page));
  const data = aggregates.map((a) => listItemOf(a, params.projectId, ctx.config.webUrl));
  return { data, meta: { page: params.page, limit: params.limit, total } };
}

export type TraceDetail = TraceListItem & { spans: SpanRecord[] };

/** `GET /traces/{trace_id}`: the list item's fields plus every span, ordered by start time. */
export async function getTrace(ctx: AppContext, projectId: string, traceId: string): Promise<TraceDetail> {
  const spans = (await rows<StoredSpanRow>(ctx, traceSpansQuery(projectId, [traceId]))).map(spanRecordOf);
  if (spans.length === 0) throw new NotFoundError('trace not found');
  return { ...deriveTrace(spans, projectId, ctx.config.webUrl), spans };
}

export type SessionSummary = {
  session_id: string;
  trace_count: number;
  first_trace_time: string;
  last_trace_time: string;
  total_cost: number;
  total_input_tokens: number;
  total_output_tokens: number;
  user_id: string | null;
};

function sessionOf(row: SessionRow): SessionSummary {
  return {
    session_id: row.session_id,
    trace_count: Number(row.trace_count),
    first_trace_time: isoOf(row.first_ms),
    last_trace_time: isoOf(row.last_ms),
    total_cost: roundCost(row.total_cost),
    total_input_tokens: Number(row.total_input_tokens),
    total_output_tokens: Number(row.total_output_tokens),
    user_id: row.user_id === '' ? null : row.user_id,
  };
}

/** `GET /sessions`: sessions with their most recent trace first. */
export async function listSessions(ctx: AppContext, projectId: string, limit: number, page: number): Promise<Page<SessionSummary>> {
  const found = await rows<SessionRow>(ctx, sessionListQuery({ projectId, limit, offset: page * limit }));
  let total = found.length ? Number(found[0]!.total) : 0;
  if (!found.length && page > 0) {
    const first = await rows<SessionRow>(ctx, sessionListQuery({ projectId, limit: 1, offset: 0 }));
    total = first.length ? Number(first[0]!.total) : 0;
  }
  return { data: found.map(sessionOf), meta: { page, limit, total } };
}

/** The most traces a session read answers; longer sessions say so with `truncated`. */
export const MAX_SESSION_TRACES = 1000;

/** `GET /sessions/{session_id}`: the session plus its traces, oldest first (a conversation's order). */
export async function getSession(ctx: AppContext, projectId: string, sessionId: string): Promise<SessionSummary & { traces: TraceListItem[]; truncated: boolean }> {
  const traceIds = (await rows<{ trace_id: string }>(ctx, sessionTraceIdsQuery(projectId, sessionId))).map((r) => r.trace_id);
  if (traceIds.length === 0) throw new NotFoundError('session not found');
  const [summary] = await rows<SessionRow>(ctx, sessionListQuery({ projectId, limit: 1, offset: 0, sessionId, traceIds }));
  if (!summary) throw new NotFoundError('session not found');
  const traces = await listTraces(ctx, {
    projectId,
    limit: MAX_SESSION_TRACES,
    page: 0,
    includeEvaluations: true,
    filters: [],
    traceIds,
    sessionId,
    order: 'oldest',
  });
  return { ...sessionOf(summary), traces: traces.data, truncated: traces.meta.total > traces.data.length };
}
