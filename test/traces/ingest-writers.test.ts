import { describe, expect, it } from 'vitest';
import { SpanWriter } from '../../src/traces/span-writer.js';
import { traceLockKey, traceLocks, traceGroups } from '../../src/traces/ingest-locks.js';
import { validateSpans, type NormalizedSpan } from '../../src/traces/span-input.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';
import { catchUpSeal } from '../../src/rollups/seal.js';

/**
 * Several span writers on one project, as several API processes are (each writer is one process's
 * group commit; with DATABASE_URL they lock through the Postgres server, embedded through the
 * process's lock table). No lock per project: writers of different traces don't wait for each
 * other; spans re-sent through several writers at once still count exactly once.
 */

const h = useHarness();

const TRACES = 12;
const SPANS_PER_TRACE = 8;

function spansOf(traceId: string, t0: number): NormalizedSpan[] {
  const raw = Array.from({ length: SPANS_PER_TRACE }, (_, i) => ({
    trace_id: traceId,
    span_id: `s${i}`,
    parent_span_id: i === 0 ? null : 's0',
    name: `step ${i % 3}`,
    start_time: iso(t0 + i * 1000),
    end_time: iso(t0 + i * 1000 + 250 + i),
    status: i === 3 ? 'error' : 'ok',
    model_name: i % 2 ? 'gpt-x' : '',
    metadata: { team: i % 2 ? 'a' : 'b' },
    user_id: 'u1',
    cost: 0.5,
    input_tokens: 10,
    output_tokens: 3,
  }));
  const { accepted, rejected } = validateSpans(raw);
  expect(rejected).toEqual([]);
  return accepted;
}

/** A deterministic shuffle (a small LCG), so a failure replays. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function scalar(query: string, params: Record<string, unknown>): Promise<number> {
  const r = await h().ctx.ch.client.query({ query, query_params: params, format: 'JSONEachRow' });
  const rows = await r.json<{ v: string | number }>();
  return Number(rows[0]!.v);
}

describe('several writers on one project', () => {
  it('count every span exactly once when they ingest overlapping re-sends at the same time', async () => {
    const { key, project } = await projectWithKey(h());
    const t0 = Date.now() - 2 * 3_600_000;
    const all = Array.from({ length: TRACES }, (_, t) => spansOf(`w-${t}`, t0 + t * 60_000)).flat();
    const writers = Array.from({ length: 4 }, () => new SpanWriter(h().ctx.ch, h().ctx.pg, { maxBatchSpans: 40 }));
    let inserted = 0;
    try {
      // Each writer sends every span once, in its own order and in batches of its own size, so the
      // same spans are in flight in several writers at once, in overlapping groups.
      await Promise.all(
        writers.map(async (writer, w) => {
          const mine = shuffled(all, w + 1);
          const size = 5 + w * 7;
          const sends: Promise<number>[] = [];
          for (let i = 0; i < mine.length; i += size) sends.push(writer.write(project.id, 30, mine.slice(i, i + size)));
          for (const stored of await Promise.all(sends)) inserted += stored;
        }),
      );
    } finally {
      await Promise.all(writers.map((w) => w.close()));
    }

    // The rollups are filled off the insert path (src/rollups/seal.ts): seal what was stored.
    await catchUpSeal(h().ctx, { lagMs: 0 });
    const p = { project: project.id };
    const n = TRACES * SPANS_PER_TRACE;
    // One stored row per span (not merely one after merges), and every rollup counted each span once.
    expect(await scalar('SELECT count() AS v FROM spans WHERE project_id = {project:String}', p)).toBe(n);
    // Each write says how many of its spans it inserted: over every writer, each span once.
    expect(inserted).toBe(n);
    for (const table of ['span_rollup_1m', 'span_rollup_1h', 'span_rollup_totals_1m', 'span_rollup_totals_1d']) {
      expect(await scalar(`SELECT sum(spans) AS v FROM ${table} WHERE project_id = {project:String}`, p), table).toBe(
        n,
      );
    }
    expect(
      await scalar(
        "SELECT sum(spans) AS v FROM span_rollup_meta_1h WHERE project_id = {project:String} AND meta_key = 'team'",
        p,
      ),
    ).toBe(n);
    expect(await scalar('SELECT sum(span_count) AS v FROM traces WHERE project_id = {project:String}', p)).toBe(n);
    const cost = await scalar(
      'SELECT sum(cost) AS v FROM span_rollup_totals_1h WHERE project_id = {project:String}',
      p,
    );
    expect(cost).toBeCloseTo(n * 0.5, 9);

    // And through the API: each trace shows its own spans once.
    const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces?limit=100`, token: key.key });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().data as { trace_id: string; span_count: number; total_cost: number }[];
    expect(items).toHaveLength(TRACES);
    for (const item of items) {
      expect(item.span_count, item.trace_id).toBe(SPANS_PER_TRACE);
      expect(item.total_cost).toBeCloseTo(SPANS_PER_TRACE * 0.5, 9);
    }
  });

  it("don't wait for each other's traces: only a commit holding the same trace waits", async () => {
    const { project } = await projectWithKey(h());
    const t0 = Date.now() - 3_600_000;
    const locks = traceLocks(h().ctx.ch, h().ctx.pg);
    const [w1, w2] = [new SpanWriter(h().ctx.ch, h().ctx.pg), new SpanWriter(h().ctx.ch, h().ctx.pg)];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // Another "process" holds trace A's lock until the gate opens.
    const holder = locks.withLocks([traceLockKey(project.id, 'busy-a')], async () => {
      held();
      await gate;
    });
    try {
      await holding;
      let aStored = false;
      const a = w1.write(project.id, 30, spansOf('busy-a', t0)).then(() => (aStored = true));
      // Same project, another trace, another writer: stored while A's lock is held.
      await w2.write(project.id, 30, spansOf('free-b', t0));
      expect(aStored).toBe(false);
      const p = { project: project.id };
      expect(
        await scalar("SELECT count() AS v FROM spans WHERE project_id = {project:String} AND trace_id = 'free-b'", p),
      ).toBe(SPANS_PER_TRACE);
      open();
      await a;
      await holder;
      expect(await scalar('SELECT count() AS v FROM spans WHERE project_id = {project:String}', p)).toBe(
        2 * SPANS_PER_TRACE,
      );
    } finally {
      open();
      await Promise.all([w1.close(), w2.close()]);
    }
  });
});

describe('trace lock groups', () => {
  it('keep every key ascending across groups, a key in one group only, and at most the cap of keys a group', () => {
    const items = Array.from({ length: 2_500 }, (_, i) => ({
      key: traceLockKey('p', `t${i % 1_200}`),
      value: i,
    }));
    const groups = traceGroups(items, 500);
    expect(groups.map((g) => new Set(g.map((i) => i.key)).size)).toEqual([500, 500, 200]);
    const keys = groups.flat().map((i) => i.key);
    for (let i = 1; i < keys.length; i++) expect(keys[i - 1]! <= keys[i]!).toBe(true);
    expect(groups.flat()).toHaveLength(2_500);
    const owner = new Map<bigint, number>();
    groups.forEach((group, n) => {
      for (const item of group) {
        expect(owner.get(item.key) ?? n).toBe(n);
        owner.set(item.key, n);
      }
    });
  });
});
