import type { AppContext } from '../context.js';
import { QueryLimitError, RequestValidationError } from '../errors.js';
import { MIB, withinLimits } from '../query/limits.js';
import { planWidget, WIDGET_LIMITS, type WidgetPlan } from '../query/span-plan.js';
import { readSealed, readSealedBatch, sealedQuery, type SealReading } from '../rollups/sealed-read.js';
import { WidgetSpecSchema, type WidgetSpec, type WidgetType } from './spec.js';
import type { AnswerOf } from '../answer-schemas.js';
import type { Query } from '../query/params.js';
import type { AnsweredWidgetAnswer, WindowAnswer } from './answers.js';

/**
 * Answering query widgets for a window (docs/dashboards.md, "Dashboard data"):
 * the window rules, one widget's answer, and a dashboard's widgets answered side by side where one
 * failure never fails the others.
 */

export const RANGES: Record<string, number> = {
  '30m': 30 * 60_000,
  '1h': 3_600_000,
  '3h': 3 * 3_600_000,
  '6h': 6 * 3_600_000,
  '1d': 86_400_000,
  '7d': 7 * 86_400_000,
  '14d': 14 * 86_400_000,
  '30d': 30 * 86_400_000,
  '60d': 60 * 86_400_000,
  '90d': 90 * 86_400_000,
};
export const DEFAULT_RANGE = '1d';
/** Query widgets answered per dashboard-data request; the rest come back `skipped`. */
export const MAX_WIDGETS_PER_REQUEST = 20;
/**
 * How far past the server's clock a window may end: a caller's clock a little ahead still gets its
 * "until now", but no window reaches into a future that holds no data and would only cost buckets.
 */
export const WINDOW_END_SKEW_MS = 60_000;
/**
 * The bytes of one dashboard widget's answer (its query's `max_result_bytes`, and a series' rows once
 * every bucket repeats its group values): 20 widgets make at most 80 MiB. `POST /widgets/query`
 * answers one widget and has the planner's 16 MiB (WIDGET_LIMITS).
 */
export const DASHBOARD_WIDGET_BYTES = 4 * MIB;

export type WindowInput = { range?: string; start_time?: string; end_time?: string };
export type AnsweredWindow = AnswerOf<typeof WindowAnswer>;
export type ResolvedWindow = { range: string | null; startMs: number; endMs: number; clamped: boolean };

/**
 * A preset ending now, or explicit bounds, or the 24-hour default; then retention: a start older
 * than the project's `trace_ttl_days` is pulled forward and the window says `clamped`. An end later
 * than now + WINDOW_END_SKEW_MS is pulled back to it (the answered `end_time` shows it; `clamped`
 * stays the spec's retention flag), and a window starting after that is a 422 at `start_time`: so
 * every window lies within retention and now, whatever bounds were sent.
 */
export function resolveWindow(
  input: WindowInput,
  nowMs: number,
  ttlDays: number,
  part: 'query' | 'body' = 'query',
): ResolvedWindow {
  const explicit = input.start_time !== undefined || input.end_time !== undefined;
  if (explicit && input.range !== undefined) {
    throw new RequestValidationError([
      { loc: [part, 'range'], msg: 'give either range or start_time and end_time, not both', type: 'value_error' },
    ]);
  }
  let range: string | null = null;
  let startMs: number;
  let endMs: number;
  if (explicit) {
    if (input.start_time === undefined || input.end_time === undefined) {
      const missing = input.start_time === undefined ? 'start_time' : 'end_time';
      throw new RequestValidationError([
        { loc: [part, missing], msg: 'Field required when the other bound is given', type: 'missing' },
      ]);
    }
    startMs = Date.parse(input.start_time);
    endMs = Date.parse(input.end_time);
    for (const [name, ms] of [
      ['start_time', startMs],
      ['end_time', endMs],
    ] as const) {
      if (Number.isNaN(ms))
        throw new RequestValidationError([
          { loc: [part, name], msg: 'Input should be a valid datetime', type: 'datetime_parsing', input: input[name] },
        ]);
    }
    if (!(endMs > startMs))
      throw new RequestValidationError([
        { loc: [part, 'end_time'], msg: 'end_time must be after start_time', type: 'value_error' },
      ]);
    const latestEnd = nowMs + WINDOW_END_SKEW_MS;
    if (startMs >= latestEnd) {
      throw new RequestValidationError([
        {
          loc: [part, 'start_time'],
          msg: 'start_time must not be in the future',
          type: 'value_error',
          input: input.start_time,
        },
      ]);
    }
    endMs = Math.min(endMs, latestEnd);
  } else {
    range = input.range ?? DEFAULT_RANGE;
    endMs = nowMs;
    startMs = nowMs - RANGES[range]!;
  }
  const retentionStart = nowMs - ttlDays * 86_400_000;
  const clamped = startMs < retentionStart;
  if (clamped) startMs = Math.min(retentionStart, endMs - 1);
  return { range, startMs, endMs, clamped };
}

export function windowAnswer(w: ResolvedWindow): AnsweredWindow {
  return {
    range: w.range,
    start_time: new Date(w.startMs).toISOString(),
    end_time: new Date(w.endMs).toISOString(),
    clamped: w.clamped,
  };
}

export type WidgetResult = { columns: string[]; rows: unknown[][]; meta: Record<string, unknown>; truncated: boolean };

/** One spec over one window. */
export async function queryWidget(
  ctx: AppContext,
  projectId: string,
  type: WidgetType,
  spec: WidgetSpec,
  window: { startMs: number; endMs: number },
  options: { raw?: boolean; answerBytes?: number; sealed?: SealReading } = {},
): Promise<WidgetResult> {
  let plan = planWidget(type, spec, projectId, window, { ...options, metadataRollup: true });
  const limits = { ...WIDGET_LIMITS, maxResultRows: plan.maxRows, maxResultBytes: plan.maxBytes };
  const run = (query: Query) => withinLimits(limits, WIDGET_ADVICE, () => ctx.ch.compactRows(query));
  // A rollup read takes the sealer's watermark (src/rollups/sealed-read.ts): from the caller's
  // reading when it holds the seqlock around several widgets (a dashboard), else its own. Should the
  // sealer never settle, the same widget from raw spans (same range and buckets, so the same answer).
  const raw = !plan.sealed
    ? await run(plan)
    : options.sealed
      ? await run(sealedQuery(plan, options.sealed, plan.untailed))
      : (
          await readSealed(
            ctx.ch,
            plan,
            run,
            () => {
              plan = planWidget(type, spec, projectId, window, { ...options, raw: true });
              return run(plan);
            },
            plan.untailed && { untailed: { projectId, query: plan.untailed } },
          )
        ).result;
  const series = plan.shape === 'series';
  const meta = {
    view: spec.view,
    measure: spec.measure,
    aggregation: spec.aggregation,
    source: plan.source,
    interval_seconds: series ? plan.stepSeconds : null,
    // A fixed interval finer than the window allows (MAX_SERIES_POINTS, MAX_SERIES_CELLS) is answered coarser.
    interval_requested: series ? (spec.interval ?? 'auto') : null,
    interval_coarsened: plan.coarsenedFromSeconds !== null,
    group_limit: plan.groupLimit,
    range_start: new Date(plan.rangeStartMs).toISOString(),
    range_end: new Date(plan.rangeEndMs).toISOString(),
  };
  const groups = spec.group_by ?? [];
  const width = plan.values.length;
  const values = (r: unknown[]) => r.slice(r.length - width).map(number);
  if (plan.shape === 'single') {
    // No row (a scores read over no scores) is the empty answer: `value` empty, `count` 0, the rest null.
    const row = raw[0] ? values(raw[0]) : emptyValues(plan);
    return { columns: plan.values, rows: [[row[0] ?? plan.empty, ...row.slice(1)]], meta, truncated: false };
  }
  if (plan.shape === 'groups') {
    const limit = spec.limit ?? 100;
    return {
      columns: [...groups, ...plan.values],
      rows: raw.map((r) => [...r.slice(0, -width), ...values(r)]),
      meta,
      truncated: raw.length >= limit,
    };
  }
  return {
    columns: ['time', ...groups, ...plan.values],
    rows: fillSeries(plan, raw, groups.length),
    meta,
    truncated: false,
  };
}

/** An empty bucket's values: `value` the plan's empty, `count` 0, an interval null. */
function emptyValues(plan: WidgetPlan): (number | null)[] {
  return plan.values.map((v) => (v === 'value' ? plan.empty : v === 'count' ? 0 : null));
}

const WIDGET_ADVICE = 'narrow the window, use a coarser interval, fewer groups or a smaller limit';

/**
 * Every bucket of the range, for every group seen; a bucket without rows shows the plan's empty value.
 * The plan bounds the buckets (and so this loop) before the query ran; the answer's bytes are checked
 * before any row is built, since every bucket repeats its group's values (which may be long).
 */
function fillSeries(plan: WidgetPlan, raw: unknown[][], groupCount: number): unknown[][] {
  const step = plan.stepSeconds;
  const first = Math.floor(plan.rangeStartMs / 1000 / step) * step;
  const bucketCount = Math.min(plan.maxBuckets, Math.max(0, Math.ceil((plan.rangeEndMs / 1000 - first) / step)));
  const buckets = Array.from({ length: bucketCount }, (_, i) => first + i * step);
  const groupKeys = new Map<string, unknown[]>();
  const values = new Map<string, (number | null)[]>();
  for (const row of raw) {
    const group = row.slice(1, 1 + groupCount);
    const key = JSON.stringify(group);
    groupKeys.set(key, group);
    values.set(`${Number(row[0])}|${key}`, row.slice(1 + groupCount).map(number));
  }
  const empty = emptyValues(plan);
  if (groupCount === 0) groupKeys.set('[]', []);
  let rowBytes = 0;
  for (const key of groupKeys.keys()) rowBytes += key.length + 48;
  if (rowBytes * buckets.length > plan.maxBytes) {
    throw new QueryLimitError(
      `the series would be larger than ${Math.round(plan.maxBytes / MIB)} MiB once every bucket repeats its group values; ${WIDGET_ADVICE}`,
    );
  }
  const rows: unknown[][] = [];
  for (const t of buckets) {
    const time = new Date(t * 1000).toISOString();
    for (const [key, group] of groupKeys) {
      const v = values.get(`${t}|${key}`);
      rows.push([time, ...group, ...(v ?? empty)]);
    }
  }
  return rows;
}

function number(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  const n = Number(value);
  if (!Number.isFinite(n)) return null;
  return Math.round(n * 1e9) / 1e9;
}

export type StoredWidget = { id: string; title: string; type: WidgetType; spec: unknown };
/** Inferred from the answer schema (answers.ts). */
export type AnsweredWidget = AnswerOf<typeof AnsweredWidgetAnswer>;

/**
 * A stored widget answered: a spec stored before the rules changed, or a query that fails, becomes
 * `status: "error"` with a message; it never fails the dashboard. `throwLimits`: a request too big for
 * its limits is rethrown (a 400 for `POST /widgets/query`, whose caller can narrow it at once).
 */
export async function answerWidget(
  ctx: AppContext,
  projectId: string,
  widget: StoredWidget,
  window: ResolvedWindow,
  options: { throwLimits?: boolean; answerBytes?: number; sealed?: SealReading } = {},
): Promise<AnsweredWidget> {
  const base = { id: widget.id, title: widget.title, type: widget.type };
  const parsed = WidgetSpecSchema.safeParse(widget.spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return {
      ...base,
      status: 'error',
      columns: [],
      rows: [],
      meta: {},
      error: `invalid spec: ${issue.path.join('.') || 'spec'}: ${issue.message}`,
      truncated: false,
    };
  }
  try {
    const result = await queryWidget(ctx, projectId, widget.type, parsed.data, window, {
      answerBytes: options.answerBytes,
      sealed: options.sealed,
    });
    return { ...base, status: 'ok', ...result, error: '' };
  } catch (error) {
    if (error instanceof QueryLimitError) {
      if (options.throwLimits) throw error;
      return {
        ...base,
        status: 'error',
        columns: [],
        rows: [],
        meta: {},
        error: `the widget's query failed: ${error.detail}`,
        truncated: false,
      };
    }
    const message = (error as Error).message?.split('\n')[0]?.slice(0, 300) ?? 'query failed';
    return {
      ...base,
      status: 'error',
      columns: [],
      rows: [],
      meta: {},
      error: `the widget's query failed: ${message.replace(/^Code: \d+\.\s*/, '').replace(/DB::Exception:\s*/, '')}`,
      truncated: false,
    };
  }
}

export function skippedWidget(widget: StoredWidget, reason: string): AnsweredWidget {
  return {
    id: widget.id,
    title: widget.title,
    type: widget.type,
    status: 'skipped',
    columns: [],
    rows: [],
    meta: { reason },
    error: '',
    truncated: false,
  };
}

/**
 * A dashboard's widgets for one window: the first 20 query widgets answered concurrently, each within
 * DASHBOARD_WIDGET_BYTES. Their rollup reads share one seqlock on the sealer's marks (one reading
 * before them all and one after: src/rollups/sealed-read.ts) instead of two readings each; should the
 * sealer never settle, each widget takes its own.
 */
export async function answerDashboard(
  ctx: AppContext,
  projectId: string,
  widgets: StoredWidget[],
  window: ResolvedWindow,
) {
  const queryWidgets = widgets.filter((w) => w.type !== 'markdown');
  const answerAll = (sealed?: SealReading) =>
    Promise.all(
      queryWidgets.map((w, i) =>
        i < MAX_WIDGETS_PER_REQUEST
          ? answerWidget(ctx, projectId, w, window, { answerBytes: DASHBOARD_WIDGET_BYTES, sealed })
          : Promise.resolve(
              skippedWidget(w, `at most ${MAX_WIDGETS_PER_REQUEST} query widgets are answered per request`),
            ),
      ),
    );
  const answered = (await readSealedBatch(ctx.ch, projectId, answerAll, () => answerAll())).result;
  const failed = answered.filter((w) => w.status === 'error').length;
  const queried = Math.min(queryWidgets.length, MAX_WIDGETS_PER_REQUEST);
  return { widgets: answered, queried, skipped: widgets.length - queried, failed, window: windowAnswer(window) };
}
