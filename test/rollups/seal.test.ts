import { beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { generateSpans } from '../../src/demo/generate-spans.js';
import { planWidget, type PlanWindow } from '../../src/query/span-plan.js';
import { WidgetSpecSchema, type WidgetSpec, type WidgetType } from '../../src/widgets/spec.js';
import { catchUpSeal, runSealPass } from '../../src/rollups/seal.js';
import { readSealMarks } from '../../src/rollups/seal-marks.js';
import { readSealed, readSealedBatch, sealedQuery, type SealedReadOptions } from '../../src/rollups/sealed-read.js';
import { SEALED_PARAM } from '../../src/query/sealed-rollups.js';

/**
 * The sealed span rollups (clickhouse/0015, src/rollups/seal.ts, sealed-read.ts): a widget read from a
 * rollup (its rows plus the spans stored after the sealer's watermark) equals the same widget read
 * from raw spans before, during and after a pass, when a read straddles a pass, after a pass fails
 * half-way and is run again, for late spans; deleted projects are not sealed. The interleavings are
 * made with hooks between the steps of a pass and of a read, not with timing.
 */

const h = useHarness();
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const END = Math.floor(Date.now() / HOUR) * HOUR;
const WINDOW: PlanWindow = { startMs: END - 3 * DAY, endMs: END + HOUR };
const LONG: PlanWindow = { startMs: END - 89 * DAY, endMs: END + HOUR };
/** Every pass here seals up to now: the spans were all stored by the time a pass runs. */
const NOW = { lagMs: 0 };
/** Reads that meet a pass under way retry at once (then fall back to raw spans): no waiting in tests. */
const AT_ONCE: SealedReadOptions = { waitMs: () => 0 };

let projectId: string;
let key: string;
let stored = 0;
let seed = 20;

function spec(measure: string, aggregation: WidgetSpec['aggregation'], extra: Partial<WidgetSpec> = {}): WidgetSpec {
  return WidgetSpecSchema.parse({ view: 'SPANS', measure, aggregation, ...extra });
}

/** Widgets over every rollup a read can name (the source each plans is checked below). */
const WIDGETS: { type: WidgetType; spec: WidgetSpec; window: PlanWindow; source: string }[] = [
  { type: 'stat', spec: spec('count', 'count'), window: WINDOW, source: 'span_rollup_totals_1h' },
  { type: 'stat', spec: spec('trace_id', 'uniq'), window: LONG, source: 'span_rollup_totals_1h' },
  {
    type: 'timeseries',
    spec: spec('count', 'count', { interval: '1d' }),
    window: LONG,
    source: 'span_rollup_totals_1d',
  },
  {
    type: 'timeseries',
    spec: spec('cost', 'sum', { interval: '1m' }),
    window: { startMs: END - 3 * HOUR, endMs: END },
    source: 'span_rollup_totals_1m',
  },
  {
    type: 'table',
    spec: spec('latency', 'avg', { group_by: ['model_name'] }),
    window: WINDOW,
    source: 'span_rollup_1h',
  },
  {
    type: 'timeseries',
    spec: spec('error_count', 'sum', { interval: '1m', filters: [{ field: 'span_kind', op: 'in', value: ['llm'] }] }),
    window: { startMs: END - 3 * HOUR, endMs: END },
    source: 'span_rollup_1m',
  },
  {
    type: 'table',
    spec: spec('total_tokens', 'sum', { group_by: ['metadata.region', 'kind'] }),
    window: WINDOW,
    source: 'span_rollup_meta_1h',
  },
  {
    type: 'stat',
    spec: spec('count', 'count', { filters: [{ field: 'metadata', key: 'region', op: 'eq', value: 'eu-west-1' }] }),
    window: LONG,
    source: 'span_rollup_meta_totals_1h',
  },
];

/** The widget read as the service reads it: through the seqlock. */
async function sealedRead(w: (typeof WIDGETS)[number], options: SealedReadOptions = AT_ONCE) {
  const plan = planWidget(w.type, w.spec, projectId, w.window, { metadataRollup: true });
  expect(plan.source).toBe(w.source);
  expect(plan.sealed).toBe(true);
  const run = (q: { query: string; query_params: Record<string, unknown> }) => h().ctx.ch.compactRows(q);
  // As the service reads: the rollups alone when the project has no span past the watermark.
  const untailed = { projectId, query: plan.untailed! };
  return readSealed(h().ctx.ch, plan, run, () => run(rawPlan(w)), { untailed, ...options });
}

function rawPlan(w: (typeof WIDGETS)[number]) {
  return planWidget(w.type, w.spec, projectId, w.window, { raw: true });
}

/** Rows as comparable text: numbers to 9 significant digits (sums of floats fold in any order). */
function normal(rows: unknown[][]): string[] {
  return rows.map((r) => JSON.stringify(r.map((v) => (typeof v === 'number' ? Number(v.toPrecision(9)) : v)))).sort();
}

async function expectEveryWidgetRaw(label: string) {
  for (const w of WIDGETS) {
    const sealed = await sealedRead(w);
    const raw = await h().ctx.ch.compactRows(rawPlan(w));
    expect(normal(sealed.result), `${label}: ${w.type} ${JSON.stringify(w.spec)}`).toEqual(normal(raw));
  }
}

/** Spans of the project in each sealed rollup (key-set rows of the metadata ones: one per span). */
async function rollupSpans(project = projectId): Promise<Record<string, number>> {
  const tables = [
    'span_rollup_1m',
    'span_rollup_1h',
    'span_rollup_totals_1m',
    'span_rollup_totals_1h',
    'span_rollup_totals_1d',
    'span_rollup_meta_1h',
    'span_rollup_meta_totals_1h',
    'span_rollup_meta_totals_1d',
  ];
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const meta = table.includes('meta') ? " AND meta_key = ''" : '';
    const [row] = await h().ctx.ch.rows<{ n: string }>({
      query: `SELECT sum(spans) AS n FROM ${table} WHERE project_id = {p:String}${meta}`,
      query_params: { p: project },
    });
    counts[table] = Number(row!.n);
  }
  return counts;
}

const every = (n: number) => ({
  span_rollup_1m: n,
  span_rollup_1h: n,
  span_rollup_totals_1m: n,
  span_rollup_totals_1h: n,
  span_rollup_totals_1d: n,
  span_rollup_meta_1h: n,
  span_rollup_meta_totals_1h: n,
  span_rollup_meta_totals_1d: n,
});

async function ingest(traces: number, startMs = END - 2 * DAY, endMs = END - 10 * 60_000) {
  const spans = generateSpans({ traces, startMs, endMs, seed: seed++, errorShare: 0.1 });
  await ingestSpans(h(), key, spans);
  stored += spans.length;
}

beforeAll(async () => {
  const setup = await projectWithKey(h());
  projectId = setup.project.id;
  key = setup.key.key;
  await ingest(60);
});

describe('sealed span rollups', () => {
  it('answer as raw spans before the first pass (every span in the tail)', async () => {
    await expectEveryWidgetRaw('before');
  });

  it('answer as raw spans at every step of a pass, and after it from the rollups', async () => {
    const during: string[] = [];
    const pass = await runSealPass(h().ctx, {
      ...NOW,
      hooks: {
        // A pass under way: its rows may be in the rollups while the watermark has not moved.
        begun: async () => {
          during.push('begun');
          await expectEveryWidgetRaw('after begin');
        },
        inserted: async (table) => {
          during.push(table);
          await expectEveryWidgetRaw(`after ${table}`);
          // What the seqlock guards against: the old watermark with the new rows counts them twice.
          const w = WIDGETS[0]!;
          const marks = await readSealMarks(h().ctx.ch);
          const plan = planWidget(w.type, w.spec, projectId, w.window);
          const [[stale]] = (await h().ctx.ch.compactRows({
            ...plan,
            query_params: {
              ...plan.query_params,
              [SEALED_PARAM]: new Date(marks.sealedMs).toISOString().replace('T', ' ').replace('Z', ''),
            },
          })) as [[number]];
          expect(stale).toBe(2 * stored);
          expect((await sealedRead(w)).fallback).toBe(true);
        },
      },
    });
    expect(during).toEqual(['begun', 'span_rollup_1m', 'span_rollup_meta_1h']);
    expect(pass.spans).toBe(stored);
    expect(await rollupSpans()).toEqual(every(stored));
    // Sealed: the tail is empty and a read takes one attempt.
    for (const w of WIDGETS) expect(await sealedRead(w)).toMatchObject({ attempts: 1, fallback: false });
    await expectEveryWidgetRaw('after the pass');
  });

  it('runs a read again when a pass ran while it was reading', async () => {
    await ingest(40);
    let passes = 0;
    const w = WIDGETS[0]!;
    const read = await sealedRead(w, {
      ...AT_ONCE,
      queried: async () => {
        if (passes++ === 0) await catchUpSeal(h().ctx, NOW);
      },
    });
    expect(read).toMatchObject({ attempts: 2, fallback: false });
    expect(read.result).toEqual([[stored]]);
    expect(await rollupSpans()).toEqual(every(stored));
  });

  it("runs a dashboard's widgets again together when a pass ran while they were reading", async () => {
    await ingest(30);
    let attempts = 0;
    const read = await readSealedBatch(
      h().ctx.ch,
      projectId,
      async (marks) => {
        // As answerDashboard: every widget as of the one reading taken before them all.
        const rows = await Promise.all(
          WIDGETS.map((w) => {
            const plan = planWidget(w.type, w.spec, projectId, w.window, { metadataRollup: true });
            return h().ctx.ch.compactRows(sealedQuery(plan, marks, plan.untailed));
          }),
        );
        // A pass after the widgets read: their rows may have counted its spans in the tail only.
        if (attempts++ === 0) await catchUpSeal(h().ctx, NOW);
        return rows;
      },
      () => Promise.reject(new Error('the batch fell back')),
      AT_ONCE,
    );
    expect(read).toMatchObject({ attempts: 2, fallback: false });
    for (const [i, w] of WIDGETS.entries())
      expect(normal(read.result[i]!), `${w.type} ${JSON.stringify(w.spec)}`).toEqual(
        normal(await h().ctx.ch.compactRows(rawPlan(w))),
      );
    expect(await rollupSpans()).toEqual(every(stored));
  });

  it('counts each span once when a pass fails half-way and is run again', async () => {
    await ingest(40);
    const failAfter = (name: string) => ({
      ...NOW,
      hooks: {
        inserted: (table: string) => {
          if (table === name) throw new Error(`injected failure after ${table}`);
        },
      },
    });
    const before = await readSealMarks(h().ctx.ch);
    await expect(runSealPass(h().ctx, failAfter('span_rollup_1m'))).rejects.toThrow(/injected/);
    const marks = await readSealMarks(h().ctx.ch);
    expect(marks.sealedMs).toBe(before.sealedMs);
    expect(marks.begunMs).toBeGreaterThan(marks.sealedMs);
    await expectEveryWidgetRaw('after a failed pass');
    // Again, failing later: the first insert's blocks are duplicates now, the second's are new.
    await expect(runSealPass(h().ctx, failAfter('span_rollup_meta_1h'))).rejects.toThrow(/injected/);
    await expectEveryWidgetRaw('after a second failed pass');
    const redo = await runSealPass(h().ctx, NOW);
    expect(redo).toMatchObject({ redo: true, from: marks.begunFromMs, to: marks.begunMs });
    expect(await rollupSpans()).toEqual(every(stored));
    // A later, different insert is never dropped as a duplicate.
    await ingest(10);
    await catchUpSeal(h().ctx, NOW);
    expect(await rollupSpans()).toEqual(every(stored));
    await expectEveryWidgetRaw('after the redo');
  });

  it('seals late spans like any other, and skips deleted projects', async () => {
    // Twenty days old (the project keeps 30), stored now.
    await ingest(20, END - 20 * DAY, END - 19 * DAY);
    const other = await projectWithKey(h(), 'deleted');
    await ingestSpans(h(), other.key.key, generateSpans({ traces: 5, startMs: END - DAY, endMs: END - HOUR, seed: 1 }));
    await h().ctx.pg.pool.query('UPDATE projects SET deleted_at = now() WHERE id = $1', [other.project.id]);
    await catchUpSeal(h().ctx, NOW);
    expect(await rollupSpans()).toEqual(every(stored));
    expect(await rollupSpans(other.project.id)).toEqual(every(0));
    await expectEveryWidgetRaw('after late spans');
    // Nothing left: one pass, which writes no mark.
    const marks = await readSealMarks(h().ctx.ch);
    expect(await catchUpSeal(h().ctx, NOW)).toMatchObject([{ spans: 0, caughtUp: true }]);
    expect(await readSealMarks(h().ctx.ch)).toEqual(marks);
  });
});
