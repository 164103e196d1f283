import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApiApp } from '../../src/app.js';
import { inSample, sweepSampling } from '../../src/controls/sampling.js';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { memberWithRole } from '../support/accounts.js';
import { iso } from '../support/ingest.js';

/**
 * Sampling at ingest (quality.md §6; docs/producer-controls.md, "Sampling"): the setting's routes,
 * and the decision: a trace is kept or dropped whole whichever batch or API instance its spans come
 * through, a keep rule's match within the decision window keeps it whole (held spans written once),
 * and nothing held is visible to a read meanwhile. Two API apps on one set of stores stand for two
 * processes: each has its own settings cache, usage meter and quota counter.
 */
const h = useHarness({ SAMPLING_DECISION_WINDOW_SECONDS: '600' });
type Owner = Awaited<ReturnType<typeof projectWithKey>>;
let a: Owner;
let b: Owner;
let other: FastifyInstance;

const RATE = 0.01;
const KEEP_ERRORS = { field: 'status', op: 'in', value: ['error'] };

const setting = (o: Owner, token: string, payload?: unknown) =>
  call(h().api, {
    method: payload === undefined ? 'GET' : 'PUT',
    url: `${PUBLIC}/projects/${o.project.id}/sampling`,
    token,
    payload: payload as never,
  });

/** Trace ids of this project in the sample by hash (`true`) or out of it, with a label. */
function traceIds(o: Owner, label: string, wanted: boolean, n: number): string[] {
  const found: string[] = [];
  for (let i = 0; found.length < n; i++) {
    const id = `${label}-${i}`;
    if (inSample(o.project.id, id, RATE) === wanted) found.push(id);
  }
  return found;
}

const at = Date.now() - 120_000;
const span = (traceId: string, spanId: string, extra: Record<string, unknown> = {}) => ({
  trace_id: traceId,
  span_id: spanId,
  name: `op-${spanId}`,
  start_time: iso(at),
  end_time: iso(at + 10),
  input: `input of ${traceId}`,
  ...extra,
});

async function send(app: FastifyInstance, o: Owner, spans: unknown[]) {
  const res = await call(app, { method: 'POST', url: `${PUBLIC}/traces`, token: o.key.key, payload: { spans } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { accepted: number; sampled_out?: number; rejected: unknown[] };
}

const detail = (o: Owner, traceId: string) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: o.key.key });

async function sqlCount(o: Owner, where: string): Promise<number> {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/sql`,
    token: o.key.key,
    payload: { query: `SELECT count() AS n FROM spans WHERE ${where}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return Number(res.json().rows[0][0]);
}

beforeAll(async () => {
  a = await projectWithKey(h(), 'sampling-a');
  b = await projectWithKey(h(), 'sampling-b');
  // A second API instance on the same stores: its own controls cache, usage meter and sweep.
  other = buildApiApp({ ...h().ctx });
  await other.ready();
  return async () => {
    await other.close();
  };
});

describe('sampling settings', () => {
  it('answer the default, are replaced whole by an ADMIN, and refused to others', async () => {
    expect((await setting(a, a.owner.token)).json()).toEqual({ rate: 1, keep: [] });
    const member = await memberWithRole(h(), a.owner, a.owner.workspace.id, 'MEMBER');
    const viewer = await memberWithRole(h(), a.owner, a.owner.workspace.id, 'VIEWER');
    const body = { rate: 0.5, keep: [] };
    expect((await setting(a, member.token, body)).statusCode).toBe(403);
    expect((await setting(a, viewer.token, body)).statusCode).toBe(403);
    expect((await setting(a, a.key.key, body)).statusCode).toBe(403);
    expect((await setting(a, b.owner.token, body)).statusCode).toBe(403);
    expect((await setting(a, b.owner.token)).statusCode).toBe(403);
    expect((await setting(a, viewer.token)).statusCode).toBe(200);
    expect((await setting(a, a.owner.token, { rate: 0.25 })).json()).toEqual({ rate: 0.25, keep: [] });
    // B's setting is its own.
    expect((await setting(b, b.owner.token)).json()).toEqual({ rate: 1, keep: [] });
  });

  it('refuse a rate outside 0-1, a field a keep rule cannot test, and a malformed predicate', async () => {
    for (const bad of [
      { rate: 1.5, keep: [] },
      { rate: -0.1, keep: [] },
      { rate: 'half', keep: [] },
      { rate: 0.5, keep: [], extra: true },
      { rate: 0.5, keep: [{ field: 'status', op: 'in', value: 'error' }] },
      { rate: 0.5, keep: [{ field: 'metadata', op: 'eq', value: 'x' }] },
      { rate: 0.5, keep: Array.from({ length: 21 }, () => KEEP_ERRORS) },
    ]) {
      const res = await setting(a, a.owner.token, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(422);
      expect(res.json().detail).toBeDefined();
    }
    const cost = await setting(a, a.owner.token, { rate: 0.5, keep: [{ field: 'cost', op: 'gt', value: 1 }] });
    expect(cost.statusCode).toBe(422);
    expect(JSON.stringify(cost.json().detail)).toContain(
      'not a keep rule: a keep rule tests status, environment, model_name or span_kind (op \\"in\\", value a list of strings) or metadata',
    );
    // Nothing half-written: the refused PUTs left the last good setting.
    expect((await setting(a, a.owner.token)).json()).toEqual({ rate: 0.25, keep: [] });
  });
});

describe('the decision', () => {
  beforeAll(async () => {
    const put = await setting(a, a.owner.token, {
      rate: RATE,
      keep: [KEEP_ERRORS, { field: 'metadata', key: 'tier', op: 'eq', value: 'gold' }],
    });
    expect(put.statusCode, put.body).toBe(200);
  });

  it('keeps every error trace of a 1% sample, and counts the rest sampled out', async () => {
    const healthy = traceIds(a, 'healthy', false, 30);
    const failing = traceIds(a, 'failing', false, 5);
    const spans = [
      ...healthy.flatMap((t) => [span(t, 'root'), span(t, 'child', { parent_span_id: 'root' })]),
      ...failing.flatMap((t) => [
        span(t, 'root'),
        span(t, 'child', { parent_span_id: 'root', status: 'error', error_message: 'boom' }),
      ]),
    ];
    expect(await send(h().api, a, spans)).toEqual({ accepted: 70, sampled_out: 60, rejected: [] });
    for (const t of failing) {
      const res = await detail(a, t);
      expect(res.statusCode, t).toBe(200);
      expect(res.json().spans).toHaveLength(2);
    }
    for (const t of healthy.slice(0, 5)) expect((await detail(a, t)).statusCode).toBe(404);
    // Nothing held is listed, searched, or reachable by SQL.
    const list = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: a.key.key,
      query: { limit: '100' },
    });
    const listed = new Set(list.json().data.map((x: { trace_id: string }) => x.trace_id));
    for (const t of healthy) expect(listed.has(t)).toBe(false);
    for (const t of failing) expect(listed.has(t)).toBe(true);
    const search = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: a.key.key,
      query: { text_query: `"input of ${healthy[0]}"` },
    });
    expect(search.statusCode).toBe(200);
    expect(search.json().data).toEqual([]);
    expect(await sqlCount(a, `trace_id LIKE 'healthy-%'`)).toBe(0);
    expect(await sqlCount(a, `trace_id LIKE 'failing-%'`)).toBe(10);
  });

  it('keeps or drops a trace whole whichever batch and instance its spans come through', async () => {
    const [kept] = traceIds(a, 'split-in', true, 1);
    const [dropped] = traceIds(a, 'split-out', false, 1);
    expect(await send(h().api, a, [span(kept!, 'one')])).toEqual({ accepted: 1, sampled_out: 0, rejected: [] });
    expect(await send(other, a, [span(kept!, 'two')])).toEqual({ accepted: 1, sampled_out: 0, rejected: [] });
    expect(await send(h().api, a, [span(dropped!, 'one')])).toEqual({ accepted: 1, sampled_out: 1, rejected: [] });
    expect(await send(other, a, [span(dropped!, 'two')])).toEqual({ accepted: 1, sampled_out: 1, rejected: [] });
    expect((await detail(a, kept!)).json().spans).toHaveLength(2);
    expect((await detail(a, dropped!)).statusCode).toBe(404);
    // Both instances decide alike by the hash alone: the same trace ids come out the same way again.
    expect(await send(other, a, [span(kept!, 'three')])).toEqual({ accepted: 1, sampled_out: 0, rejected: [] });
  });

  it('a keep match in a later batch, on another instance, stores the held spans once, and later spans too', async () => {
    const [trace] = traceIds(a, 'late-error', false, 1);
    expect(await send(h().api, a, [span(trace!, 'root'), span(trace!, 'a', { parent_span_id: 'root' })])).toEqual({
      accepted: 2,
      sampled_out: 2,
      rejected: [],
    });
    expect((await detail(a, trace!)).statusCode).toBe(404);
    const late = await send(other, a, [span(trace!, 'b', { parent_span_id: 'root', status: 'error' })]);
    expect(late).toEqual({ accepted: 1, sampled_out: 0, rejected: [] });
    const read = await detail(a, trace!);
    expect(read.statusCode).toBe(200);
    expect(
      read
        .json()
        .spans.map((s: { span_id: string }) => s.span_id)
        .sort(),
    ).toEqual(['a', 'b', 'root']);
    // A span after the match is kept by the trace's keep marker, on either instance.
    expect(await send(h().api, a, [span(trace!, 'c', { parent_span_id: 'root' })])).toEqual({
      accepted: 1,
      sampled_out: 0,
      rejected: [],
    });
    // Written exactly once: a sweep after the promotion finds nothing more, and the store holds 4 rows.
    await sweepSampling(h().ctx, h().ctx.spanWriter, [a.project.id]);
    expect(await sqlCount(a, `trace_id = '${trace}'`)).toBe(4);
    expect((await detail(a, trace!)).json().span_count).toBe(4);
  });

  it('a metadata keep rule keeps the trace; the sweep takes out spans held after a marker, once', async () => {
    const [gold] = traceIds(a, 'gold', false, 1);
    expect(await send(other, a, [span(gold!, 'x', { metadata: { tier: 'gold' } })])).toEqual({
      accepted: 1,
      sampled_out: 0,
      rejected: [],
    });
    expect((await detail(a, gold!)).statusCode).toBe(200);

    // The race between processes: a span held just after another process took the trace's held
    // spans out. Here the marker is recorded behind the held span's back, as that process would.
    const [raced] = traceIds(a, 'raced', false, 1);
    expect(await send(h().api, a, [span(raced!, 'held')])).toEqual({ accepted: 1, sampled_out: 1, rejected: [] });
    await h().ctx.pg.pool.query(
      `INSERT INTO sampling_keeps (project_id, trace_id, expires_at) VALUES ($1, $2, now() + interval '1 hour')`,
      [a.project.id, raced],
    );
    const sweeps = await Promise.all([
      sweepSampling(h().ctx, h().ctx.spanWriter, [a.project.id]),
      sweepSampling(h().ctx, h().ctx.spanWriter, [a.project.id]),
    ]);
    expect(sweeps.reduce((n, s) => n + s.promoted, 0)).toBe(1);
    expect(await sqlCount(a, `trace_id = '${raced}'`)).toBe(1);
  });

  it('counts sampled-out spans in usage and /metrics, and says so in the OTLP answer', async () => {
    // An OTLP trace id (32 hex digits) out of the sample.
    let traceHex = '';
    for (let i = 1; !traceHex; i++) {
      const id = (0xabc00000 + i).toString(16).padStart(32, '0');
      if (!inSample(a.project.id, id, RATE)) traceHex = id;
    }
    const otlp = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/otel/v1/traces`,
      token: a.key.key,
      headers: { 'content-type': 'application/json' },
      payload: {
        resourceSpans: [
          {
            resource: { attributes: [] },
            scopeSpans: [
              {
                spans: [
                  {
                    traceId: traceHex,
                    spanId: 'b7ad6b7169203331',
                    name: 'otel-op',
                    startTimeUnixNano: String(BigInt(at) * 1_000_000n),
                    endTimeUnixNano: String(BigInt(at + 5) * 1_000_000n),
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    expect(otlp.statusCode, otlp.body).toBe(200);
    expect(otlp.json()).toEqual({ partialSuccess: { rejectedSpans: 0, errorMessage: '1 span sampled out' } });
    expect((await detail(a, traceHex)).statusCode).toBe(404);

    const usage = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${a.project.id}/usage`,
      token: a.owner.token,
    });
    expect(usage.statusCode).toBe(200);
    const total = usage.json().data.reduce((n: number, d: { sampled_out_spans: number }) => n + d.sampled_out_spans, 0);
    // Held so far through the first instance: 60 + 1 + 2 + 1 + 1 (the usage read flushes its meter;
    // the second instance's one span is written when its meter flushes).
    expect(total).toBeGreaterThanOrEqual(65);
    const metrics = await call(h().api, { method: 'GET', url: '/metrics' });
    const line = metrics.body.split('\n').find((l) => l.startsWith('sightline_ingest_sampled_out_spans_total'));
    expect(Number(line?.split(' ').pop())).toBeGreaterThanOrEqual(66);
  });

  it('with no keep rule, drops the spans out by hash at once: nothing is held to expire', async () => {
    const c = await projectWithKey(h(), 'sampling-no-keep');
    expect((await setting(c, c.owner.token, { rate: RATE, keep: [] })).statusCode).toBe(200);
    const out = traceIds(c, 'dropped', false, 3);
    const [inside] = traceIds(c, 'inside', true, 1);
    const sent = [...out, inside!].map((t) => span(t, 'root', { status: 'error' }));
    expect(await send(h().api, c, sent)).toEqual({ accepted: 4, sampled_out: 3, rejected: [] });
    expect((await detail(c, inside!)).statusCode).toBe(200);
    for (const t of out) expect((await detail(c, t)).statusCode).toBe(404);
    const held = await h().ctx.pg.pool.query('SELECT count(*)::int AS n FROM sampling_held WHERE project_id = $1', [
      c.project.id,
    ]);
    expect(held.rows[0].n).toBe(0);
  });

  it("leaves another project's ingest and answer untouched", async () => {
    const [t] = traceIds(a, 'b-side', false, 1);
    expect(await send(h().api, b, [span(t!, 'x')])).toEqual({ accepted: 1, rejected: [] });
    expect((await detail(b, t!)).statusCode).toBe(200);
  });
});
