import { z } from 'zod';
import { Counter } from 'prom-client';
import type { AppContext } from '../context.js';
import { KeepPredicateSchema, type KeepPredicate } from '../query/predicates.js';
import { withTransaction } from '../stores/postgres.js';
import { isSampled } from '../evaluators/identity.js';
import type { NormalizedSpan } from '../traces/span-input.js';
import type { SpanWriter } from '../traces/span-writer.js';

/**
 * Sampling at ingest (quality.md §6; docs/producer-controls.md, "Sampling"). A trace is kept when a
 * hash of its trace id falls under the project's `rate` (the evaluators' `isSampled`, keyed by the
 * project, so every process decides alike), or when one of its spans matches a `keep` predicate.
 *
 * Spans of a trace out by hash are held in Postgres (`sampling_held`, never read by a list, search,
 * rollup or SQL) for the decision window. A span matching `keep` records a keep marker for its trace
 * (`sampling_keeps`) and then takes the trace's held spans out into the span store; a span out by hash
 * whose trace has a marker is stored at once. Between processes one can hold a span just after
 * another took the trace's held spans out: the periodic sweep (`sweepSampling`, every `SWEEP_MS` on
 * each API process) takes out the held spans of every marked trace, which closes that race. Held
 * spans leave only by a DELETE whose transaction also wrote them to the span writer, so each is
 * written to `spans` once; unclaimed ones are deleted when their window ends.
 */

export const MAX_KEEP_RULES = 20;
/** How long a keep marker lasts: a day, or the decision window if longer (late spans of a kept trace stay kept). */
const MARKER_SECONDS = 86_400;
/** How often each API process sweeps (marked held spans out, expired ones away). */
export const SWEEP_MS = 5_000;
/** Held spans taken out per statement. */
const CLAIM_ROWS = 2_000;

export const SamplingSetting = z
  .object({
    rate: z.number().min(0).max(1).default(1).describe('the share of traces kept by hash of the trace id, 0 to 1'),
    keep: z
      .array(KeepPredicateSchema)
      .max(MAX_KEEP_RULES)
      .default([])
      .describe('a trace one of whose spans matches any of these is kept whole'),
  })
  .strict();
export type SamplingSetting = z.infer<typeof SamplingSetting>;

export const SAMPLING_DEFAULT: SamplingSetting = { rate: 1, keep: [] };

/** Spans sampled out (held or dropped) since the process started, over every project (no tenant label). */
export const sampledOutCounter = new Counter({
  name: 'sightline_ingest_sampled_out_spans_total',
  help: 'Spans sampled out at ingest (held for the decision window; stored later only if a keep rule matches)',
  registers: [],
});

/** Whether one span matches a keep predicate (the list's semantics for that field, on this span alone). */
export function keepMatches(span: NormalizedSpan, rule: KeepPredicate): boolean {
  switch (rule.field) {
    case 'status':
      return rule.value.includes(span.status);
    case 'environment':
      return rule.value.includes(span.environment);
    case 'model_name':
      return rule.value.includes(span.model_name);
    case 'span_kind':
      return rule.value.includes(span.kind);
    case 'metadata': {
      const value = Object.hasOwn(span.metadata, rule.key) ? span.metadata[rule.key] : undefined;
      if (value === undefined) return false;
      return rule.op === 'eq' ? value === rule.value : value.includes(rule.value);
    }
  }
}

/** A trace is in by hash: the same answer on every process, for good. */
export function inSample(projectId: string, traceId: string, rate: number): boolean {
  return isSampled(traceId, `sampling:${projectId}`, rate);
}

export type SamplingDecision = { kept: NormalizedSpan[]; held: number };

/**
 * Decides a batch of one project's spans (already masked and priced): answers those to store now;
 * holds the rest. The keep markers are recorded, and the marked traces' held spans written, here.
 */
export async function sampleBatch(
  ctx: AppContext,
  writer: SpanWriter,
  projectId: string,
  ttlDays: number,
  setting: SamplingSetting,
  spans: NormalizedSpan[],
): Promise<SamplingDecision> {
  const byHash = new Map<string, boolean>();
  const matched = new Set<string>();
  for (const span of spans) {
    let inHash = byHash.get(span.trace_id);
    if (inHash === undefined) byHash.set(span.trace_id, (inHash = inSample(projectId, span.trace_id, setting.rate)));
    if (!inHash && !matched.has(span.trace_id) && setting.keep.some((rule) => keepMatches(span, rule)))
      matched.add(span.trace_id);
  }
  const outTraces = [...byHash].filter(([id, inHash]) => !inHash && !matched.has(id)).map(([id]) => id);
  if (matched.size === 0 && outTraces.length === 0) return { kept: spans, held: 0 };

  const window = ctx.config.samplingDecisionWindowSeconds;
  const pool = ctx.pg.pool;
  if (matched.size > 0) {
    // The marker first: a process holding a span of this trace from now on finds it, and one that
    // held a span before it is caught by the promotion below or by the next sweep.
    await pool.query(
      `INSERT INTO sampling_keeps (project_id, trace_id, expires_at)
       SELECT $1, t, now() + make_interval(secs => $3) FROM unnest($2::text[]) AS t
       ON CONFLICT (project_id, trace_id) DO UPDATE SET expires_at = excluded.expires_at`,
      [projectId, [...matched], Math.max(window, MARKER_SECONDS)],
    );
  }
  const marked = new Set(matched);
  if (outTraces.length > 0) {
    const { rows } = await pool.query<{ trace_id: string }>(
      `SELECT trace_id FROM sampling_keeps WHERE project_id = $1 AND trace_id = ANY($2::text[]) AND expires_at > now()`,
      [projectId, outTraces],
    );
    for (const r of rows) marked.add(r.trace_id);
  }
  const kept: NormalizedSpan[] = [];
  const held: NormalizedSpan[] = [];
  for (const span of spans) (byHash.get(span.trace_id) || marked.has(span.trace_id) ? kept : held).push(span);
  // With no keep rule, nothing can ever bring a held span back (only a keep match marks a trace):
  // the spans out by hash are dropped at once instead of being written to Postgres to expire there.
  if (held.length > 0 && setting.keep.length === 0) sampledOutCounter.inc(held.length);
  else if (held.length > 0) {
    await pool.query(
      `INSERT INTO sampling_held (project_id, trace_id, span_id, ttl_days, span, expires_at)
       SELECT $1, s->>'trace_id', s->>'span_id', $2, s, now() + make_interval(secs => $3)
         FROM jsonb_array_elements($4::jsonb) AS s
       ON CONFLICT (project_id, trace_id, span_id) DO UPDATE SET span = excluded.span, ttl_days = excluded.ttl_days`,
      [projectId, ttlDays, window, JSON.stringify(held)],
    );
    sampledOutCounter.inc(held.length);
  }
  if (matched.size > 0) await promoteHeld(ctx, writer, [projectId], [...matched]);
  return { kept, held: held.length };
}

type HeldRow = { project_id: string; ttl_days: number; span: NormalizedSpan };

/**
 * Takes the held spans of marked traces (of these projects; of these traces when given) out into the
 * span store, `CLAIM_ROWS` at a time: each batch is deleted and written in one transaction (the write
 * resolves once stored), so a span is written once, and a failed write leaves it held for the sweep.
 * Answers how many spans were written.
 */
export async function promoteHeld(
  ctx: AppContext,
  writer: SpanWriter,
  projectIds: readonly string[] | null,
  traceIds?: readonly string[],
): Promise<number> {
  let total = 0;
  for (;;) {
    const written = await withTransaction(ctx.pg.pool, async (client) => {
      const { rows } = await client.query<HeldRow>(
        `DELETE FROM sampling_held h WHERE (h.project_id, h.trace_id, h.span_id) IN (
           SELECT x.project_id, x.trace_id, x.span_id FROM sampling_held x
             JOIN sampling_keeps k ON k.project_id = x.project_id AND k.trace_id = x.trace_id
            WHERE x.expires_at > now()
              AND ($1::uuid[] IS NULL OR x.project_id = ANY($1::uuid[]))
              AND ($2::text[] IS NULL OR x.trace_id = ANY($2::text[]))
            LIMIT ${CLAIM_ROWS} FOR UPDATE OF x SKIP LOCKED)
         RETURNING h.project_id, h.ttl_days, h.span`,
        [projectIds, traceIds ?? null],
      );
      const groups = new Map<string, { projectId: string; ttlDays: number; spans: NormalizedSpan[] }>();
      for (const r of rows) {
        const key = `${r.project_id}|${r.ttl_days}`;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = { projectId: r.project_id, ttlDays: r.ttl_days, spans: [] }));
        g.spans.push(r.span);
      }
      for (const g of groups.values()) await writer.write(g.projectId, g.ttlDays, g.spans);
      return rows.length;
    });
    total += written;
    if (written < CLAIM_ROWS) return total;
  }
}

/**
 * One sweep: marked held spans out into the store, expired held spans and markers away. `projectIds`
 * scopes it (tests share one database); the process's timer sweeps every project.
 */
export async function sweepSampling(
  ctx: AppContext,
  writer: SpanWriter,
  projectIds: readonly string[] | null = null,
): Promise<{ promoted: number; expired: number }> {
  const promoted = await promoteHeld(ctx, writer, projectIds);
  const scope = '($1::uuid[] IS NULL OR project_id = ANY($1::uuid[]))';
  const expired = await ctx.pg.pool.query(`DELETE FROM sampling_held WHERE expires_at <= now() AND ${scope}`, [
    projectIds,
  ]);
  await ctx.pg.pool.query(`DELETE FROM sampling_keeps WHERE expires_at <= now() AND ${scope}`, [projectIds]);
  return { promoted, expired: expired.rowCount ?? 0 };
}

/** Starts the process's sweep (every SWEEP_MS); answers the stop. A failed sweep waits for the next. */
export function startSamplingSweep(ctx: AppContext, writer: SpanWriter): () => Promise<void> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(() => sweepSampling(ctx, writer).catch(() => undefined));
  }, SWEEP_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
