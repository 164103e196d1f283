import { expect } from 'vitest';
import { generateSpans, generateTraces } from '../../src/demo/generate-spans.js';
import type { SpanInput } from '../../src/traces/span-input.js';
import { call, projectWithKey, PUBLIC, type Harness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';

/**
 * Shared data and helpers for the public SQL analyst corpus (analyst-corpus*.test.ts). The data is the
 * seeded demo generator over the last three whole hours-aligned days; every expected answer in the
 * corpus is computed here in plain JS from the generated spans, never through the implementation.
 */

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;
export const END = Math.floor(Date.now() / HOUR) * HOUR;
export const START = END - 3 * DAY;

export const TRACES: SpanInput[][] = [
  ...generateTraces({
    traces: 150,
    startMs: START,
    endMs: END,
    seed: 20261122,
    evaluationShare: 0.08,
    errorShare: 0.2,
    payloadBytes: 300,
  }),
];
/** The second project's data: other seed, other ids. */
export const OTHER: SpanInput[] = generateSpans({
  traces: 40,
  startMs: START,
  endMs: END,
  seed: 777,
  payloadBytes: 100,
});

/** A span as the curated `spans` table should show it (defaults applied). */
export type S = {
  trace_id: string;
  span_id: string;
  parent: string | null;
  name: string;
  kind: string;
  start: number;
  end: number;
  dur: number;
  status: string;
  error_type: string;
  model: string;
  env: string;
  user: string;
  session: string;
  metadata: Record<string, string>;
  input: string | null;
  output: string | null;
  cost: number;
  in: number;
  out: number;
  tot: number;
  eval: string;
};
const text = (v: unknown): string | null => (v == null ? null : typeof v === 'string' ? v : JSON.stringify(v));
export const SPANS: S[] = TRACES.flat().map((s) => {
  const start = Date.parse(s.start_time);
  const end = Date.parse(s.end_time as string);
  const inTok = s.input_tokens ?? 0;
  const outTok = s.output_tokens ?? 0;
  return {
    trace_id: s.trace_id,
    span_id: s.span_id,
    parent: s.parent_span_id ?? null,
    name: s.name,
    kind: s.kind ?? 'custom',
    start,
    end,
    dur: end - start,
    status: s.status ?? 'unset',
    error_type: s.error_type ?? '',
    model: s.model_name ?? '',
    env: s.environment ?? '',
    user: s.user_id ?? '',
    session: s.session_id ?? '',
    metadata: { ...(s.metadata ?? {}) },
    input: text(s.input),
    output: text(s.output),
    cost: s.cost ?? 0,
    in: inTok,
    out: outTok,
    tot: s.total_tokens ?? inTok + outTok,
    eval: s.evaluation_run_id ?? '',
  };
});

/** A trace as the curated `traces` table should show it (docs/concepts.md, "How trace fields are derived"). */
export type T = {
  trace_id: string;
  name: string;
  start: number;
  end: number;
  dur: number;
  user: string;
  session: string;
  span_count: number;
  error_count: number;
  cost: number;
  in: number;
  out: number;
  tot: number;
  metadata: Record<string, string>;
  models: Set<string>;
  kinds: Set<string>;
  statuses: Set<string>;
  error_types: Set<string>;
  is_eval: boolean;
  spans: S[];
};
export const TRACE_ROWS: T[] = [...groupBy(SPANS, (s) => s.trace_id).values()].map((spans) => {
  const root = spans.find((s) => s.parent === null)!;
  const start = Math.min(...spans.map((s) => s.start));
  const end = Math.max(...spans.map((s) => s.end));
  // From the root, else the earliest span that has one (the generator sets them on roots only).
  const first = (k: 'user' | 'session') =>
    root[k] || [...spans].sort((x, y) => x.start - y.start).find((s) => s[k] !== '')?.[k] || '';
  return {
    trace_id: root.trace_id,
    name: root.name,
    start,
    end,
    dur: end - start,
    user: first('user'),
    session: first('session'),
    span_count: spans.length,
    error_count: spans.filter((s) => s.status === 'error').length,
    cost: sum(spans, (s) => s.cost),
    in: sum(spans, (s) => s.in),
    out: sum(spans, (s) => s.out),
    tot: sum(spans, (s) => s.tot),
    metadata: root.metadata,
    models: new Set(spans.map((s) => s.model).filter(Boolean)),
    kinds: new Set(spans.map((s) => s.kind)),
    statuses: new Set(spans.map((s) => s.status)),
    error_types: new Set(spans.map((s) => s.error_type).filter(Boolean)),
    is_eval: spans.some((s) => s.eval !== ''),
    spans,
  };
});

// ---- plain helpers -------------------------------------------------------------------------------

export function groupBy<X>(xs: readonly X[], key: (x: X) => string): Map<string, X[]> {
  const m = new Map<string, X[]>();
  for (const x of xs) {
    const k = key(x);
    const list = m.get(k);
    if (list) list.push(x);
    else m.set(k, [x]);
  }
  return m;
}
export function sum<X>(xs: readonly X[], f: (x: X) => number): number {
  return xs.reduce((a, x) => a + f(x), 0);
}
/**
 * ClickHouse's round(x, digits) of a Float64: nearbyint(x * 10^digits), which breaks exact ties to the
 * even neighbour (0.03125 rounds to 0.0312), where Math.round goes up. Tie-free values round alike.
 */
export const round = (x: number, digits: number): number => {
  const scale = 10 ** digits;
  const v = x * scale;
  const floor = Math.floor(v);
  if (v - floor === 0.5) return (floor % 2 === 0 ? floor : floor + 1) / scale;
  return Math.round(v) / scale;
};
/** Byte order, as ClickHouse compares ASCII strings. */
export const cmp = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);
/** DateTime64(3) as ClickHouse prints it in JSON. */
export const chTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
export const chHour = (ms: number): string => chTime(Math.floor(ms / HOUR) * HOUR).slice(0, 19);
export const chDay = (ms: number): string => chTime(ms).slice(0, 10);
/** ClickHouse quantileExact(level): the element at floor(level * n) of the sorted values. */
export const quantileExact = (xs: number[], level: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(level * xs.length)];
export const expectClose = (actual: unknown, expected: number, tolerance = 2e-6): void => {
  expect(typeof actual, `expected a JSON number, got ${JSON.stringify(actual)}`).toBe('number');
  expect(Math.abs((actual as number) - expected), `${actual} vs ${expected}`).toBeLessThanOrEqual(
    tolerance + Math.abs(expected) * 1e-12,
  );
};

// ---- the API ---------------------------------------------------------------------------------------

export type SqlAnswer = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
};
export type Fixture = {
  h: Harness;
  key: string;
  otherKey: string;
  ownerToken: string;
  projectId: string;
  otherProjectId: string;
};

export async function setUp(h: Harness): Promise<Fixture> {
  const a = await projectWithKey(h, 'analyst');
  const b = await projectWithKey(h, 'other');
  await ingestSpans(h, a.key.key, TRACES.flat(), 400);
  await ingestSpans(h, b.key.key, OTHER, 400);
  return {
    h,
    key: a.key.key,
    otherKey: b.key.key,
    ownerToken: a.owner.token,
    projectId: a.project.id,
    otherProjectId: b.project.id,
  };
}

export async function postSql(f: Fixture, query: string, token = f.key, extra: Record<string, unknown> = {}) {
  return call(f.h.api, { method: 'POST', url: `${PUBLIC}/sql`, token, payload: { query, ...extra } });
}

/** Every query the corpus ran through `sql` (all accepted): test/sql/shape-audit.ts walks their trees. */
export const ANALYST_QUERIES: string[] = [];

/**
 * Runs an analyst query that must be accepted. A 400 is reported as the guard refusing a legitimate
 * query, anything else non-200 as an execution failure, so a failing test names which it was.
 */
export async function sql(
  f: Fixture,
  query: string,
  token = f.key,
  extra: Record<string, unknown> = {},
): Promise<SqlAnswer> {
  ANALYST_QUERIES.push(query);
  const res = await postSql(f, query, token, extra);
  if (res.statusCode === 400) throw new Error(`GUARD REFUSED a legitimate query: ${res.body}\n  query: ${query}`);
  if (res.statusCode !== 200)
    throw new Error(`HTTP ${res.statusCode} (not a refusal): ${res.body.slice(0, 600)}\n  query: ${query}`);
  const body = res.json() as SqlAnswer;
  expect(body.row_count).toBe(body.rows.length);
  expect(typeof body.elapsed_ms).toBe('number');
  return body;
}

/** Asserts the column names, and returns the rows. */
export function rowsOf(answer: SqlAnswer, names: string[]): unknown[][] {
  expect(answer.columns.map((c) => c.name)).toEqual(names);
  expect(answer.truncated).toBe(false);
  return answer.rows;
}
export const typeOf = (answer: SqlAnswer, name: string): string | undefined =>
  answer.columns.find((c) => c.name === name)?.type;
