import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import { priceBookOf } from '../model-prices/pricing.js';
import { forEachInSlices } from '../event-loop-slices.js';
import { ingestControlsOf, storeSpans } from '../traces/service.js';
import { issueLines } from '../zod-issues.js';
import {
  plainlyValid,
  SpanInputSchema,
  validateSpans,
  type NormalizedSpan,
  type SpanInput,
} from '../traces/span-input.js';

/**
 * Spans sent in pieces (quality.md §5; docs/integrations/langfuse-api.md, "Order, re-sending"): producers' own protocols send one span as
 * a create and one or more updates (Langfuse's `span-create` / `span-update`, LangSmith's run post and
 * patch), in any order, across requests and processes. This module is protocol-neutral: a protocol
 * maps its events to `SpanPart`s (native span fields, docs/spans.md) and hands them to
 * `storeSpanParts`.
 *
 * - Every piece is kept in ClickHouse's `span_parts` (clickhouse/0023_span_parts.sql) for a day, keyed
 *   by project, span and part id: a re-sent piece (same id, or same content) replaces itself, so it
 *   never counts twice.
 * - A span settles once it has a create and no piece has come for `quietMs` (or its first piece is
 *   `maxHoldMs` old, so a span updated for ever is still written). Settling merges its pieces (see
 *   `mergeSpanParts`) and writes the span ONCE through the span writer, so `spans` holds one row and
 *   every rollup fed by it counts the span once (a rewrite would count it again: the rollups add).
 * - An update whose create has not come is held, not listed; it is joined when the create comes, or
 *   dropped with the part's day. A piece arriving after its span was written is kept but changes
 *   nothing (the span writer's exactly-once check also refuses a second row).
 * - Settling runs once in every API process (`shareSpanPartsSweeper`: one sweeper for every app built
 *   on one context, whichever protocols it speaks), every `everyMs`; two processes settling one span
 *   write it once (the writer's trace locks and check).
 */

/** One piece of a span: the native span fields it carries (all optional, `trace_id`/`span_id` aside). */
export type SpanPart = {
  span_id: string;
  trace_id: string;
  kind: 'create' | 'update';
  /** Native span fields (the body of POST /traces's spans); absent, null, '', {} and [] mean "not sent". */
  fields: Partial<SpanInput>;
  /** When the piece reached us (epoch ms). */
  received_at: number;
  /** When the producer made the piece (epoch ms): the order pieces merge in. `received_at` when absent. */
  event_time?: number;
  /** The producer's id for the piece (an event id); a hash of the piece when absent. */
  part_id?: string;
};

export type RejectedPart = { index: number; span_id: string; errors: string[] };

/** The project a piece belongs to and the retention its span gets. */
export type PartsProject = { projectId: string; traceTtlDays: number };

export type SpanPartsOptions = {
  /** A span settles when no piece came for this long (ms). */
  quietMs: number;
  /** ...or when its first piece is this old (ms), pieces still coming or not. */
  maxHoldMs: number;
};

export const SPAN_PARTS_DEFAULTS: SpanPartsOptions = { quietMs: 10_000, maxHoldMs: 120_000 };
/** Spans settled per sweep at most; the next sweep takes the rest. */
const SETTLE_BATCH = 10_000;
const WRITTEN = 'written';
/** The marker's part id: no producer's event id starts with a NUL. */
const WRITTEN_PART_ID = '\u0000written';

/**
 * Keeps the pieces: checks each one alone (a bad piece is rejected with the native ingest's
 * sentences, the others are stored), then inserts the good ones in one insert. Resolves once they
 * are durably stored; the spans they belong to are written when they settle.
 *
 * With `writeWhole` (a protocol whose create and update of one span, sent together, are the whole
 * span: LangSmith's run post with its end, or its post and patch in one batch), a span whose pieces
 * in this call make it whole (a create, a start and an end) and of which no piece was kept before is
 * written at once through the span writer, as settling would write it: its pieces never go through
 * the table and are not read back (bench/protocols.ts: that round trip was most of the gap to native
 * ingest). A span with an earlier piece (an update sent before its create) is kept as pieces and
 * settles as before, so order and the answer are the same either way.
 *
 * Such a span is not marked written (an insert per request, on the embedded engine's one queue):
 * a re-sent batch writes it whole again, and the span writer's exactly-once check (same project,
 * trace and span stored) leaves it out, so `spans` and the rollups hold it once, and the usage counts
 * only what the writer inserted (`storeSpans`). A piece of it re-sent alone is kept
 * and, when it settles, meets the same check. A project that samples is the exception: a span held
 * by sampling is not in `spans` for the check to see, so there the spans written here are marked, as
 * settling marks them, and a re-sent batch is kept as pieces that never settle again.
 */
export async function storeSpanParts(
  ctx: AppContext,
  project: PartsProject,
  parts: readonly SpanPart[],
  options: { writeWhole?: boolean } = {},
): Promise<{ stored: number; rejected: RejectedPart[] }> {
  // Asked first, so the store answers while the pieces are checked: which of the spans that may be
  // whole here (a create and an end among their pieces) already have something kept.
  const kept = options.writeWhole ? keptBefore(ctx, project.projectId, maybeWhole(parts)) : undefined;
  kept?.catch(() => {}); // awaited below; not left unhandled if checking the pieces throws first
  const rejected: RejectedPart[] = [];
  const good: { part: SpanPart; fields: Record<string, unknown> }[] = [];
  // The project's masking runs before a piece is kept (docs/producer-controls.md): span_parts is a store too.
  const controls = ingestControlsOf(ctx);
  const { masker, sampling } = await controls.book.of(project.projectId);
  let masked = 0;
  await forEachInSlices(parts, (part, index) => {
    const errors = checkPart(part);
    if (errors.length) {
      rejected.push({ index, span_id: part.span_id, errors });
      return;
    }
    const clean = cleanFields(part.fields);
    if (masker) masked += masker.maskFields(clean);
    good.push({ part, fields: clean });
  });
  const written = kept ? await writeWholeSpans(ctx, project, good, await kept) : new Map<string, string>();
  const rows: PartRow[] = [];
  for (const { part, fields: clean } of good) {
    if (written.has(part.span_id)) continue;
    const fields = JSON.stringify(clean);
    rows.push({
      project_id: project.projectId,
      span_id: part.span_id,
      trace_id: part.trace_id,
      part_id: part.part_id ?? hashPart(part.kind, fields),
      kind: part.kind,
      fields,
      event_time: part.event_time ?? part.received_at,
      received_at: part.received_at,
      ttl_days: project.traceTtlDays,
    });
  }
  const pieces = rows.length;
  // In a project that samples, a span written here is marked so (after it was stored, so a failed
  // write leaves nothing that would stop the retried request from writing it): a piece re-sent later
  // is kept but changes nothing. Elsewhere the writer's check does that (see above).
  const now = Date.now();
  if (sampling)
    for (const [spanId, traceId] of written)
      rows.push(writtenMark(project.projectId, spanId, traceId, now, project.traceTtlDays));
  await insertParts(ctx, rows);
  if (pieces > 0) piecesStoredAt.set(ctx, Date.now());
  if (masked) controls.meter.add(project.projectId, { masked });
  return { stored: good.length, rejected };
}

/** The spans some of whose pieces here are a create and an end: those that may be whole. */
function maybeWhole(parts: readonly SpanPart[]): string[] {
  const create = new Set<string>();
  const end = new Set<string>();
  for (const p of parts) {
    if (p.kind === 'create') create.add(p.span_id);
    if (p.fields.end_time !== undefined && p.fields.end_time !== null) end.add(p.span_id);
  }
  return [...create].filter((id) => end.has(id) && typeof id === 'string' && id.length <= 128);
}

type KeptBefore = { asked: Set<string>; seen: Set<string> };

/** Which of `spanIds` (`asked`) have any row kept (`seen`: a piece, or the mark of a span written). */
async function keptBefore(ctx: AppContext, projectId: string, spanIds: string[]): Promise<KeptBefore> {
  const asked = new Set(spanIds);
  if (spanIds.length === 0) return { asked, seen: new Set() };
  const seen = await ctx.ch.rows<{ span_id: string }>({
    query: `SELECT DISTINCT span_id FROM span_parts
             WHERE project_id = {project:String} AND span_id IN {spans:Array(String)}`,
    query_params: { project: projectId, spans: spanIds },
  });
  return { asked, seen: new Set(seen.map((r) => r.span_id)) };
}

/**
 * `storeSpanParts`'s `writeWhole`: writes the spans the good pieces make whole (merged: a create, a
 * start and an end, valid) of which nothing was kept before; returns them, span id to trace id.
 */
async function writeWholeSpans(
  ctx: AppContext,
  project: PartsProject,
  good: { part: SpanPart; fields: Record<string, unknown> }[],
  before: KeptBefore,
): Promise<Map<string, string>> {
  const bySpan = new Map<string, number[]>();
  good.forEach(({ part }, i) => {
    let list = bySpan.get(part.span_id);
    if (!list) bySpan.set(part.span_id, (list = []));
    list.push(i);
  });
  const spans: NormalizedSpan[] = [];
  const written = new Map<string, string>();
  for (const [spanId, indexes] of bySpan) {
    if (!before.asked.has(spanId) || before.seen.has(spanId)) continue;
    const traceId = good[indexes[0]!]!.part.trace_id;
    // One trace per span (pieces that disagree settle from the table, which takes the first).
    if (indexes.some((i) => good[i]!.part.trace_id !== traceId)) continue;
    const merged = mergeSpanParts(
      indexes.map((i) => ({
        kind: good[i]!.part.kind,
        // Pieces repeated in one request merge to the same span, so no content hash is needed here.
        part_id: good[i]!.part.part_id ?? `\u0000${i}`,
        fields: good[i]!.fields as Partial<SpanInput>,
        event_time: good[i]!.part.event_time,
        received_at: good[i]!.part.received_at,
      })),
    );
    if (merged?.end_time === undefined) continue;
    // A merged span the native checks refuse is left to settle, which counts it invalid, as before.
    const { accepted } = validateSpans([{ ...merged, trace_id: traceId, span_id: spanId }]);
    if (accepted.length === 0) continue;
    spans.push(accepted[0]!);
    written.set(spanId, traceId);
  }
  if (spans.length)
    await storeSpans(
      ctx.spanWriter,
      { projectId: project.projectId, traceTtlDays: project.traceTtlDays },
      spans,
      priceBookOf(ctx.pg),
      ingestControlsOf(ctx),
    );
  return written;
}

/**
 * Writes every span that has settled by `now` (all projects), and marks them written. Returns how
 * many spans were written. The sweeper calls it; tests call it with a `now` past the window.
 */
export async function settleSpanParts(
  ctx: AppContext,
  options: Partial<SpanPartsOptions> & { now?: number; projectId?: string } = {},
): Promise<{ written: number; invalid: number }> {
  const { quietMs, maxHoldMs } = { ...SPAN_PARTS_DEFAULTS, ...options };
  const now = options.now ?? Date.now();
  const due = await ctx.ch.rows<{ project_id: string; span_id: string }>({
    query: `SELECT project_id, span_id
              FROM span_parts
             WHERE received_at >= {since:DateTime64(3, 'UTC')} ${options.projectId ? 'AND project_id = {project:String}' : ''}
             GROUP BY project_id, span_id
            HAVING countIf(kind = 'create') > 0 AND countIf(kind = '${WRITTEN}') = 0
               AND (max(received_at) <= {quiet:DateTime64(3, 'UTC')} OR min(received_at) <= {hold:DateTime64(3, 'UTC')})
             LIMIT ${SETTLE_BATCH}`,
    query_params: {
      since: chTime(now - 86_400_000),
      quiet: chTime(now - quietMs),
      hold: chTime(now - maxHoldMs),
      project: options.projectId ?? '',
    },
  });
  if (due.length === 0) return { written: 0, invalid: 0 };
  const byProject = new Map<string, string[]>();
  for (const d of due) {
    let list = byProject.get(d.project_id);
    if (!list) byProject.set(d.project_id, (list = []));
    list.push(d.span_id);
  }
  let written = 0;
  let invalid = 0;
  for (const [projectId, spanIds] of byProject) {
    const rows = await ctx.ch.rows<StoredPartRow>({
      query: `SELECT span_id, trace_id, part_id, kind, fields, toUnixTimestamp64Milli(event_time) AS event_ms,
                     toUnixTimestamp64Milli(received_at) AS received_ms, ttl_days
                FROM span_parts
               WHERE project_id = {project:String} AND span_id IN {spans:Array(String)}`,
      query_params: { project: projectId, spans: spanIds },
    });
    const bySpan = new Map<string, StoredPartRow[]>();
    for (const row of rows) {
      let list = bySpan.get(row.span_id);
      if (!list) bySpan.set(row.span_id, (list = []));
      list.push(row);
    }
    const spans: NormalizedSpan[] = [];
    let ttlDays = 0;
    const marks: PartRow[] = [];
    for (const [spanId, stored] of bySpan) {
      if (stored.some((r) => r.kind === WRITTEN)) continue;
      const merged = mergeSpanParts(
        stored.map((r) => ({
          kind: r.kind as SpanPart['kind'],
          part_id: r.part_id,
          fields: JSON.parse(r.fields) as Partial<SpanInput>,
          event_time: Number(r.event_ms),
          received_at: Number(r.received_ms),
        })),
      );
      if (!merged) continue;
      const traceId = stored[0]!.trace_id;
      const { accepted } = validateSpans([{ ...merged, trace_id: traceId, span_id: spanId }]);
      if (accepted.length) spans.push(...accepted);
      else invalid++;
      const ttl = Math.max(...stored.map((r) => Number(r.ttl_days)));
      ttlDays = Math.max(ttlDays, ttl);
      marks.push(writtenMark(projectId, spanId, traceId, now, ttl));
    }
    if (spans.length) {
      // The native path's store: masking again changes nothing (the pieces were masked when kept)
      // unless the setting changed meanwhile; then pricing, the writer, and the day's usage, which
      // counts what the writer inserted (a re-sent piece of a span written whole is left out there).
      await storeSpans(
        ctx.spanWriter,
        { projectId, traceTtlDays: ttlDays },
        spans,
        priceBookOf(ctx.pg),
        ingestControlsOf(ctx),
      );
      written += spans.length;
    }
    await insertParts(ctx, marks);
  }
  return { written, invalid };
}

/** When this process last kept pieces that may settle (not only written marks), per context. */
const piecesStoredAt = new WeakMap<AppContext, number>();

/**
 * Settles due spans every `everyMs` until stopped (the API process; src/protocols/*). A failed sweep
 * (a store down) is retried by the next one: nothing is marked written until its span is stored.
 *
 * The due query groups a day of pieces, and runs on the store's session that ingest uses, so it is
 * asked only while it can find something: while pieces this process kept may still come due (kept
 * in the last quiet window and two sweeps), after a sweep that failed or took a full batch, and
 * otherwise once every `idleEveryMs` (pieces another process kept and did not settle, a crash say).
 * An idle process, or one taking only runs written whole (LangSmith's), asks once a minute.
 */
export function startSpanPartsSweeper(
  ctx: AppContext,
  options: Partial<SpanPartsOptions> & {
    everyMs?: number;
    idleEveryMs?: number;
    onError?: (error: unknown) => void;
  } = {},
): () => Promise<void> {
  const everyMs = options.everyMs ?? 2_000;
  const idleEveryMs = options.idleEveryMs ?? 60_000;
  const quietMs = options.quietMs ?? SPAN_PARTS_DEFAULTS.quietMs;
  let running: Promise<unknown> | null = null;
  let stopped = false;
  let askedAt = 0;
  let more = true;
  const timer = setInterval(() => {
    if (running || stopped) return;
    const now = Date.now();
    const recent = now - (piecesStoredAt.get(ctx) ?? 0) <= quietMs + 2 * everyMs;
    if (!more && !recent && now - askedAt < idleEveryMs) return;
    askedAt = now;
    running = settleSpanParts(ctx, options)
      .then(({ written, invalid }) => (more = written + invalid >= SETTLE_BATCH))
      .catch((error: unknown) => {
        more = true;
        options.onError?.(error);
      })
      .finally(() => (running = null));
  }, everyMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}

/** The sweeper of each context and the apps using it (one context per process, tests aside). */
const sharedSweepers = new WeakMap<AppContext, { users: number; stop: () => Promise<void> }>();

/**
 * One sweeper per context (so per process), however many apps and protocols use it: the first user
 * starts it, the last release stops it. Returns the release (idempotent).
 */
export function shareSpanPartsSweeper(ctx: AppContext, onError: (error: unknown) => void): () => Promise<void> {
  let shared = sharedSweepers.get(ctx);
  if (!shared) {
    shared = { users: 0, stop: startSpanPartsSweeper(ctx, { onError }) };
    sharedSweepers.set(ctx, shared);
  }
  shared.users++;
  const mine = shared;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    if (--mine.users > 0) return;
    if (sharedSweepers.get(ctx) === mine) sharedSweepers.delete(ctx);
    await mine.stop();
  };
}

/** How many sweepers run on a context: 0 or 1 (tests). */
export function spanPartsSweeperUsers(ctx: AppContext): number {
  return sharedSweepers.get(ctx)?.users ?? 0;
}

type MergeInput = Pick<SpanPart, 'kind' | 'fields' | 'received_at' | 'event_time' | 'part_id'>;

/**
 * The span its pieces make, or null while no create has come. Pieces apply in the order the producer
 * made them (event time; a create before an update of the same time), each field the latest piece
 * that sent it: a value absent, null, '', {} or [] never overwrites one. The earliest start is kept;
 * metadata, resource and attributes merge key by key (a later piece's value wins); tags are the union; events and
 * links are kept once each. A piece repeated (same part id) counts once. Pure.
 */
export function mergeSpanParts(parts: readonly MergeInput[]): Partial<SpanInput> | null {
  const unique = new Map<string, MergeInput>();
  for (const p of parts) unique.set(p.part_id ?? hashPart(p.kind, JSON.stringify(cleanFields(p.fields))), p);
  const list = [...unique.values()];
  if (!list.some((p) => p.kind === 'create')) return null;
  list.sort(
    (a, b) =>
      (a.event_time ?? a.received_at) - (b.event_time ?? b.received_at) ||
      (a.kind === b.kind ? a.received_at - b.received_at : a.kind === 'create' ? -1 : 1),
  );
  const out: Record<string, unknown> = {};
  for (const p of list) {
    for (const [key, value] of Object.entries(cleanFields(p.fields))) {
      const prior = out[key];
      if (key === 'start_time') {
        if (prior === undefined || Date.parse(value as string) < Date.parse(prior as string)) out[key] = value;
      } else if (key === 'metadata' || key === 'resource' || key === 'attributes') {
        out[key] = { ...(prior as object | undefined), ...(value as object) };
      } else if (key === 'tags') {
        out[key] = [...new Set([...((prior as string[] | undefined) ?? []), ...(value as string[])])];
      } else if (key === 'events' || key === 'links') {
        const seen = new Set(((prior as unknown[] | undefined) ?? []).map((x) => JSON.stringify(x)));
        const more = (value as unknown[]).filter((x) => !seen.has(JSON.stringify(x)));
        out[key] = [...((prior as unknown[] | undefined) ?? []), ...more];
      } else {
        out[key] = value;
      }
    }
  }
  // Nothing said when the span ended before its start (an update's clock): the start bounds it.
  if (typeof out.end_time === 'string' && typeof out.start_time === 'string')
    if (Date.parse(out.end_time) < Date.parse(out.start_time)) out.end_time = out.start_time;
  if (out.start_time === undefined) return null;
  out.name ??= (out.kind as string | undefined) ?? 'span';
  return out as Partial<SpanInput>;
}

/** The fields that say something: absent, null, '', {} and [] dropped (so they never overwrite). */
function cleanFields(fields: Partial<SpanInput>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (key === 'trace_id' || key === 'span_id') continue;
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value) && value.length === 0) continue;
    if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) continue;
    out[key] = value;
  }
  return out;
}

/** The native checks, one piece alone: its fields put on a span that is otherwise valid. */
function checkPart(part: SpanPart): string[] {
  const errors: string[] = [];
  if (typeof part.span_id !== 'string' || part.span_id.length < 1 || part.span_id.length > 128)
    errors.push('span_id: must be 1 to 128 characters');
  if (typeof part.trace_id !== 'string' || part.trace_id.length < 1 || part.trace_id.length > 128)
    errors.push('trace_id: must be 1 to 128 characters');
  if (errors.length) return errors;
  const fields = cleanFields(part.fields);
  const probe = {
    name: 'span',
    ...fields,
    trace_id: part.trace_id,
    span_id: part.span_id,
    start_time: fields.start_time ?? fields.end_time ?? new Date(part.received_at).toISOString(),
  };
  // An update's end alone can't be checked against a start it doesn't carry.
  if (fields.start_time === undefined) delete (probe as Record<string, unknown>).end_time;
  // The native fast path first (stricter, never looser); the schema words what it refuses.
  if (plainlyValid(probe)) return [];
  const result = SpanInputSchema.safeParse(probe);
  return result.success ? [] : issueLines(result.error.issues, probe, 'span');
}

function hashPart(kind: string, fields: string): string {
  return crypto.createHash('sha256').update(kind).update('\u0000').update(fields).digest('hex').slice(0, 32);
}

function chTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
}

const PART_COLUMNS = [
  'project_id',
  'span_id',
  'trace_id',
  'part_id',
  'kind',
  'fields',
  'event_time',
  'received_at',
  'ttl_days',
] as const;

/** The row that says a span was written (at `now`): a piece of it kept later changes nothing. */
function writtenMark(projectId: string, spanId: string, traceId: string, now: number, ttlDays: number): PartRow {
  return {
    project_id: projectId,
    span_id: spanId,
    trace_id: traceId,
    part_id: WRITTEN_PART_ID,
    kind: WRITTEN,
    fields: '',
    event_time: now,
    received_at: now,
    ttl_days: ttlDays,
  };
}

/** Pieces (and marks) in one insert, through the store's compact insert as the span writer's. */
async function insertParts(ctx: AppContext, rows: readonly PartRow[]): Promise<void> {
  await ctx.ch.insertCompact({
    table: 'span_parts',
    columns: PART_COLUMNS,
    settings: { input_format_parallel_parsing: 0 },
    rows: rows.map((row) => PART_COLUMNS.map((column) => row[column])),
  });
}

type PartRow = {
  project_id: string;
  span_id: string;
  trace_id: string;
  part_id: string;
  kind: string;
  fields: string;
  event_time: number;
  received_at: number;
  ttl_days: number;
};

type StoredPartRow = {
  span_id: string;
  trace_id: string;
  part_id: string;
  kind: string;
  fields: string;
  event_ms: string | number;
  received_ms: string | number;
  ttl_days: string | number;
};
