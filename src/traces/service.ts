import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import type { ApiKeyPrincipal } from '../auth/principal.js';
import { withinLimits, type QueryLimits } from '../query/limits.js';
import type { Query } from '../query/params.js';
import type { SpanWriter } from './span-writer.js';
import type { PriceBook } from '../model-prices/pricing.js';
import { replaceUnpairedSurrogates, validateSpans, type NormalizedSpan, type RejectedSpan } from './span-input.js';
import {
  fetchTracesQuery,
  selectTracesQuery,
  traceItemBytesQuery,
  type PageKey,
  type TraceListParams,
} from './list-query.js';
import { traceSpanBytesQuery, traceSpansQuery, type StoredSpanRow, type TraceAggregateRow } from './queries.js';
import {
  deriveTrace,
  isoOf,
  listItemOf,
  roundCost,
  spanRecordOf,
  type SpanRecord,
  type TraceListItem,
} from './trace-item.js';
import { withTextIndexState } from './text-index.js';
import { sessionListQuery, type SessionRow, type SessionWhere } from './session-query.js';
import type { Predicate } from './filters.js';
import { signalMembers } from '../signals/service.js';
import { snippetOf, textMatchQuery, type TextField, type TextSearch } from './text-search.js';
import { settingsClause } from '../query/limits.js';
import { forEachInSlices } from '../event-loop-slices.js';
import { controlsOf, type ControlsBook } from '../controls/settings.js';
import { usageMeterOf, type UsageMeter } from '../controls/usage.js';
import { sampleBatch } from '../controls/sampling.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { SessionSummaryAnswer, TextMatchAnswer } from './answers.js';
import {
  answerLimits,
  DETAIL_BOUNDS,
  KEYS_LIMITS,
  leadingWithin,
  LIST_PAGE_BYTES,
  measuredLimits,
  SESSION_BOUNDS,
  SUMMARY_LIMITS,
  type DetailBounds,
  type SessionBounds,
} from './read-bounds.js';

/** What the ingest path reads of a project's producer controls, and counts its usage into. */
export type IngestControls = { book: ControlsBook; meter: UsageMeter; ctx: AppContext };

/** The process's ingest controls for a running context. */
export function ingestControlsOf(ctx: AppContext): IngestControls {
  return { book: controlsOf(ctx), meter: usageMeterOf(ctx), ctx };
}

/** `sampled_out` only for a project that samples (quality.md §6): others answer as before sampling existed. */
export type IngestResult = { accepted: number; sampled_out?: number; rejected: RejectedSpan[] };

/** `POST /traces`: validates each span, stores the valid ones (partial success, docs/spans.md). */
export async function ingestSpans(
  writer: SpanWriter,
  key: ApiKeyPrincipal,
  raw: readonly unknown[],
  prices: PriceBook,
  controls: IngestControls,
): Promise<IngestResult> {
  const { accepted, rejected } = validateSpans(raw);
  const { sampledOut } = await storeSpans(writer, key, accepted, prices, controls);
  if (sampledOut === null) return { accepted: accepted.length, rejected };
  return { accepted: accepted.length, sampled_out: sampledOut, rejected };
}

/**
 * Stores accepted spans (every ingest protocol comes through here). The project's masking runs first
 * (docs/producer-controls.md): nothing unmasked reaches a store or an index. Spans without a sent
 * cost are then priced from the key's project's prices (docs/model-prices.md): cost is fixed at
 * ingest, so a later price change touches only spans ingested after it. What was stored and masked
 * is counted in the project's usage. Sampling decides last (src/controls/sampling.ts): spans of a trace
 * out by hash are held, already masked and priced, and counted as sampled out (`sampledOut`, null
 * when the project keeps every trace).
 *
 * The usage counts the spans the writer inserted (`stored`), not every span handed to it: a span
 * stored before (a batch re-sent after a lost answer, a piece a producer protocol's re-sent batch
 * carries again, src/protocols/span-parts.ts) is skipped by the writer's exactly-once check and
 * counts once, in the usage and against the spans-per-day quota alike.
 */
export async function storeSpans(
  writer: SpanWriter,
  key: Pick<ApiKeyPrincipal, 'projectId' | 'traceTtlDays'>,
  spans: NormalizedSpan[],
  prices: PriceBook,
  controls: IngestControls,
): Promise<{ sampledOut: number | null; stored: number }> {
  replaceUnpairedSurrogates(spans);
  const { masker, sampling } = await controls.book.of(key.projectId);
  let masked = 0;
  // Sliced like pricing (docs/limits.md, "The event loop"): a 10,000-span batch masks in turns.
  if (masker) await forEachInSlices(spans, (span) => (masked += masker.maskSpan(span)));
  await prices.price(key.projectId, spans);
  let kept = spans;
  let sampledOut: number | null = null;
  if (sampling) {
    const decided = await sampleBatch(controls.ctx, writer, key.projectId, key.traceTtlDays, sampling, spans);
    kept = decided.kept;
    sampledOut = decided.held;
  }
  const stored = kept.length > 0 ? await writer.write(key.projectId, key.traceTtlDays, kept) : 0;
  controls.meter.add(key.projectId, { spans: stored, masked, sampledOut: sampledOut ?? 0 });
  return { sampledOut, stored };
}

async function rows<T>(ctx: AppContext, q: Query, limits: QueryLimits, advice: string): Promise<T[]> {
  return withinLimits(limits, advice, () => ctx.ch.rows<T>(q));
}

export type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };

const LIST_ADVICE = 'ask for a smaller limit or a narrower window (start_after, end_before)';

type Chosen = { trace_id: string; hour: string | number; total: string | number };

/** Phase 1 of a list: the page's trace keys and the number of matches. */
async function choosePage(ctx: AppContext, params: TraceListParams): Promise<{ page: PageKey[]; total: number }> {
  let chosen = await rows<Chosen>(ctx, selectTracesQuery(params, KEYS_LIMITS), KEYS_LIMITS, LIST_ADVICE);
  let total = chosen.length ? Number(chosen[0]!.total) : 0;
  if (chosen.length === 0 && params.page > 0) {
    // A page past the end still reports how many traces match.
    const first = await rows<Chosen>(
      ctx,
      selectTracesQuery({ ...params, page: 0, limit: 1 }, KEYS_LIMITS),
      KEYS_LIMITS,
      LIST_ADVICE,
    );
    total = first.length ? Number(first[0]!.total) : 0;
    chosen = [];
  }
  return { page: chosen.map((c) => ({ trace_id: c.trace_id, hour: Number(c.hour) })), total };
}

/** Phase 2: the list items of chosen traces, the answer within `limits`. */
async function fetchItems(
  ctx: AppContext,
  params: TraceListParams,
  page: PageKey[],
  limits: QueryLimits,
): Promise<TraceListItem[]> {
  if (page.length === 0) return [];
  const aggregates = await rows<TraceAggregateRow>(
    ctx,
    fetchTracesQuery(params, page, limits),
    limits,
    'ask for a smaller limit',
  );
  // In the page's order: the fetch reads by start time, a `sort` may have chosen another.
  const at = new Map(page.map((k, i) => [k.trace_id, i]));
  aggregates.sort((a, b) => at.get(a.trace_id)! - at.get(b.trace_id)!);
  return aggregates.map((a) => listItemOf(a, params.projectId, ctx.config.webUrl));
}

/**
 * `GET /traces`: newest first (see list-query.ts for the plan). A page whose traces carry more than
 * `pageBytes` (LIST_PAGE_BYTES) of input, output and metadata is refused with a 400 asking for a
 * smaller `limit`, rather than cut: a list item's fields are the trace's own (docs/traces.md).
 */
export async function listTraces(
  ctx: AppContext,
  params: TraceListParams,
  pageBytes = LIST_PAGE_BYTES,
): Promise<Page<TraceListItem & { text_match?: TextMatch }>> {
  params = { ...params, signalIds: params.signalIds ?? (await mergedSignals(ctx, params.projectId, params.filters)) };
  if (params.text && !params.text.index)
    params = { ...params, text: await withTextIndexState(ctx.ch, params.projectId, params.text) };
  const { page, total } = await choosePage(ctx, params);
  const data = await fetchItems(ctx, params, page, answerLimits(page.length, pageBytes));
  if (!params.text || data.length === 0) return { data, meta: { page: params.page, limit: params.limit, total } };
  const matches = await textMatches(ctx, params.projectId, params.text, page);
  return {
    data: data.map((item) => withMatch(item, matches.get(item.trace_id))),
    meta: { page: params.page, limit: params.limit, total },
  };
}

/**
 * By the signal each `signal_id` predicate names, the signals whose findings it matches: a merge target
 * matches its sources' traces too (docs/signals.md, "Merge"); the signals service knows the merges.
 */
function mergedSignals(ctx: AppContext, projectId: string, filters: readonly Predicate[]) {
  return signalMembers(
    ctx.pg.pool,
    projectId,
    filters.flatMap((f) => (f.field === 'signal_id' ? [f.value] : [])),
  );
}

/**
 * The ids of the traces `GET /traces` would list for these parameters, in its order (phase 1 only):
 * what an annotation queue's fill from a filter takes (src/annotation/service.ts).
 */
export async function listTraceIds(ctx: AppContext, params: TraceListParams): Promise<string[]> {
  params = { ...params, signalIds: params.signalIds ?? (await mergedSignals(ctx, params.projectId, params.filters)) };
  if (params.text && !params.text.index)
    params = { ...params, text: await withTextIndexState(ctx.ch, params.projectId, params.text) };
  return (await choosePage(ctx, params)).page.map((k) => k.trace_id);
}

export type TextMatch = AnswerOf<typeof TextMatchAnswer>;

type TextMatchRow = {
  trace_id: string;
  span_id: string;
  field: TextField;
  pos: string | number;
  from: string | number;
  around: string;
};

/** Where each found trace matched (its earliest span holding a term; text-search.ts `textMatchQuery`). */
async function textMatches(
  ctx: AppContext,
  projectId: string,
  text: TextSearch,
  page: PageKey[],
): Promise<Map<string, TextMatch>> {
  const limits = answerLimits(page.length, page.length * 8 * 1024 + 1024 * 1024);
  const found = await rows<TextMatchRow>(
    ctx,
    textMatchQuery(text, projectId, page, settingsClause(limits)),
    limits,
    LIST_ADVICE,
  );
  return new Map(
    found.map((r) => [
      r.trace_id,
      { span_id: r.span_id, field: r.field, snippet: snippetOf(r.around, Number(r.pos) - Number(r.from)) },
    ]),
  );
}

/** `text_match` goes after the item's own fields; a trace stored between the reads may lack one. */
function withMatch(item: TraceListItem, match: TextMatch | undefined): TraceListItem & { text_match?: TextMatch } {
  return match ? { ...item, text_match: match } : item;
}

export type TraceDetail = TraceListItem & { spans: SpanRecord[]; truncated?: true };

const DETAIL_ADVICE = 'the trace is too large to read in one answer';

/**
 * `GET /traces/{trace_id}`: the list item's fields plus its spans ordered by start time: all of
 * them, or, for a trace past the detail bounds (read-bounds.ts), the first spans that fit with
 * `truncated: true`; the trace's own fields (span_count, totals) then come from the rollup, so they
 * still describe the whole trace. A cheap first read of the spans' sizes decides the cut, so the
 * spans read after it never exceed the budget.
 */
export async function getTrace(
  ctx: AppContext,
  projectId: string,
  traceId: string,
  bounds: DetailBounds = DETAIL_BOUNDS,
): Promise<TraceDetail> {
  const sizes = await rows<{ bytes: string | number }>(
    ctx,
    traceSpanBytesQuery(projectId, traceId, bounds.maxSpans + 1, KEYS_LIMITS),
    KEYS_LIMITS,
    DETAIL_ADVICE,
  );
  if (sizes.length === 0) throw new NotFoundError('trace not found');
  const count = leadingWithin(
    sizes.slice(0, bounds.maxSpans).map((r) => Number(r.bytes)),
    bounds.textBytes,
  );
  const limits = measuredLimits(count, bounds.textBytes);
  const spans = (
    await rows<StoredSpanRow>(ctx, traceSpansQuery(projectId, traceId, count, limits), limits, DETAIL_ADVICE)
  ).map(spanRecordOf);
  if (spans.length === 0) throw new NotFoundError('trace not found');
  if (count === sizes.length) return { ...deriveTrace(spans, projectId, ctx.config.webUrl), spans };
  const whole = await listTraces(ctx, {
    projectId,
    limit: 1,
    page: 0,
    includeEvaluations: true,
    includeJudgeTraces: true,
    filters: [],
    traceIds: [traceId],
  });
  return { ...(whole.data[0] ?? deriveTrace(spans, projectId, ctx.config.webUrl)), spans, truncated: true };
}

export type SessionSummary = AnswerOf<typeof SessionSummaryAnswer>;

function sessionOf(row: SessionRow): SessionSummary {
  return {
    session_id: row.session_id,
    trace_count: Number(row.trace_count),
    first_trace_time: isoOf(row.first_ms),
    last_trace_time: isoOf(row.last_ms),
    total_cost: roundCost(row.total_cost),
    total_input_tokens: Number(row.total_input_tokens),
    total_output_tokens: Number(row.total_output_tokens),
    error_count: Number(row.error_count),
    duration_ms: row.end_ms === null ? null : Math.max(0, Number(row.end_ms) - Number(row.first_ms)),
    user_id: row.user_id === '' ? null : row.user_id,
  };
}

const SESSIONS_ADVICE = 'ask for a smaller limit';

/**
 * `GET /sessions`: sessions with their most recent trace first; with `where`, those one of whose
 * traces matches its filters and text.
 */
export async function listSessions(
  ctx: AppContext,
  projectId: string,
  limit: number,
  page: number,
  where?: SessionWhere,
): Promise<Page<SessionSummary>> {
  if (where && !where.signalIds) where = { ...where, signalIds: await mergedSignals(ctx, projectId, where.filters) };
  if (where?.text && !where.text.index)
    where = { ...where, text: await withTextIndexState(ctx.ch, projectId, where.text) };
  const found = await rows<SessionRow>(
    ctx,
    sessionListQuery({ projectId, limit, offset: page * limit, where }, SUMMARY_LIMITS),
    SUMMARY_LIMITS,
    SESSIONS_ADVICE,
  );
  let total = found.length ? Number(found[0]!.total) : 0;
  if (!found.length && page > 0) {
    const first = await rows<SessionRow>(
      ctx,
      sessionListQuery({ projectId, limit: 1, offset: 0, where }, SUMMARY_LIMITS),
      SUMMARY_LIMITS,
      SESSIONS_ADVICE,
    );
    total = first.length ? Number(first[0]!.total) : 0;
  }
  return { data: found.map(sessionOf), meta: { page, limit, total } };
}

/** The most traces a session read answers; longer sessions say so with `truncated`. */
export const MAX_SESSION_TRACES = SESSION_BOUNDS.maxTraces;

/**
 * `GET /sessions/{session_id}`: the session plus its traces, oldest first (a conversation's order):
 * the first MAX_SESSION_TRACES, and of those only as many as fit the session's byte budget (a chat
 * whose every trace repeats the history grows fast); `truncated` says when traces were left out.
 */
export async function getSession(
  ctx: AppContext,
  projectId: string,
  sessionId: string,
  bounds: SessionBounds = SESSION_BOUNDS,
): Promise<SessionSummary & { traces: TraceListItem[]; truncated: boolean }> {
  const [summary] = await rows<SessionRow>(
    ctx,
    sessionListQuery({ projectId, limit: 1, offset: 0, sessionId }, SUMMARY_LIMITS),
    SUMMARY_LIMITS,
    SESSIONS_ADVICE,
  );
  if (!summary) throw new NotFoundError('session not found');
  const params: TraceListParams = {
    projectId,
    limit: bounds.maxTraces,
    page: 0,
    includeEvaluations: true,
    filters: [],
    sessionId,
    order: 'oldest',
  };
  const { page, total } = await choosePage(ctx, params);
  const sizes = page.length
    ? await rows<{ trace_id: string; bytes: string | number }>(
        ctx,
        traceItemBytesQuery(params, page, KEYS_LIMITS),
        KEYS_LIMITS,
        SESSIONS_ADVICE,
      )
    : [];
  const bytes = new Map(sizes.map((r) => [r.trace_id, Number(r.bytes)]));
  const kept = page.slice(
    0,
    leadingWithin(
      page.map((p) => bytes.get(p.trace_id) ?? 0),
      bounds.textBytes,
    ),
  );
  const traces = await fetchItems(ctx, params, kept, measuredLimits(kept.length, bounds.textBytes));
  return { ...sessionOf(summary), traces, truncated: total > traces.length };
}
