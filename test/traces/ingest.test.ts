import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { iso } from '../support/ingest.js';

/** `POST /api/v1/public/traces` (docs/spans.md): partial success, limits, credentials, exactly-once counting, late spans. */

const h = useHarness();

const HOUR = 3_600_000;

type Span = Record<string, unknown>;
type Rejected = { index: number; span_id: string | null; errors: unknown[] };

function ingest(token: string | undefined, spans: unknown[]) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/traces`, token, payload: { spans } });
}

async function ingestOk(token: string, spans: Span[]) {
  const res = await ingest(token, spans);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { accepted: number; rejected: Rejected[] };
}

async function listItem(token: string, traceId: string) {
  const res = await call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/traces`,
    token,
    query: { filters: JSON.stringify([{ field: 'trace_id', op: 'eq', value: traceId }]) },
  });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.meta.total).toBe(1);
  expect(body.data).toHaveLength(1);
  return body.data[0];
}

async function detail(token: string, traceId: string) {
  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

type Totals = {
  span_count: number;
  total_cost: number;
  total_input_tokens: number;
  total_output_tokens: number;
  error_count: number;
};

/** The list item and the detail read both report exactly these counts and sums. */
async function expectTotals(token: string, traceId: string, want: Totals) {
  for (const item of [await listItem(token, traceId), await detail(token, traceId)]) {
    expect(item.span_count).toBe(want.span_count);
    expect(item.total_cost).toBeCloseTo(want.total_cost, 9);
    expect(item.total_input_tokens).toBe(want.total_input_tokens);
    expect(item.total_output_tokens).toBe(want.total_output_tokens);
    expect(item.error_count).toBe(want.error_count);
  }
  const d = await detail(token, traceId);
  expect(new Set(d.spans.map((s: { span_id: string }) => s.span_id)).size).toBe(want.span_count);
  expect(d.spans).toHaveLength(want.span_count);
}

/** Four spans: costs 0.1..0.4, tokens 10..40 in / 1..4 out, two errors. */
function fourSpans(traceId: string, t0: number): Span[] {
  return [0, 1, 2, 3].map((i) => ({
    trace_id: traceId,
    span_id: `s${i}`,
    parent_span_id: i === 0 ? null : 's0',
    name: i === 0 ? 'root' : `step ${i}`,
    start_time: iso(t0 + i * 100),
    end_time: iso(t0 + i * 100 + 50),
    status: i === 1 || i === 2 ? 'error' : 'ok',
    cost: (i + 1) / 10,
    input_tokens: (i + 1) * 10,
    output_tokens: i + 1,
  }));
}
const FOUR_TOTALS: Totals = {
  span_count: 4,
  total_cost: 1,
  total_input_tokens: 100,
  total_output_tokens: 10,
  error_count: 2,
};

describe('ingest: answers', () => {
  it('stores the valid spans of a batch and reports the rejected ones by index', async () => {
    const { key } = await projectWithKey(h());
    const t0 = Date.now() - 60_000;
    const body = await ingestOk(key.key, [
      { trace_id: 'ps', span_id: 'good-1', name: 'root', start_time: iso(t0), end_time: iso(t0 + 10) },
      { trace_id: 'ps', span_id: 'backwards', name: 'x', start_time: iso(t0 + 500), end_time: iso(t0 + 100) },
      {
        trace_id: 'ps',
        span_id: 'good-2',
        parent_span_id: 'good-1',
        name: 'child',
        start_time: iso(t0 + 1),
        input_tokens: 7,
        output_tokens: 3,
      },
      { trace_id: 'ps', span_id: 'bad-status', name: 'x', start_time: iso(t0), status: 'bad' },
      {
        trace_id: 'ps',
        span_id: 'good-3',
        parent_span_id: 'good-1',
        name: 'explicit',
        start_time: iso(t0 + 2),
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 9,
      },
      { trace_id: 'ps', name: 'no span id', start_time: iso(t0) },
      { trace_id: 'ps', span_id: 'neg-cost', name: 'x', start_time: iso(t0), cost: -1 },
    ]);
    expect(body.accepted).toBe(3);
    expect(body.rejected.map((r) => [r.index, r.span_id])).toEqual([
      [1, 'backwards'],
      [3, 'bad-status'],
      [5, null],
      [6, 'neg-cost'],
    ]);
    const [backwards, badStatus, noId, negCost] = body.rejected;
    for (const r of body.rejected) {
      expect(r.errors.length).toBeGreaterThan(0);
      for (const e of r.errors) expect(typeof e).toBe('string');
    }
    expect(backwards!.errors.join(' ')).toMatch(/end_time/);
    expect(badStatus!.errors.join(' ')).toMatch(/status/);
    expect(noId!.errors.join(' ')).toMatch(/span_id/);
    expect(negCost!.errors.join(' ')).toMatch(/cost/);

    const d = await detail(key.key, 'ps');
    expect(d.span_count).toBe(3);
    const byId = Object.fromEntries(d.spans.map((s: { span_id: string }) => [s.span_id, s]));
    expect(Object.keys(byId).sort()).toEqual(['good-1', 'good-2', 'good-3']);
    // Defaults (docs/spans.md): kind custom, status unset, total_tokens = input + output unless given.
    expect(byId['good-1']).toMatchObject({ kind: 'custom', status: 'unset', total_tokens: 0, cost: 0 });
    expect(byId['good-2']).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10, end_time: null });
    expect(byId['good-3']).toMatchObject({ total_tokens: 9 });
  });

  it('refuses an empty batch with 422', async () => {
    const { key } = await projectWithKey(h());
    const res = await ingest(key.key, []);
    expect(res.statusCode).toBe(422);
    expect(Array.isArray(res.json().detail)).toBe(true);
  });

  it('refuses 10,001 spans with 413 and stores none of them', async () => {
    const { key } = await projectWithKey(h());
    const t = iso(Date.now() - 60_000);
    const spans = Array.from({ length: 10_001 }, (_, i) => ({
      trace_id: 'too-many',
      span_id: `s${i}`,
      name: 'n',
      start_time: t,
    }));
    const res = await ingest(key.key, spans);
    expect(res.statusCode).toBe(413);
    expect(typeof res.json().detail).toBe('string');
    const read = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/too-many`, token: key.key });
    expect(read.statusCode).toBe(404);
  });

  it('refuses a body over 10 MiB with 413', async () => {
    const { key } = await projectWithKey(h());
    const span = {
      trace_id: 'huge',
      span_id: 'one',
      name: 'n',
      start_time: iso(Date.now() - 60_000),
      input: 'x'.repeat(11 * 1024 * 1024),
    };
    const res = await ingest(key.key, [span]);
    expect(res.statusCode).toBe(413);
    expect(typeof res.json().detail).toBe('string');
  });

  it('answers 401 to a user credential and to no credential', async () => {
    const { owner } = await projectWithKey(h());
    const span = { trace_id: 't', span_id: 's', name: 'n', start_time: iso(Date.now()) };
    const asUser = await ingest(owner.token, [span]);
    expect(asUser.statusCode).toBe(401);
    expect(typeof asUser.json().detail).toBe('string');
    const anonymous = await ingest(undefined, [span]);
    expect(anonymous.statusCode).toBe(401);
    expect(typeof anonymous.json().detail).toBe('string');
  });

  it('makes the spans readable as soon as it answers 200', async () => {
    const { key } = await projectWithKey(h());
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < 4; i++) {
      await ingestOk(key.key, [
        {
          trace_id: 'ryw',
          span_id: `s${i}`,
          parent_span_id: i ? 's0' : null,
          name: `n${i}`,
          start_time: iso(t0 + i),
          cost: 1,
        },
      ]);
      expect((await detail(key.key, 'ryw')).spans).toHaveLength(i + 1);
      expect(await listItem(key.key, 'ryw')).toMatchObject({ span_count: i + 1, total_cost: i + 1 });
    }
  });
});

describe('ingest: duplicates never double-count', () => {
  it('the same batch sent twice in a row, and a span repeated inside one batch', async () => {
    const { key } = await projectWithKey(h());
    const spans = fourSpans('dup-seq', Date.now() - 120_000);
    await ingestOk(key.key, spans);
    await ingestOk(key.key, spans);
    await expectTotals(key.key, 'dup-seq', FOUR_TOTALS);
    await ingestOk(key.key, [...spans, spans[1]!, spans[1]!]);
    await expectTotals(key.key, 'dup-seq', FOUR_TOTALS);

    const inBatch = fourSpans('dup-inner', Date.now() - 120_000);
    await ingestOk(key.key, [...inBatch, ...inBatch]);
    await expectTotals(key.key, 'dup-inner', FOUR_TOTALS);
  });

  it('the same batch sent concurrently', async () => {
    const { key } = await projectWithKey(h());
    const spans = fourSpans('dup-conc', Date.now() - 120_000);
    const results = await Promise.all(Array.from({ length: 5 }, () => ingest(key.key, spans)));
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    await expectTotals(key.key, 'dup-conc', FOUR_TOTALS);
  });

  it('overlapping batches, sequential and concurrent', async () => {
    const { key } = await projectWithKey(h());
    const seq = fourSpans('overlap-seq', Date.now() - 120_000);
    await ingestOk(key.key, seq.slice(0, 3));
    await ingestOk(key.key, seq.slice(1, 4));
    await expectTotals(key.key, 'overlap-seq', FOUR_TOTALS);

    const conc = fourSpans('overlap-conc', Date.now() - 120_000);
    const results = await Promise.all([
      ingest(key.key, conc.slice(0, 3)),
      ingest(key.key, conc.slice(1, 4)),
      ingest(key.key, conc.slice(2)),
    ]);
    for (const r of results) expect(r.statusCode, r.body).toBe(200);
    await expectTotals(key.key, 'overlap-conc', FOUR_TOTALS);
  });
});

describe('ingest: late spans', () => {
  it('children first, root last: the trace ends with the root’s values', async () => {
    const { key } = await projectWithKey(h());
    const t0 = Date.now() - 10 * 60_000;
    const base = { trace_id: 'late' };
    await ingestOk(key.key, [
      {
        ...base,
        span_id: 'a',
        parent_span_id: 'root',
        name: 'child a',
        start_time: iso(t0 + 100),
        end_time: iso(t0 + 900),
        status: 'error',
        cost: 0.1,
        input_tokens: 10,
        output_tokens: 5,
        input: 'child input',
        metadata: { k: 'child', c: '1' },
      },
    ]);
    // No root yet: the earliest span stands in (docs/concepts.md).
    expect(await listItem(key.key, 'late')).toMatchObject({
      name: 'child a',
      input: 'child input',
      trace_start_time: iso(t0 + 100),
      duration_ms: 800,
    });

    await ingestOk(key.key, [
      {
        ...base,
        span_id: 'b',
        parent_span_id: 'a',
        name: 'grandchild b',
        start_time: iso(t0 + 200),
        end_time: iso(t0 + 1500),
        cost: 0.2,
        input_tokens: 1,
        output_tokens: 2,
        user_id: 'u-child',
        session_id: 'sess-child',
      },
    ]);
    await ingestOk(key.key, [
      {
        ...base,
        span_id: 'root',
        name: 'the root',
        start_time: iso(t0),
        end_time: iso(t0 + 1200),
        user_id: 'u-root',
        input: { q: 1 },
        output: 'answer',
        metadata: { k: 'root' },
      },
    ]);
    const want = {
      trace_id: 'late',
      name: 'the root',
      trace_start_time: iso(t0),
      duration_ms: 1500,
      span_count: 3,
      error_count: 1,
      user_id: 'u-root',
      session_id: 'sess-child',
      input: '{"q":1}',
      output: 'answer',
      metadata_map: { k: 'root', c: '1' },
      total_input_tokens: 11,
      total_output_tokens: 7,
    };
    const item = await listItem(key.key, 'late');
    expect(item).toMatchObject(want);
    expect(item.total_cost).toBeCloseTo(0.3, 9);
    const { spans, comment_count: comments, ...fromDetail } = await detail(key.key, 'late');
    expect(comments).toBe(0);
    expect(fromDetail).toEqual(item);
    expect(spans.map((s: { span_id: string }) => s.span_id)).toEqual(['root', 'a', 'b']);
  });

  /** Children filed under one hour, then their root, which started in the hour before. */
  async function earlyRootTrace() {
    const { key } = await projectWithKey(h());
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    const childStart = hour - 2 * HOUR + 5 * 60_000;
    const rootStart = hour - 2 * HOUR - 10 * 60_000;
    await ingestOk(key.key, [
      {
        trace_id: 'early-root',
        span_id: 'c1',
        parent_span_id: 'r',
        name: 'c1',
        start_time: iso(childStart),
        end_time: iso(childStart + 60_000),
        cost: 0.5,
        input_tokens: 3,
        output_tokens: 4,
        status: 'error',
      },
    ]);
    await ingestOk(key.key, [
      {
        trace_id: 'early-root',
        span_id: 'c2',
        parent_span_id: 'r',
        name: 'c2',
        start_time: iso(childStart + 1000),
        end_time: iso(childStart + 30 * 60_000),
        cost: 0.25,
      },
    ]);
    await ingestOk(key.key, [
      {
        trace_id: 'early-root',
        span_id: 'r',
        name: 'early root',
        start_time: iso(rootStart),
        end_time: iso(childStart + 1000),
        session_id: 'sess-early',
        input_tokens: 1,
        output_tokens: 1,
      },
    ]);
    return { key, childStart, rootStart };
  }

  it('a root that started in an earlier hour than the children already stored', async () => {
    const { key, childStart, rootStart } = await earlyRootTrace();
    const want = {
      name: 'early root',
      trace_start_time: iso(rootStart),
      duration_ms: childStart + 30 * 60_000 - rootStart,
      span_count: 3,
      error_count: 1,
      session_id: 'sess-early',
      total_cost: 0.75,
      total_input_tokens: 4,
      total_output_tokens: 5,
    };
    expect(await detail(key.key, 'early-root')).toMatchObject(want);
    const sessions = await call(h().api, { method: 'GET', url: `${PUBLIC}/sessions`, token: key.key });
    expect(sessions.json().data).toEqual([
      expect.objectContaining({
        session_id: 'sess-early',
        trace_count: 1,
        first_trace_time: iso(rootStart),
        total_cost: 0.75,
      }),
    ]);
    // One trace, listed and counted once.
    const all = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
    expect(all.json().data).toHaveLength(1);
    expect(all.json().meta.total).toBe(1);
    expect(await listItem(key.key, 'early-root')).toMatchObject(want);
  });

  it('a late root moves the whole trace to its start in the time window', async () => {
    const { key, childStart, rootStart } = await earlyRootTrace();
    const ids = async (query: Record<string, string>) => {
      const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key, query });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data.map((t: { trace_id: string; span_count: number }) => `${t.trace_id}:${t.span_count}`);
    };
    expect(await ids({ end_before: iso(childStart - 60_000) })).toEqual(['early-root:3']);
    expect(await ids({ start_after: iso(rootStart) })).toEqual(['early-root:3']);
    // The trace started at rootStart: no part of it belongs to a window that begins later.
    expect(await ids({ start_after: iso(rootStart + 1) })).toEqual([]);
  });
});

describe('ingest: group commit across projects', () => {
  it('concurrent requests from several projects each land in their own project', async () => {
    const projects = [];
    for (let i = 0; i < 4; i++) projects.push(await projectWithKey(h()));
    const t0 = Date.now() - 5 * 60_000;
    const requests = projects.flatMap(({ key }, p) => {
      // Every project uses the same trace ids; project p sends p + 2 spans of `common`, in two requests.
      const common = Array.from({ length: p + 2 }, (_, i) => ({
        trace_id: 'common',
        span_id: `s${i}`,
        parent_span_id: i ? 's0' : null,
        name: `common-${p}`,
        start_time: iso(t0 + i),
        cost: 1,
        input_tokens: p,
      }));
      return [
        ingest(key.key, common.slice(0, 1)),
        ingest(key.key, common.slice(1)),
        ingest(key.key, [{ trace_id: `own-${p}`, span_id: 'x', name: `own-${p}`, start_time: iso(t0 + 10) }]),
      ];
    });
    for (const r of await Promise.all(requests)) expect(r.statusCode, r.body).toBe(200);

    for (const [p, { key, project }] of projects.entries()) {
      const list = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token: key.key });
      const body = list.json();
      expect(body.meta.total).toBe(2);
      expect(body.data.map((t: { trace_id: string }) => t.trace_id).sort()).toEqual(['common', `own-${p}`]);
      for (const t of body.data) expect(t.project_id).toBe(project.id);
      expect(await listItem(key.key, 'common')).toMatchObject({
        name: `common-${p}`,
        span_count: p + 2,
        total_cost: p + 2,
        total_input_tokens: p * (p + 2),
      });
    }
  });
});
