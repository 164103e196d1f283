import { beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * `GET /traces` filtering, ordering and paging (docs/traces.md "List traces", docs/filters.md) on
 * real stores. Each describe ingests a small fixed set of traces into a project of its own once and
 * runs many list calls against it.
 */

const h = useHarness();

const HOUR = 3_600_000;
const MIN = 60_000;
/** The start of the current hour; fixture traces sit in the hours before it, so all are in the past. */
const H = Math.floor(Date.now() / HOUR) * HOUR;

type Span = Record<string, unknown>;

function list(token: string, query: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return call(h().api, { method: 'GET', url: `${PUBLIC}/traces`, token, query });
}

const ids = (res: LightMyRequestResponse): string[] => res.json().data.map((t: { trace_id: string }) => t.trace_id);

// Starts of the fixture traces: one per hour, so ordering and paging cross hour boundaries.
const A = H - 4 * HOUR + 10 * MIN;
const B = H - 3 * HOUR + 20 * MIN;
const G = H - 2 * HOUR + 30 * MIN;
const D = H - 1 * HOUR + 40 * MIN;
const E = H - 10 * MIN;

/**
 * | trace    | cost | tokens | duration | errors | notes                                               |
 * | tr-alpha | 0.5  | 150    | 4000     | 1      | gpt-4o; prod on root; metadata on root and child   |
 * | tr-beta  | 0.25 | 40     | 2000     | 0      | staging/retriever/ok only on children              |
 * | tr-gamma | 1.0  | 1000   | 10000    | 2      | claude-3; user only on a child; session sess-zebra |
 * | tr-delta | 0    | 0      | 500      | 0      | single span                                        |
 * | tr-eval  | 2    | 0      | 1000     | 0      | a child carries evaluation_run_id                  |
 */
const FIXTURE: Span[] = [
  // The child comes first so "the root's value wins" cannot be an accident of arrival order.
  {
    trace_id: 'tr-alpha',
    span_id: 'a-llm',
    parent_span_id: 'a-root',
    name: 'chat',
    kind: 'llm',
    start_time: iso(A + 100),
    end_time: iso(A + 4000),
    model_name: 'gpt-4o',
    cost: 0.5,
    input_tokens: 100,
    output_tokens: 50,
    status: 'error',
    error_type: 'RateLimitError',
    metadata: { tier: 'child-tier', region: 'eu-west' },
  },
  {
    trace_id: 'tr-alpha',
    span_id: 'a-root',
    name: 'Checkout Flow',
    kind: 'agent',
    start_time: iso(A),
    end_time: iso(A + 3000),
    user_id: 'u-alice',
    session_id: 's-one',
    environment: 'prod',
    metadata: { team: 'payments', tier: 'root-tier' },
  },

  {
    trace_id: 'tr-beta',
    span_id: 'b-root',
    name: 'search docs',
    kind: 'chain',
    start_time: iso(B),
    end_time: iso(B + 2000),
    user_id: 'u-bob',
    session_id: 's-two',
  },
  {
    trace_id: 'tr-beta',
    span_id: 'b-ret',
    parent_span_id: 'b-root',
    name: 'retrieve',
    kind: 'retriever',
    start_time: iso(B + 10),
    end_time: iso(B + 500),
    status: 'ok',
    environment: 'staging',
  },
  {
    trace_id: 'tr-beta',
    span_id: 'b-emb',
    parent_span_id: 'b-root',
    name: 'embed',
    kind: 'embedding',
    start_time: iso(B + 600),
    end_time: iso(B + 1500),
    model_name: 'text-embedding-3',
    cost: 0.25,
    input_tokens: 40,
  },

  {
    trace_id: 'tr-gamma',
    span_id: 'g-root',
    name: 'Summarize Report',
    kind: 'agent',
    start_time: iso(G),
    end_time: iso(G + 10_000),
    session_id: 'sess-zebra',
  },
  {
    trace_id: 'tr-gamma',
    span_id: 'g-draft',
    parent_span_id: 'g-root',
    name: 'draft',
    kind: 'llm',
    start_time: iso(G + 100),
    end_time: iso(G + 3000),
    model_name: 'claude-3',
    cost: 0.25,
    input_tokens: 300,
    output_tokens: 200,
    status: 'error',
    error_type: 'TimeoutError',
    environment: 'prod',
    user_id: 'u-carol',
  },
  {
    trace_id: 'tr-gamma',
    span_id: 'g-refine',
    parent_span_id: 'g-root',
    name: 'refine',
    kind: 'llm',
    start_time: iso(G + 3100),
    end_time: iso(G + 9000),
    model_name: 'claude-3',
    cost: 0.75,
    input_tokens: 400,
    output_tokens: 100,
    status: 'error',
    error_type: 'ValueError',
  },

  {
    trace_id: 'tr-delta',
    span_id: 'd-root',
    name: 'ping',
    kind: 'http',
    start_time: iso(D),
    end_time: iso(D + 500),
    metadata: { team: 'platform' },
  },

  {
    trace_id: 'tr-eval',
    span_id: 'e-root',
    name: 'eval case',
    kind: 'chain',
    start_time: iso(E),
    end_time: iso(E + 1000),
  },
  {
    trace_id: 'tr-eval',
    span_id: 'e-task',
    parent_span_id: 'e-root',
    name: 'task',
    kind: 'llm',
    start_time: iso(E + 10),
    end_time: iso(E + 900),
    model_name: 'gpt-4o',
    cost: 2,
    evaluation_run_id: 'run-1',
  },
];

/** Every non-evaluation trace, newest first. */
const ALL = ['tr-delta', 'tr-gamma', 'tr-beta', 'tr-alpha'];

describe('list traces: filter predicates', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, FIXTURE);
  });

  const cases: [string, unknown[], string[]][] = [
    ['trace_id eq', [{ field: 'trace_id', op: 'eq', value: 'tr-alpha' }], ['tr-alpha']],
    ['trace_id eq is not a substring match', [{ field: 'trace_id', op: 'eq', value: 'tr-alph' }], []],
    ['trace_id contains', [{ field: 'trace_id', op: 'contains', value: 'amm' }], ['tr-gamma']],
    ['trace_id contains, several', [{ field: 'trace_id', op: 'contains', value: 'tr-' }], ALL],
    ['trace_id contains, none', [{ field: 'trace_id', op: 'contains', value: 'zzz' }], []],
    ['signal_id eq without findings', [{ field: 'signal_id', op: 'eq', value: 'sig-none' }], []],

    ['model_name in, child span', [{ field: 'model_name', op: 'in', value: ['gpt-4o'] }], ['tr-alpha']],
    [
      'model_name in, any of several',
      [{ field: 'model_name', op: 'in', value: ['claude-3', 'text-embedding-3'] }],
      ['tr-gamma', 'tr-beta'],
    ],
    ['model_name in, none', [{ field: 'model_name', op: 'in', value: ['gpt-5'] }], []],
    ['environment in, set only on a child', [{ field: 'environment', op: 'in', value: ['staging'] }], ['tr-beta']],
    ['environment in, root or child', [{ field: 'environment', op: 'in', value: ['prod'] }], ['tr-gamma', 'tr-alpha']],
    ['environment in, none', [{ field: 'environment', op: 'in', value: ['dev'] }], []],
    ['span_kind in, child kind', [{ field: 'span_kind', op: 'in', value: ['retriever'] }], ['tr-beta']],
    [
      'span_kind in, any of several',
      [{ field: 'span_kind', op: 'in', value: ['http', 'embedding'] }],
      ['tr-delta', 'tr-beta'],
    ],
    ['span_kind in, none', [{ field: 'span_kind', op: 'in', value: ['tool'] }], []],
    ['status in error', [{ field: 'status', op: 'in', value: ['error'] }], ['tr-gamma', 'tr-alpha']],
    ['status in ok, child only', [{ field: 'status', op: 'in', value: ['ok'] }], ['tr-beta']],
    ['status in, none', [{ field: 'status', op: 'in', value: ['cancelled'] }], []],
    ['error_type in', [{ field: 'error_type', op: 'in', value: ['TimeoutError'] }], ['tr-gamma']],
    [
      'error_type in, any of several',
      [{ field: 'error_type', op: 'in', value: ['RateLimitError', 'ValueError'] }],
      ['tr-gamma', 'tr-alpha'],
    ],
    ['error_type in, none', [{ field: 'error_type', op: 'in', value: ['KeyError'] }], []],
    ['name in matches a child span name', [{ field: 'name', op: 'in', value: ['retrieve'] }], ['tr-beta']],
    [
      'name in matches the root span name',
      [{ field: 'name', op: 'in', value: ['ping', 'refine'] }],
      ['tr-delta', 'tr-gamma'],
    ],
    ['name in is exact, not a substring', [{ field: 'name', op: 'in', value: ['Checkout'] }], []],

    ['cost eq', [{ field: 'cost', op: 'eq', value: 0.5 }], ['tr-alpha']],
    ['cost eq sums all spans', [{ field: 'cost', op: 'eq', value: 1 }], ['tr-gamma']],
    ['cost eq, none', [{ field: 'cost', op: 'eq', value: 0.3 }], []],
    ['cost gt', [{ field: 'cost', op: 'gt', value: 0.5 }], ['tr-gamma']],
    ['cost gte', [{ field: 'cost', op: 'gte', value: 0.5 }], ['tr-gamma', 'tr-alpha']],
    ['cost lt', [{ field: 'cost', op: 'lt', value: 0.5 }], ['tr-delta', 'tr-beta']],
    ['cost lte', [{ field: 'cost', op: 'lte', value: 0.25 }], ['tr-delta', 'tr-beta']],
    ['cost gt, none', [{ field: 'cost', op: 'gt', value: 1 }], []],

    ['total_tokens eq', [{ field: 'total_tokens', op: 'eq', value: 150 }], ['tr-alpha']],
    ['total_tokens eq, none', [{ field: 'total_tokens', op: 'eq', value: 151 }], []],
    ['total_tokens gt', [{ field: 'total_tokens', op: 'gt', value: 150 }], ['tr-gamma']],
    ['total_tokens gte', [{ field: 'total_tokens', op: 'gte', value: 150 }], ['tr-gamma', 'tr-alpha']],
    ['total_tokens lt', [{ field: 'total_tokens', op: 'lt', value: 150 }], ['tr-delta', 'tr-beta']],
    ['total_tokens lte', [{ field: 'total_tokens', op: 'lte', value: 40 }], ['tr-delta', 'tr-beta']],

    [
      'duration_ms eq uses the latest end, not the root end',
      [{ field: 'duration_ms', op: 'eq', value: 4000 }],
      ['tr-alpha'],
    ],
    ['duration_ms eq, root end is not the duration', [{ field: 'duration_ms', op: 'eq', value: 3000 }], []],
    ['duration_ms gt', [{ field: 'duration_ms', op: 'gt', value: 4000 }], ['tr-gamma']],
    ['duration_ms gte', [{ field: 'duration_ms', op: 'gte', value: 2000 }], ['tr-gamma', 'tr-beta', 'tr-alpha']],
    ['duration_ms lt', [{ field: 'duration_ms', op: 'lt', value: 2000 }], ['tr-delta']],
    ['duration_ms lte', [{ field: 'duration_ms', op: 'lte', value: 2000 }], ['tr-delta', 'tr-beta']],
    ['duration_ms gt, none', [{ field: 'duration_ms', op: 'gt', value: 10_000 }], []],

    ['errors eq', [{ field: 'errors', op: 'eq', value: 1 }], ['tr-alpha']],
    ['errors eq, none', [{ field: 'errors', op: 'eq', value: 3 }], []],
    ['errors gt', [{ field: 'errors', op: 'gt', value: 0 }], ['tr-gamma', 'tr-alpha']],
    ['errors gte', [{ field: 'errors', op: 'gte', value: 2 }], ['tr-gamma']],
    ['errors lt', [{ field: 'errors', op: 'lt', value: 1 }], ['tr-delta', 'tr-beta']],
    ['errors lte', [{ field: 'errors', op: 'lte', value: 1 }], ['tr-delta', 'tr-beta', 'tr-alpha']],

    ['metadata eq on a root key', [{ field: 'metadata', op: 'eq', key: 'team', value: 'payments' }], ['tr-alpha']],
    ['metadata eq is not a substring match', [{ field: 'metadata', op: 'eq', key: 'team', value: 'pay' }], []],
    [
      'metadata eq on a child-only key',
      [{ field: 'metadata', op: 'eq', key: 'region', value: 'eu-west' }],
      ['tr-alpha'],
    ],
    [
      "metadata eq: the root's value wins",
      [{ field: 'metadata', op: 'eq', key: 'tier', value: 'root-tier' }],
      ['tr-alpha'],
    ],
    [
      "metadata eq: a child's value overridden by the root does not match",
      [{ field: 'metadata', op: 'eq', key: 'tier', value: 'child-tier' }],
      [],
    ],
    ['metadata contains', [{ field: 'metadata', op: 'contains', key: 'team', value: 'plat' }], ['tr-delta']],
    [
      'metadata contains on a child-only key',
      [{ field: 'metadata', op: 'contains', key: 'region', value: 'west' }],
      ['tr-alpha'],
    ],
    [
      'metadata contains, value under another key',
      [{ field: 'metadata', op: 'contains', key: 'region', value: 'pay' }],
      [],
    ],
    ['metadata on an absent key', [{ field: 'metadata', op: 'contains', key: 'nokey', value: 'a' }], []],

    [
      'two predicates are ANDed (set and number)',
      [
        { field: 'model_name', op: 'in', value: ['gpt-4o', 'claude-3'] },
        { field: 'cost', op: 'lt', value: 1 },
      ],
      ['tr-alpha'],
    ],
    [
      'two predicates are ANDed (set and errors)',
      [
        { field: 'environment', op: 'in', value: ['prod'] },
        { field: 'errors', op: 'gte', value: 2 },
      ],
      ['tr-gamma'],
    ],
    [
      'two predicates with no common match',
      [
        { field: 'status', op: 'in', value: ['ok'] },
        { field: 'errors', op: 'gt', value: 0 },
      ],
      [],
    ],
    ['an empty filters array filters nothing', [], ALL],
  ];

  it.each(cases)('%s', async (_label, filters, expected) => {
    const res = await list(token, { filters: JSON.stringify(filters) });
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual(expected);
    expect(res.json().meta).toEqual({ page: 0, limit: 50, total: expected.length });
  });

  it('lists the derived values the numeric and metadata filters compare', async () => {
    const res = await list(token, { filters: JSON.stringify([{ field: 'trace_id', op: 'eq', value: 'tr-alpha' }]) });
    expect(res.json().data[0]).toMatchObject({
      name: 'Checkout Flow',
      trace_start_time: iso(A),
      duration_ms: 4000,
      error_count: 1,
      span_count: 2,
      total_cost: 0.5,
      total_input_tokens: 100,
      total_output_tokens: 50,
      metadata_map: { team: 'payments', tier: 'root-tier', region: 'eu-west' },
    });
  });
});

describe('list traces: name, user_id and search_query', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, FIXTURE);
  });

  const cases: [string, Record<string, string>, string[]][] = [
    ['name: substring of the trace name, any case', { name: 'checkout' }, ['tr-alpha']],
    ['name: substring in the middle', { name: 'mariz' }, ['tr-gamma']],
    ["name: a child span's name is not the trace name", { name: 'retrieve' }, []],
    ['name: no match', { name: 'zzz' }, []],
    ['user_id: exact', { user_id: 'u-bob' }, ['tr-beta']],
    ['user_id: taken from a child when the root has none', { user_id: 'u-carol' }, ['tr-gamma']],
    ['user_id: not a substring match', { user_id: 'u-bo' }, []],
    ['search_query: trace_id, any case', { search_query: 'TR-GAM' }, ['tr-gamma']],
    ['search_query: trace name', { search_query: 'SEARCH DOCS' }, ['tr-beta']],
    ['search_query: session_id', { search_query: 'zebra' }, ['tr-gamma']],
    ['search_query: user_id', { search_query: 'alice' }, ['tr-alpha']],
    ['search_query: several traces', { search_query: 'u-' }, ['tr-gamma', 'tr-beta', 'tr-alpha']],
    ['search_query: a span name that is not the trace name does not match', { search_query: 'refine' }, []],
    ['search_query: no match', { search_query: 'nothing-here' }, []],
    [
      'name and a filter combine',
      { name: 'o', filters: JSON.stringify([{ field: 'errors', op: 'eq', value: 0 }]) },
      ['tr-beta'],
    ],
  ];

  it.each(cases)('%s', async (_label, query, expected) => {
    const res = await list(token, query);
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual(expected);
    expect(res.json().meta.total).toBe(expected.length);
  });
});

describe('list traces: evaluation traces', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, FIXTURE);
  });

  it('leaves out traces with any span carrying evaluation_run_id by default', async () => {
    const res = await list(token);
    expect(ids(res)).toEqual(ALL);
    expect(res.json().meta.total).toBe(4);
    const explicit = await list(token, { include_evaluations: 'false' });
    expect(ids(explicit)).toEqual(ALL);
  });

  it('includes them with include_evaluations=true', async () => {
    const res = await list(token, { include_evaluations: 'true' });
    expect(res.statusCode).toBe(200);
    expect(ids(res)).toEqual(['tr-eval', ...ALL]);
    expect(res.json().meta.total).toBe(5);
  });

  it('applies filters to them too', async () => {
    const filters = JSON.stringify([{ field: 'model_name', op: 'in', value: ['gpt-4o'] }]);
    expect(ids(await list(token, { filters }))).toEqual(['tr-alpha']);
    expect(ids(await list(token, { filters, include_evaluations: 'true' }))).toEqual(['tr-eval', 'tr-alpha']);
    const costly = JSON.stringify([{ field: 'cost', op: 'gt', value: 1.5 }]);
    expect((await list(token, { filters: costly })).json()).toMatchObject({ data: [], meta: { total: 0 } });
    expect(ids(await list(token, { filters: costly, include_evaluations: 'true' }))).toEqual(['tr-eval']);
  });

  it('answers 422 for include_evaluations=maybe', async () => {
    const res = await list(token, { include_evaluations: 'maybe' });
    expect(res.statusCode).toBe(422);
    expect(res.json().detail[0]).toMatchObject({
      loc: ['query', 'include_evaluations'],
      msg: expect.any(String),
      type: expect.any(String),
    });
  });
});

describe('list traces: order and pagination', () => {
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, FIXTURE);
  });

  it('lists newest first with the default meta', async () => {
    const res = await list(token);
    expect(res.statusCode).toBe(200);
    expect(ids(res)).toEqual(ALL);
    const starts = res.json().data.map((t: { trace_start_time: string }) => t.trace_start_time);
    expect(starts).toEqual([iso(D), iso(G), iso(B), iso(A)]);
    expect(res.json().meta).toEqual({ page: 0, limit: 50, total: 4 });
  });

  it('pages with a 0-based page and limit; total counts every match', async () => {
    const first = await list(token, { limit: '2' });
    expect(ids(first)).toEqual(['tr-delta', 'tr-gamma']);
    expect(first.json().meta).toEqual({ page: 0, limit: 2, total: 4 });
    const second = await list(token, { limit: '2', page: '1' });
    expect(ids(second)).toEqual(['tr-beta', 'tr-alpha']);
    expect(second.json().meta).toEqual({ page: 1, limit: 2, total: 4 });
    const partial = await list(token, { limit: '3', page: '1' });
    expect(ids(partial)).toEqual(['tr-alpha']);
    expect(partial.json().meta).toEqual({ page: 1, limit: 3, total: 4 });
  });

  it('answers an empty page past the end with the right total', async () => {
    const past = await list(token, { limit: '2', page: '2' });
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual({ data: [], meta: { page: 2, limit: 2, total: 4 } });
  });

  it('pages filtered lists the same way, on per-trace sums too', async () => {
    // A set filter (decided row by row) and a sum filter (needs each trace's merged values).
    const kinds = JSON.stringify([{ field: 'span_kind', op: 'in', value: ['agent', 'chain', 'http'] }]);
    const page1 = await list(token, { filters: kinds, limit: '3', page: '1' });
    expect(page1.json()).toMatchObject({ meta: { page: 1, limit: 3, total: 4 } });
    expect(ids(page1)).toEqual(['tr-alpha']);
    const cheap = JSON.stringify([{ field: 'cost', op: 'lte', value: 0.5 }]);
    const page0 = await list(token, { filters: cheap, limit: '2' });
    expect(ids(page0)).toEqual(['tr-delta', 'tr-beta']);
    expect(page0.json().meta).toEqual({ page: 0, limit: 2, total: 3 });
    const page1cheap = await list(token, { filters: cheap, limit: '2', page: '1' });
    expect(ids(page1cheap)).toEqual(['tr-alpha']);
    expect(page1cheap.json().meta.total).toBe(3);
    const beyond = await list(token, { filters: cheap, limit: '2', page: '5' });
    expect(beyond.json()).toEqual({ data: [], meta: { page: 5, limit: 2, total: 3 } });
  });
});

describe('list traces: start_after and end_before', () => {
  // Three single-span traces a minute apart; S is a millisecond-precise instant.
  const S = H - 5 * HOUR + 7 * MIN + 123;
  let token: string;
  beforeAll(async () => {
    token = (await projectWithKey(h())).key.key;
    await ingestSpans(h(), token, [
      { trace_id: 'tb-1', span_id: 'r', name: 'one', start_time: iso(S), end_time: iso(S + 10) },
      { trace_id: 'tb-2', span_id: 'r', name: 'two', start_time: iso(S + MIN), end_time: iso(S + MIN + 10) },
      { trace_id: 'tb-3', span_id: 'r', name: 'three', start_time: iso(S + 2 * MIN), end_time: iso(S + 2 * MIN + 10) },
      // Starts before S but ends inside the window: bounds are on the start.
      { trace_id: 'tb-0', span_id: 'r', name: 'zero', start_time: iso(S - MIN), end_time: iso(S + 5 * MIN) },
    ]);
  });

  const cases: [string, Record<string, string>, string[]][] = [
    ['start_after is inclusive', { start_after: iso(S) }, ['tb-3', 'tb-2', 'tb-1']],
    ['start_after one millisecond later excludes that trace', { start_after: iso(S + 1) }, ['tb-3', 'tb-2']],
    ['end_before is exclusive', { end_before: iso(S + 2 * MIN) }, ['tb-2', 'tb-1', 'tb-0']],
    [
      'end_before one millisecond later includes that trace',
      { end_before: iso(S + 2 * MIN + 1) },
      ['tb-3', 'tb-2', 'tb-1', 'tb-0'],
    ],
    ['both bounds', { start_after: iso(S), end_before: iso(S + 2 * MIN) }, ['tb-2', 'tb-1']],
    ['an empty window', { start_after: iso(S + 1), end_before: iso(S + MIN) }, []],
  ];

  it.each(cases)('%s', async (_label, query, expected) => {
    const res = await list(token, query);
    expect(res.statusCode, res.body).toBe(200);
    expect(ids(res)).toEqual(expected);
    expect(res.json().meta.total).toBe(expected.length);
  });

  it.each(['start_after', 'end_before'])('answers 422 for an invalid %s', async (param) => {
    const res = await list(token, { [param]: 'not-a-date' });
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(Array.isArray(body.detail)).toBe(true);
    expect(body.detail[0]).toMatchObject({ loc: ['query', param], msg: expect.any(String), type: expect.any(String) });
  });
});

/**
 * docs/spans.md: a trace's spans may arrive in separate requests, the root last. Its list values, its start
 * (the earliest span) and the count in `meta.total` must not depend on that.
 */
function splitTrace(label: string, rootStart: number, childStart: number) {
  return describe(`list traces: a trace whose child arrives before its root (${label})`, () => {
    let token: string;
    beforeAll(async () => {
      token = (await projectWithKey(h())).key.key;
      await ingestSpans(h(), token, [
        {
          trace_id: 'tr-split',
          span_id: 'child',
          parent_span_id: 'root',
          name: 'late step',
          kind: 'llm',
          start_time: iso(childStart),
          end_time: iso(childStart + 1000),
          model_name: 'gpt-4o',
          cost: 0.5,
          status: 'error',
        },
      ]);
      await ingestSpans(h(), token, [
        {
          trace_id: 'tr-split',
          span_id: 'root',
          name: 'split run',
          kind: 'agent',
          start_time: iso(rootStart),
          end_time: iso(rootStart + 500),
          cost: 0.25,
        },
      ]);
    });

    const whole = {
      trace_id: 'tr-split',
      name: 'split run',
      trace_start_time: iso(rootStart),
      span_count: 2,
      error_count: 1,
      total_cost: 0.75,
      duration_ms: childStart + 1000 - rootStart,
    };
    const cost = JSON.stringify([{ field: 'cost', op: 'eq', value: 0.75 }]);

    it.each<[string, Record<string, string>]>([
      ['no bounds', {}],
      ['a window on its start', { start_after: iso(rootStart), end_before: iso(rootStart + 1) }],
      [
        'a set filter on the child',
        { filters: JSON.stringify([{ field: 'model_name', op: 'in', value: ['gpt-4o'] }]) },
      ],
      ['a cost filter on the whole trace', { filters: cost }],
      ['a cost filter inside a window on its start', { end_before: iso(rootStart + 1), filters: cost }],
    ])('lists it once and whole with %s', async (_label, query) => {
      const res = await list(token, query);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual([expect.objectContaining(whole)]);
      expect(res.json().meta.total).toBe(1);
    });

    it('leaves it out of a window that starts after its start', async () => {
      const res = await list(token, { start_after: iso(rootStart + 1) });
      expect(res.json()).toMatchObject({ data: [], meta: { total: 0 } });
    });
  });
}

// Two minutes apart, across an hour boundary.
splitTrace('across an hour', H - 3 * HOUR - MIN, H - 3 * HOUR + MIN);
// Eight hours apart: a long-running agent.
splitTrace('eight hours later', H - 10 * HOUR + 5 * MIN, H - 2 * HOUR + 5 * MIN);
