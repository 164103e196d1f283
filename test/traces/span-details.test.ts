import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, createApiKey, createProject, PUBLIC, signUp, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { outputTokensPerSecond } from '../../src/traces/span-writer.js';
import { runTick } from '../../src/alerts/evaluation.js';

/**
 * The span fields beyond the spec's table (docs/spans.md, "More span fields") on real stores: stored
 * and answered by the trace detail, output_tokens_per_second computed at ingest when not sent, the
 * streaming timings filtering the trace list (any span compares), measured by widgets and alerts,
 * and selectable in public SQL. Every expected number below is worked out by hand from the fixture.
 */

const h = useHarness();
const MIN = 60_000;
/** A whole minute safely in the past; every fixture span lies in the 10 minutes before it. */
const E = Math.floor(Date.now() / MIN) * MIN - 5 * MIN;
const S = E - 9 * MIN;
const F = E - 6 * MIN;
const Z = E - 3 * MIN;

const STACK = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nValueError: bad value';

/**
 * | span        | duration | ttft    | output | tokens/s                                  |
 * | s-llm1      | 2000     | 500     | 300    | 300 / 1.5 s = 200 (computed)               |
 * | s-llm2      | 2000     | 1200.5  | 100    | 42.5 (sent; computed would be 125.3…)      |
 * | f-llm       | 1000     | 100     | 90     | 90 / 0.9 s = 100 (computed)                |
 * | z-open      | no end   | –       | 50     | null (no end)                              |
 * | z-instant   | 0        | –       | 10     | null (no time)                             |
 * | z-late      | 1000     | 1000    | 10     | null (first token at the end)              |
 */
const FIXTURE = [
  {
    trace_id: 't-stream',
    span_id: 's-root',
    name: 'agent',
    kind: 'agent',
    start_time: iso(S),
    end_time: iso(S + 5000),
  },
  {
    trace_id: 't-stream',
    span_id: 's-llm1',
    parent_span_id: 's-root',
    name: 'chat',
    kind: 'llm',
    start_time: iso(S + 100),
    end_time: iso(S + 2100),
    time_to_first_token_ms: 500,
    input_tokens: 2000,
    output_tokens: 300,
    cache_read_tokens: 1000,
    cache_write_tokens: 50,
    reasoning_tokens: 120,
    cost: 0.02,
    status: 'error',
    error_type: 'ValueError',
    error_message: 'bad value',
    events: [
      { name: 'gen_ai.content.prompt', time: iso(S + 110), attributes: { 'gen_ai.prompt': 'hi' } },
      {
        name: 'exception',
        time: iso(S + 1500),
        attributes: { 'exception.type': 'ValueError', 'exception.message': 'bad value', 'exception.stacktrace': STACK },
      },
    ],
    links: [{ trace_id: 't-batch', span_id: 'b-1', attributes: { 'link.kind': 'follows_from' } }],
    resource: { 'service.name': 'chat-svc', 'host.name': 'web-1' },
    dropped_attributes_count: 3,
  },
  {
    trace_id: 't-stream',
    span_id: 's-llm2',
    parent_span_id: 's-root',
    name: 'chat',
    kind: 'llm',
    start_time: iso(S + 2200),
    end_time: iso(S + 4200),
    time_to_first_token_ms: 1200.5,
    output_tokens: 100,
    output_tokens_per_second: 42.5,
  },
  {
    trace_id: 't-fast',
    span_id: 'f-llm',
    name: 'chat',
    kind: 'llm',
    start_time: iso(F),
    end_time: iso(F + 1000),
    time_to_first_token_ms: 100,
    output_tokens: 90,
  },
  { trace_id: 't-plain', span_id: 'z-open', name: 'open', start_time: iso(Z), output_tokens: 50 },
  {
    trace_id: 't-plain',
    span_id: 'z-instant',
    parent_span_id: 'z-open',
    name: 'instant',
    start_time: iso(Z + 10),
    end_time: iso(Z + 10),
    output_tokens: 10,
  },
  {
    trace_id: 't-plain',
    span_id: 'z-late',
    parent_span_id: 'z-open',
    name: 'late',
    start_time: iso(Z + 20),
    end_time: iso(Z + 1020),
    time_to_first_token_ms: 1000,
    output_tokens: 10,
  },
];

let token: string;
let key: string;
let projectId: string;

beforeAll(async () => {
  const owner = await signUp(h(), 'span-details');
  token = owner.token;
  projectId = (await createProject(h(), token, owner.workspace.id)).id;
  key = (await createApiKey(h(), token, projectId)).key;
  await ingestSpans(h(), key, FIXTURE);
});

type SpanAnswer = Record<string, unknown> & { span_id: string };
async function spansOf(traceId: string): Promise<Map<string, SpanAnswer>> {
  const res = await call(h().api, { method: 'GET', url: `${PUBLIC}/traces/${traceId}`, token: key });
  expect(res.statusCode, res.body).toBe(200);
  return new Map(res.json().spans.map((s: SpanAnswer) => [s.span_id, s]));
}

describe('the trace detail', () => {
  it('answers each span’s extension fields as sent', async () => {
    const spans = await spansOf('t-stream');
    expect(spans.get('s-llm1')).toMatchObject({
      cost: 0.02,
      cost_source: 'sent',
      input_tokens: 2000,
      output_tokens: 300,
      cache_read_tokens: 1000,
      cache_write_tokens: 50,
      reasoning_tokens: 120,
      time_to_first_token_ms: 500,
      output_tokens_per_second: 200,
      events: [
        { name: 'gen_ai.content.prompt', time: iso(S + 110), attributes: { 'gen_ai.prompt': 'hi' } },
        {
          name: 'exception',
          time: iso(S + 1500),
          attributes: {
            'exception.type': 'ValueError',
            'exception.message': 'bad value',
            'exception.stacktrace': STACK,
          },
        },
      ],
      links: [{ trace_id: 't-batch', span_id: 'b-1', attributes: { 'link.kind': 'follows_from' } }],
      resource: { 'service.name': 'chat-svc', 'host.name': 'web-1' },
      dropped_attributes_count: 3,
      metadata: {},
    });
    // The producer's rate wins over the one ingest would compute (100 tokens / 0.7995 s).
    expect(spans.get('s-llm2')).toMatchObject({ time_to_first_token_ms: 1200.5, output_tokens_per_second: 42.5 });
  });

  it('answers defaults for a span that sent none of them', async () => {
    const root = (await spansOf('t-stream')).get('s-root');
    expect(root).toMatchObject({
      cost: 0,
      cost_source: 'none',
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
      time_to_first_token_ms: null,
      output_tokens_per_second: null,
      events: [],
      links: [],
      resource: {},
      dropped_attributes_count: 0,
    });
  });

  it('computes tokens per second over the time after the first token, or null when there is no such time', async () => {
    expect((await spansOf('t-fast')).get('f-llm')!.output_tokens_per_second).toBe(100);
    const plain = await spansOf('t-plain');
    expect(['z-open', 'z-instant', 'z-late'].map((id) => plain.get(id)!.output_tokens_per_second)).toEqual([
      null,
      null,
      null,
    ]);
  });

  it('outputTokensPerSecond: the same rule, pure', () => {
    const span = { output_tokens: 300, start_time: 0, end_time: 2000, time_to_first_token_ms: 500 };
    expect(outputTokensPerSecond(span)).toBe(200);
    expect(outputTokensPerSecond({ ...span, time_to_first_token_ms: null })).toBe(150);
    expect(outputTokensPerSecond({ ...span, output_tokens: 0 })).toBeNull();
    expect(outputTokensPerSecond({ ...span, end_time: null })).toBeNull();
    expect(outputTokensPerSecond({ ...span, time_to_first_token_ms: 2500 })).toBeNull();
    // 100 tokens over 3 s: 33.333… rounded to a thousandth.
    expect(
      outputTokensPerSecond({ output_tokens: 100, start_time: 0, end_time: 3000, time_to_first_token_ms: null }),
    ).toBe(33.333);
  });
});

describe('the trace list filters on the streaming timings: a trace matches when any of its spans does', () => {
  const list = (filters: unknown[], query: Record<string, string> = {}): Promise<LightMyRequestResponse> =>
    call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces`,
      token: key,
      query: { filters: JSON.stringify(filters), ...query },
    });
  const ids = async (filters: unknown[], query: Record<string, string> = {}) => {
    const res = await list(filters, query);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.map((t: { trace_id: string }) => t.trace_id);
  };
  const ttft = (op: string, value: number) => ({ field: 'time_to_first_token_ms', op, value });
  const tps = (op: string, value: number) => ({ field: 'output_tokens_per_second', op, value });

  // Newest first: t-plain (Z), t-fast (F), t-stream (S). Values: ttft 500, 1200.5 | 100 | 1000; tokens/s 200, 42.5 | 100 | –.
  const cases: [string, unknown[], string[]][] = [
    ['ttft gt 1000', [ttft('gt', 1000)], ['t-stream']],
    ['ttft gte 1000', [ttft('gte', 1000)], ['t-plain', 't-stream']],
    ['ttft lt 500', [ttft('lt', 500)], ['t-fast']],
    ['ttft lte 500', [ttft('lte', 500)], ['t-fast', 't-stream']],
    ['ttft eq 1200.5', [ttft('eq', 1200.5)], ['t-stream']],
    ['ttft gte 0 (traces with a streaming span)', [ttft('gte', 0)], ['t-plain', 't-fast', 't-stream']],
    ['tokens/s gt 150', [tps('gt', 150)], ['t-stream']],
    ['tokens/s lte 100', [tps('lte', 100)], ['t-fast', 't-stream']],
    ['tokens/s eq 100', [tps('eq', 100)], ['t-fast']],
    ['tokens/s gte 0 (null on every span of t-plain)', [tps('gte', 0)], ['t-fast', 't-stream']],
    [
      'each predicate on its own span: ttft lt 1000 and tokens/s lt 50',
      [ttft('lt', 1000), tps('lt', 50)],
      ['t-stream'],
    ],
    ['no span above both', [ttft('gt', 2000)], []],
  ];
  for (const [label, filters, expected] of cases) {
    it(label, async () => {
      expect(await ids(filters)).toEqual(expected);
    });
  }

  it('within a window: its lower bound bounds the spans read, and leaves the traces after it whole', async () => {
    expect(await ids([ttft('gte', 0)], { start_after: iso(F) })).toEqual(['t-plain', 't-fast']);
    expect(await ids([tps('lte', 100)], { start_after: iso(F), end_before: iso(Z) })).toEqual(['t-fast']);
  });

  it('refuses a negative or non-numeric value, or an op of another field, with a 400', async () => {
    for (const bad of [
      [ttft('gt', -1)],
      [{ field: 'output_tokens_per_second', op: 'in', value: [1] }],
      [{ field: 'time_to_first_token_ms', op: 'gt', value: '5' }],
    ]) {
      const res = await list(bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json().detail).toMatch(/^invalid filters parameter: filters\[0\]/);
    }
  });
});

describe('widgets measure the new span fields', () => {
  const window = { start_time: iso(E - 10 * MIN), end_time: iso(E) };
  const stat = async (spec: Record<string, unknown>) => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets/query`,
      token: key,
      payload: { type: 'stat', spec: { view: 'SPANS', ...spec }, ...window },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().rows[0][0];
  };

  it('over the spans that have them (hand-computed)', async () => {
    // ttft: 500, 1200.5, 100, 1000.
    expect(await stat({ measure: 'time_to_first_token_ms', aggregation: 'avg' })).toBe(700.125);
    expect(await stat({ measure: 'time_to_first_token_ms', aggregation: 'max' })).toBe(1200.5);
    expect(await stat({ measure: 'time_to_first_token_ms', aggregation: 'count' })).toBe(4);
    // tokens/s: 200, 42.5, 100.
    expect(await stat({ measure: 'output_tokens_per_second', aggregation: 'min' })).toBe(42.5);
    expect(await stat({ measure: 'output_tokens_per_second', aggregation: 'sum' })).toBe(342.5);
    expect(await stat({ measure: 'output_tokens_per_second', aggregation: 'count' })).toBe(3);
    expect(await stat({ measure: 'cache_read_tokens', aggregation: 'sum' })).toBe(1000);
    expect(await stat({ measure: 'cache_write_tokens', aggregation: 'sum' })).toBe(50);
    expect(await stat({ measure: 'reasoning_tokens', aggregation: 'sum' })).toBe(120);
  });

  it('with timing filters on spans and on traces', async () => {
    expect(
      await stat({
        measure: 'count',
        aggregation: 'count',
        filters: [{ field: 'time_to_first_token_ms', op: 'gt', value: 400 }],
      }),
    ).toBe(3);
    expect(
      await stat({
        measure: 'output_tokens',
        aggregation: 'sum',
        filters: [{ field: 'output_tokens_per_second', op: 'gte', value: 100 }],
      }),
    ).toBe(390);
    // TRACES: a trace counts when one of its spans compares (t-stream and t-plain have a ttft ≥ 1000).
    expect(
      await stat({
        view: 'TRACES',
        measure: 'count',
        aggregation: 'count',
        filters: [{ field: 'time_to_first_token_ms', op: 'gte', value: 1000 }],
      }),
    ).toBe(2);
  });

  it('refuses a timing measure on the TRACES view (422)', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/widgets/query`,
      token: key,
      payload: {
        type: 'stat',
        spec: { view: 'TRACES', measure: 'time_to_first_token_ms', aggregation: 'avg' },
        ...window,
      },
    });
    expect(res.statusCode).toBe(422);
  });
});

describe('alerts measure the new span fields', () => {
  async function createAlert(body: Record<string, unknown>) {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/alerts`,
      token,
      payload: { name: `a-${crypto.randomBytes(3).toString('hex')}`, project_id: projectId, window: '30m', ...body },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().alert as { id: string; aggregation: string };
  }
  const read = async (id: string) =>
    (
      await call(h().api, { method: 'GET', url: `${PUBLIC}/alerts/${id}`, token, query: { project_id: projectId } })
    ).json();

  it('goes ALERTING on a slow first token, sums reasoning tokens by default, and filters on tokens/s', async () => {
    const slow = await createAlert({
      measure: 'time_to_first_token_ms',
      aggregation: 'max',
      threshold: 1000,
      threshold_operator: '>',
    });
    const fast = await createAlert({
      measure: 'time_to_first_token_ms',
      aggregation: 'p50',
      threshold: 5000,
      threshold_operator: '>',
    });
    const reasoning = await createAlert({ measure: 'reasoning_tokens', threshold: 100, threshold_operator: '>=' });
    const sluggish = await createAlert({
      measure: 'count',
      threshold: 1,
      threshold_operator: '>=',
      filters: [{ field: 'output_tokens_per_second', op: '<', value: 50 }],
    });
    expect(reasoning.aggregation).toBe('sum');
    const report = await runTick(h().ctx, { token: crypto.randomUUID(), windowEndMs: E, projectIds: [projectId] });
    expect(report).toMatchObject({ committed: 4, failedQueries: 0 });
    expect(await read(slow.id)).toMatchObject({ status: 'ALERTING', last_value: 1200.5 });
    expect((await read(fast.id)).status).toBe('OK');
    expect(await read(reasoning.id)).toMatchObject({ status: 'ALERTING', last_value: 120 });
    // One span below 50 tokens/s: s-llm2's 42.5.
    expect(await read(sluggish.id)).toMatchObject({ status: 'ALERTING', last_value: 1 });
  });
});

describe('public SQL', () => {
  it('selects the scalar span fields', async () => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/sql`,
      token: key,
      payload: {
        query:
          "SELECT span_id, cost_source, cache_read_tokens, reasoning_tokens, time_to_first_token_ms, output_tokens_per_second FROM spans WHERE trace_id = 't-stream' ORDER BY start_time",
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rows).toEqual([
      ['s-root', 'none', 0, 0, null, null],
      ['s-llm1', 'sent', 1000, 120, 500, 200],
      ['s-llm2', 'none', 0, 0, 1200.5, 42.5],
    ]);
  });
});
