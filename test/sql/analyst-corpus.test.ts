import { beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, useHarness } from '../support/harness.js';
import {
  chDay,
  chHour,
  chTime,
  cmp,
  DAY,
  expectClose,
  groupBy,
  HOUR,
  quantileExact,
  round,
  rowsOf,
  setUp,
  SPANS,
  sql,
  sum,
  TRACE_ROWS,
  typeOf,
  type Fixture,
} from './corpus-fixture.js';
import { ANALYST_QUERIES } from './corpus-fixture.js';
import { expectShapesKnown } from './shape-audit.js';

/**
 * Public SQL, part 1: the questions an analyst asks of one project's traces and spans (aggregates,
 * percentiles, time buckets, maps and arrays), each checked against a hand computation over the
 * generated data. Part 2 (analyst-corpus-2.test.ts) covers joins, CTEs, windows, unions, subqueries.
 */

const h = useHarness();
let f: Fixture;
beforeAll(async () => {
  f = await setUp(h());
});

const TRACE_COLUMNS = [
  ['trace_id', 'String'],
  ['name', 'String'],
  ['trace_start_time', "DateTime64(3, 'UTC')"],
  ['trace_end_time', "Nullable(DateTime64(3, 'UTC'))"],
  ['duration_ms', 'Nullable(Int64)'],
  ['user_id', 'String'],
  ['session_id', 'String'],
  ['span_count', 'UInt64'],
  ['error_count', 'UInt64'],
  ['total_cost', 'Float64'],
  ['total_input_tokens', 'UInt64'],
  ['total_output_tokens', 'UInt64'],
  ['total_tokens', 'UInt64'],
  ['input', 'Nullable(String)'],
  ['output', 'Nullable(String)'],
  ['metadata', 'Map(String, String)'],
  ['model_names', 'Array(String)'],
  ['environments', 'Array(String)'],
  ['span_kinds', 'Array(String)'],
  ['statuses', 'Array(String)'],
  ['error_types', 'Array(String)'],
  ['span_names', 'Array(String)'],
  ['is_evaluation', 'UInt8'],
];
const SPAN_COLUMNS = [
  ['trace_id', 'String'],
  ['span_id', 'String'],
  ['parent_span_id', 'Nullable(String)'],
  ['name', 'String'],
  ['kind', 'String'],
  ['start_time', "DateTime64(3, 'UTC')"],
  ['end_time', "Nullable(DateTime64(3, 'UTC'))"],
  ['duration_ms', 'Nullable(Int64)'],
  ['status', 'String'],
  ['error_type', 'String'],
  ['error_message', 'String'],
  ['model_name', 'String'],
  ['environment', 'String'],
  ['user_id', 'String'],
  ['session_id', 'String'],
  ['input', 'Nullable(String)'],
  ['output', 'Nullable(String)'],
  ['metadata', 'Map(String, String)'],
  ['cost', 'Float64'],
  ['input_tokens', 'UInt64'],
  ['output_tokens', 'UInt64'],
  ['total_tokens', 'UInt64'],
  ['evaluation_run_id', 'String'],
  // issue 19: the scalar fields of docs/spans.md, "More span fields".
  ['cost_source', 'String'],
  ['cache_read_tokens', 'UInt64'],
  ['cache_write_tokens', 'UInt64'],
  ['reasoning_tokens', 'UInt64'],
  ['time_to_first_token_ms', 'Nullable(Float64)'],
  ['output_tokens_per_second', 'Nullable(Float64)'],
  // issue 34: the prompt version a span used (docs/prompts.md).
  ['prompt_name', 'String'],
  ['prompt_version', 'Nullable(UInt32)'],
];
const asColumns = (list: string[][]) => list.map(([name, type]) => ({ name, type }));
const llm = SPANS.filter((s) => s.kind === 'llm');
const evalCount = TRACE_ROWS.filter((t) => t.is_eval).length;

describe('public SQL: schema', () => {
  it('GET /sql/schema lists exactly traces, spans, findings, evaluation_results and scores with their columns', async () => {
    const res = await call(f.h.api, { method: 'GET', url: `${PUBLIC}/sql/schema`, token: f.key });
    expect(res.statusCode, res.body).toBe(200);
    const { tables } = res.json() as { tables: { name: string; columns: { name: string; type: string }[] }[] };
    expect(tables.map((t) => t.name).sort()).toEqual(['evaluation_results', 'findings', 'scores', 'spans', 'traces']);
    const byName = new Map(tables.map((t) => [t.name, t.columns]));
    expect(byName.get('traces')).toEqual(asColumns(TRACE_COLUMNS));
    expect(byName.get('spans')).toEqual(asColumns(SPAN_COLUMNS));
    expect(byName.get('findings')!.map((c) => c.name)).toEqual([
      'finding_id',
      'signal_id',
      'detector_id',
      'trace_id',
      'span_id',
      'trace_start_time',
      'found_at',
      'summary',
    ]);
  });

  it('SELECT * answers every advertised column with its advertised type', async () => {
    const traces = await sql(f, 'SELECT * FROM traces ORDER BY trace_id LIMIT 3');
    expect(traces.columns).toEqual(asColumns(TRACE_COLUMNS));
    expect(traces.rows).toHaveLength(3);
    const spans = await sql(f, 'SELECT * FROM spans ORDER BY trace_id, span_id LIMIT 3');
    expect(spans.columns).toEqual(asColumns(SPAN_COLUMNS));
  });
});

describe('public SQL: counts and totals', () => {
  it('traces, spans and evaluation traces; UInt64 counts and sums are JSON numbers', async () => {
    const a = await sql(
      f,
      'SELECT count() AS traces, sum(span_count) AS spans, countIf(is_evaluation = 1) AS evals, sum(total_tokens) AS tokens FROM traces',
    );
    expect(rowsOf(a, ['traces', 'spans', 'evals', 'tokens'])).toEqual([
      [150, SPANS.length, evalCount, sum(SPANS, (s) => s.tot)],
    ]);
    expect(typeOf(a, 'traces')).toBe('UInt64');
    expect(typeOf(a, 'spans')).toBe('UInt64');
  });

  it('spans per trace from the spans table', async () => {
    const a = await sql(
      f,
      'SELECT count() AS spans, uniqExact(trace_id) AS traces, uniq(trace_id) AS traces_approx FROM spans',
    );
    const [[spans, traces, approx]] = rowsOf(a, ['spans', 'traces', 'traces_approx']) as number[][];
    expect([spans, traces]).toEqual([SPANS.length, 150]);
    expect(Math.abs(approx - 150)).toBeLessThanOrEqual(3);
  });

  it('count of evaluation traces, and that they carry no user', async () => {
    const a = await sql(
      f,
      "SELECT countIf(is_evaluation = 1) AS evals, countIf(is_evaluation = 1 AND user_id = '') AS anonymous, countIf(is_evaluation = 0) AS live FROM traces",
    );
    expect(rowsOf(a, ['evals', 'anonymous', 'live'])).toEqual([[evalCount, evalCount, 150 - evalCount]]);
  });

  it('evaluation runs: traces and spans per run id', async () => {
    const a = await sql(
      f,
      "SELECT evaluation_run_id, uniqExact(trace_id) AS traces, count() AS spans FROM spans WHERE evaluation_run_id != '' GROUP BY evaluation_run_id ORDER BY evaluation_run_id",
    );
    const expected = [
      ...groupBy(
        SPANS.filter((s) => s.eval),
        (s) => s.eval,
      ),
    ]
      .sort(([x], [y]) => cmp(x, y))
      .map(([run, ss]) => [run, new Set(ss.map((s) => s.trace_id)).size, ss.length]);
    expect(expected.length).toBeGreaterThan(0);
    expect(rowsOf(a, ['evaluation_run_id', 'traces', 'spans'])).toEqual(expected);
  });

  it('tokens by model, biggest first', async () => {
    const a = await sql(
      f,
      "SELECT model_name, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, sum(total_tokens) AS total FROM spans WHERE model_name != '' GROUP BY model_name ORDER BY total DESC, model_name",
    );
    const expected = [
      ...groupBy(
        SPANS.filter((s) => s.model),
        (s) => s.model,
      ),
    ]
      .map(
        ([m, ss]) =>
          [m, sum(ss, (s) => s.in), sum(ss, (s) => s.out), sum(ss, (s) => s.tot)] as [string, number, number, number],
      )
      .sort((x, y) => y[3] - x[3] || cmp(x[0], y[0]));
    expect(rowsOf(a, ['model_name', 'input_tokens', 'output_tokens', 'total'])).toEqual(expected);
    expect(typeOf(a, 'total')).toBe('UInt64');
  });

  it('cost by user, top 10', async () => {
    const a = await sql(
      f,
      "SELECT user_id, round(sum(total_cost), 6) AS cost, count() AS traces FROM traces WHERE user_id != '' GROUP BY user_id ORDER BY cost DESC, user_id LIMIT 10",
    );
    const expected = [
      ...groupBy(
        TRACE_ROWS.filter((t) => t.user),
        (t) => t.user,
      ),
    ]
      .map(([u, ts]) => ({
        u,
        cost: round(
          sum(ts, (t) => t.cost),
          6,
        ),
        n: ts.length,
      }))
      .sort((x, y) => y.cost - x.cost || cmp(x.u, y.u))
      .slice(0, 10);
    const rows = rowsOf(a, ['user_id', 'cost', 'traces']);
    expect(rows.map((r) => [r[0], r[2]])).toEqual(expected.map((e) => [e.u, e.n]));
    rows.forEach((r, i) => expectClose(r[1], expected[i].cost));
    expect(typeOf(a, 'cost')).toBe('Float64');
  });

  it('error rate by span kind', async () => {
    const a = await sql(
      f,
      "SELECT kind, count() AS spans, countIf(status = 'error') AS errors, round(errors / spans, 4) AS error_rate FROM spans GROUP BY kind ORDER BY kind",
    );
    const expected = [...groupBy(SPANS, (s) => s.kind)]
      .sort(([x], [y]) => cmp(x, y))
      .map(([k, ss]) => [k, ss.length, ss.filter((s) => s.status === 'error').length]);
    const rows = rowsOf(a, ['kind', 'spans', 'errors', 'error_rate']);
    expect(rows.map((r) => r.slice(0, 3))).toEqual(expected);
    rows.forEach((r, i) => expectClose(r[3], round((expected[i][2] as number) / (expected[i][1] as number), 4), 1e-9));
  });

  it('agents: traces, failing traces (length of error_types) and share with errors', async () => {
    const a = await sql(
      f,
      'SELECT lower(name) AS agent, count() AS traces, countIf(length(error_types) > 0) AS failing, if(failing > 0, 1, 0) AS has_failures FROM traces GROUP BY agent ORDER BY agent',
    );
    const expected = [...groupBy(TRACE_ROWS, (t) => t.name)]
      .sort(([x], [y]) => cmp(x, y))
      .map(([n, ts]) => {
        const failing = ts.filter((t) => t.error_types.size > 0).length;
        return [n, ts.length, failing, failing > 0 ? 1 : 0];
      });
    expect(rowsOf(a, ['agent', 'traces', 'failing', 'has_failures'])).toEqual(expected);
  });

  it('has(statuses, error) agrees with error_count > 0', async () => {
    const a = await sql(
      f,
      "SELECT countIf(has(statuses, 'error')) AS by_status, countIf(error_count > 0) AS by_count, sum(error_count) AS errors FROM traces",
    );
    const failing = TRACE_ROWS.filter((t) => t.error_count > 0).length;
    expect(rowsOf(a, ['by_status', 'by_count', 'errors'])).toEqual([
      [failing, failing, SPANS.filter((s) => s.status === 'error').length],
    ]);
  });
});

describe('public SQL: latency', () => {
  it('LLM latency per model per day: p95 inside the data, exact median, min and max', async () => {
    const a = await sql(
      f,
      "SELECT toDate(start_time) AS day, model_name, count() AS calls, quantile(0.95)(duration_ms) AS p95, quantileExact(0.5)(duration_ms) AS p50, min(duration_ms) AS fastest, max(duration_ms) AS slowest FROM spans WHERE kind = 'llm' GROUP BY day, model_name ORDER BY day, model_name",
    );
    const groups = [...groupBy(llm, (s) => `${chDay(s.start)}|${s.model}`)].sort(([x], [y]) => cmp(x, y));
    const rows = rowsOf(a, ['day', 'model_name', 'calls', 'p95', 'p50', 'fastest', 'slowest']);
    expect(rows.map((r) => `${r[0]}|${r[1]}`)).toEqual(groups.map(([k]) => k));
    expect(typeOf(a, 'day')).toBe('Date');
    groups.forEach(([, ss], i) => {
      const d = ss.map((s) => s.dur);
      const [, , calls, p95, p50, lo, hi] = rows[i] as number[];
      expect([calls, p50, lo, hi]).toEqual([ss.length, quantileExact(d, 0.5), Math.min(...d), Math.max(...d)]);
      expect(p95).toBeGreaterThanOrEqual(lo);
      expect(p95).toBeLessThanOrEqual(hi);
    });
  });

  it('quantiles(0.5, 0.9) per span kind are ordered and inside the data', async () => {
    const a = await sql(
      f,
      'SELECT kind, quantiles(0.5, 0.9)(duration_ms) AS qs, min(duration_ms) AS lo, max(duration_ms) AS hi FROM spans GROUP BY kind ORDER BY kind',
    );
    const kinds = [...new Set(SPANS.map((s) => s.kind))].sort(cmp);
    const rows = rowsOf(a, ['kind', 'qs', 'lo', 'hi']);
    expect(rows.map((r) => r[0])).toEqual(kinds);
    for (const [, qs, lo, hi] of rows as [string, number[], number, number][]) {
      expect(qs).toHaveLength(2);
      expect(qs[0]).toBeLessThanOrEqual(qs[1]);
      expect(qs[0]).toBeGreaterThanOrEqual(lo);
      expect(qs[1]).toBeLessThanOrEqual(hi);
    }
  });

  it('latency buckets with multiIf', async () => {
    const a = await sql(
      f,
      "SELECT multiIf(duration_ms < 1000, 'fast', duration_ms < 3000, 'medium', 'slow') AS bucket, count() AS calls FROM spans WHERE kind = 'llm' GROUP BY bucket ORDER BY bucket",
    );
    const bucket = (d: number) => (d < 1000 ? 'fast' : d < 3000 ? 'medium' : 'slow');
    const expected = [...groupBy(llm, (s) => bucket(s.dur))]
      .sort(([x], [y]) => cmp(x, y))
      .map(([b, ss]) => [b, ss.length]);
    expect(rowsOf(a, ['bucket', 'calls'])).toEqual(expected);
  });

  it('slowest five traces (ORDER BY + LIMIT)', async () => {
    const a = await sql(
      f,
      'SELECT trace_id, name, duration_ms, span_count FROM traces ORDER BY duration_ms DESC, trace_id LIMIT 5',
    );
    const expected = [...TRACE_ROWS]
      .sort((x, y) => y.dur - x.dur || cmp(x.trace_id, y.trace_id))
      .slice(0, 5)
      .map((t) => [t.trace_id, t.name, t.dur, t.span_count]);
    expect(rowsOf(a, ['trace_id', 'name', 'duration_ms', 'span_count'])).toEqual(expected);
    expect(typeOf(a, 'duration_ms')).toBe('Nullable(Int64)');
  });

  it('dateDiff in milliseconds equals duration_ms', async () => {
    const a = await sql(
      f,
      "SELECT countIf(dateDiff('millisecond', trace_start_time, trace_end_time) = duration_ms) AS same, count() AS traces, max(dateDiff('second', trace_start_time, trace_end_time)) AS longest_s FROM traces",
    );
    const longest = Math.max(...TRACE_ROWS.map((t) => Math.floor(t.end / 1000) - Math.floor(t.start / 1000)));
    expect(rowsOf(a, ['same', 'traces', 'longest_s'])).toEqual([[150, 150, longest]]);
  });
});

describe('public SQL: time', () => {
  it('DateTime64 values print as ClickHouse prints them in JSON', async () => {
    const t = TRACE_ROWS[7];
    const a = await sql(
      f,
      `SELECT trace_id, trace_start_time, trace_end_time FROM traces WHERE trace_id = '${t.trace_id}'`,
    );
    expect(rowsOf(a, ['trace_id', 'trace_start_time', 'trace_end_time'])).toEqual([
      [t.trace_id, chTime(t.start), chTime(t.end)],
    ]);
    expect(typeOf(a, 'trace_start_time')).toBe("DateTime64(3, 'UTC')");
  });

  it('traces per hour with toStartOfHour', async () => {
    const a = await sql(
      f,
      'SELECT toStartOfHour(trace_start_time) AS hour, count() AS traces FROM traces GROUP BY hour ORDER BY hour',
    );
    const expected = [...groupBy(TRACE_ROWS, (t) => chHour(t.start))]
      .sort(([x], [y]) => cmp(x, y))
      .map(([hr, ts]) => [hr, ts.length]);
    const rows = rowsOf(a, ['hour', 'traces']);
    expect(rows.map((r) => [String(r[0]).slice(0, 19), r[1]])).toEqual(expected);
  });

  it('spend per 6-hour bucket with toStartOfInterval(t, INTERVAL 6 hour)', async () => {
    const a = await sql(
      f,
      'SELECT toStartOfInterval(start_time, INTERVAL 6 hour) AS bucket, count() AS spans, round(sum(cost), 6) AS cost FROM spans GROUP BY bucket ORDER BY bucket',
    );
    const expected = [...groupBy(SPANS, (s) => chHour(Math.floor(s.start / (6 * HOUR)) * 6 * HOUR))].sort(([x], [y]) =>
      cmp(x, y),
    );
    const rows = rowsOf(a, ['bucket', 'spans', 'cost']);
    expect(rows.map((r) => [String(r[0]).slice(0, 19), r[1]])).toEqual(expected.map(([b, ss]) => [b, ss.length]));
    rows.forEach((r, i) =>
      expectClose(
        r[2],
        round(
          sum(expected[i][1], (s) => s.cost),
          6,
        ),
      ),
    );
  });

  it('daily traces, failing traces and live spend with toStartOfDay, countIf and sumIf', async () => {
    const a = await sql(
      f,
      'SELECT toStartOfDay(trace_start_time) AS day, count() AS traces, countIf(error_count > 0) AS failing, round(sumIf(total_cost, is_evaluation = 0), 6) AS live_cost FROM traces GROUP BY day ORDER BY day',
    );
    const expected = [...groupBy(TRACE_ROWS, (t) => chDay(t.start))].sort(([x], [y]) => cmp(x, y));
    const rows = rowsOf(a, ['day', 'traces', 'failing', 'live_cost']);
    expect(rows.map((r) => [String(r[0]).slice(0, 10), r[1], r[2]])).toEqual(
      expected.map(([d, ts]) => [d, ts.length, ts.filter((t) => t.error_count > 0).length]),
    );
    rows.forEach((r, i) =>
      expectClose(
        r[3],
        round(
          sum(
            expected[i][1].filter((t) => !t.is_eval),
            (t) => t.cost,
          ),
          6,
        ),
      ),
    );
  });

  it('traces in the last 24 hours with now() - INTERVAL 1 DAY', async () => {
    const before = Date.now();
    const a = await sql(f, 'SELECT count() AS recent FROM traces WHERE trace_start_time >= now() - INTERVAL 1 DAY');
    const after = Date.now();
    const since = (c: number) => TRACE_ROWS.filter((t) => t.start >= c).length;
    const [[n]] = rowsOf(a, ['recent']) as number[][];
    expect(n).toBeGreaterThanOrEqual(since(after - DAY));
    expect(n).toBeLessThanOrEqual(since(Math.floor(before / 1000) * 1000 - DAY - 1000));
  });

  it('latest trace per user with argMax', async () => {
    const a = await sql(
      f,
      "SELECT user_id, argMax(trace_id, trace_start_time) AS latest_trace, max(trace_start_time) AS latest FROM traces WHERE user_id != '' GROUP BY user_id ORDER BY latest DESC, user_id LIMIT 5",
    );
    const expected = [
      ...groupBy(
        TRACE_ROWS.filter((t) => t.user),
        (t) => t.user,
      ),
    ]
      .map(([u, ts]) => {
        const last = ts.reduce((x, y) => (y.start > x.start ? y : x));
        return [u, last.trace_id, chTime(last.start)];
      })
      .sort((x, y) => cmp(y[2], x[2]) || cmp(x[0], y[0]))
      .slice(0, 5);
    expect(rowsOf(a, ['user_id', 'latest_trace', 'latest'])).toEqual(expected);
  });
});

describe('public SQL: sessions, maps and arrays', () => {
  it('sessions with the most traces', async () => {
    const a = await sql(
      f,
      "SELECT session_id, count() AS traces, uniqExact(user_id) AS users, min(trace_start_time) AS first_seen FROM traces WHERE session_id != '' GROUP BY session_id ORDER BY traces DESC, session_id LIMIT 5",
    );
    const expected = [
      ...groupBy(
        TRACE_ROWS.filter((t) => t.session),
        (t) => t.session,
      ),
    ]
      .map(
        ([id, ts]) =>
          [id, ts.length, new Set(ts.map((t) => t.user)).size, chTime(Math.min(...ts.map((t) => t.start)))] as [
            string,
            number,
            number,
            string,
          ],
      )
      .sort((x, y) => y[1] - x[1] || cmp(x[0], y[0]))
      .slice(0, 5);
    expect(rowsOf(a, ['session_id', 'traces', 'users', 'first_seen'])).toEqual(expected);
  });

  it("traces that used gpt-4o: has(model_names, 'gpt-4o')", async () => {
    const a = await sql(
      f,
      "SELECT count() AS traces, round(avg(total_cost), 8) AS avg_cost FROM traces WHERE has(model_names, 'gpt-4o')",
    );
    const ts = TRACE_ROWS.filter((t) => t.models.has('gpt-4o'));
    const rows = rowsOf(a, ['traces', 'avg_cost']);
    expect(rows[0][0]).toBe(ts.length);
    expectClose(rows[0][1], round(sum(ts, (t) => t.cost) / ts.length, 8), 2e-8);
  });

  it("cost by customer tier with metadata['customer_tier']", async () => {
    const a = await sql(
      f,
      "SELECT metadata['customer_tier'] AS tier, count() AS traces, round(sum(total_cost), 6) AS cost FROM traces GROUP BY tier ORDER BY tier",
    );
    const expected = [...groupBy(TRACE_ROWS, (t) => t.metadata.customer_tier)].sort(([x], [y]) => cmp(x, y));
    const rows = rowsOf(a, ['tier', 'traces', 'cost']);
    expect(rows.map((r) => [r[0], r[1]])).toEqual(expected.map(([k, ts]) => [k, ts.length]));
    rows.forEach((r, i) =>
      expectClose(
        r[2],
        round(
          sum(expected[i][1], (t) => t.cost),
          6,
        ),
      ),
    );
  });

  it('tool calls per tool version with map access on span metadata', async () => {
    const a = await sql(
      f,
      "SELECT name, metadata['tool_version'] AS version, count() AS calls FROM spans WHERE kind = 'tool' AND metadata['tool_version'] != '' GROUP BY name, version ORDER BY name, version",
    );
    const tools = SPANS.filter((s) => s.kind === 'tool' && s.metadata.tool_version);
    const expected = [...groupBy(tools, (s) => `${s.name}|${s.metadata.tool_version}`)]
      .sort(([x], [y]) => cmp(x, y))
      .map(([k, ss]) => [...k.split('|'), ss.length]);
    expect(expected.length).toBeGreaterThan(0);
    expect(rowsOf(a, ['name', 'version', 'calls'])).toEqual(expected);
  });

  it('span kinds across traces with arrayJoin', async () => {
    const a = await sql(
      f,
      'SELECT arrayJoin(span_kinds) AS kind, count() AS traces FROM traces GROUP BY kind ORDER BY kind',
    );
    const kinds = [...new Set(SPANS.map((s) => s.kind))].sort(cmp);
    expect(rowsOf(a, ['kind', 'traces'])).toEqual(
      kinds.map((k) => [k, TRACE_ROWS.filter((t) => t.kinds.has(k)).length]),
    );
  });

  it('weather lookups by city with JSONExtractString on span input', async () => {
    const a = await sql(
      f,
      "SELECT JSONExtractString(input, 'city') AS city, count() AS calls FROM spans WHERE name = 'get_weather' GROUP BY city ORDER BY calls DESC, city",
    );
    const expected = [
      ...groupBy(
        SPANS.filter((s) => s.name === 'get_weather'),
        (s) => JSON.parse(s.input as string).city as string,
      ),
    ]
      .map(([c, ss]) => [c, ss.length] as [string, number])
      .sort((x, y) => y[1] - x[1] || cmp(x[0], y[0]));
    expect(expected.length).toBeGreaterThan(0);
    expect(rowsOf(a, ['city', 'calls'])).toEqual(expected);
  });

  it('root spans: parent_span_id IS NULL, coalesce', async () => {
    const a = await sql(
      f,
      "SELECT coalesce(parent_span_id, 'none') = 'none' AS is_root, count() AS spans FROM spans GROUP BY is_root ORDER BY is_root",
    );
    expect(rowsOf(a, ['is_root', 'spans'])).toEqual([
      [0, SPANS.length - 150],
      [1, 150],
    ]);
  });

  it('average billed cost of LLM and embedding calls with avgIf and round', async () => {
    const a = await sql(
      f,
      "SELECT kind, round(avgIf(cost, status != 'error'), 9) AS avg_ok_cost, uniqExact(model_name) AS models FROM spans WHERE kind IN ('llm', 'embedding') GROUP BY kind ORDER BY kind",
    );
    const rows = rowsOf(a, ['kind', 'avg_ok_cost', 'models']);
    ['embedding', 'llm'].forEach((k, i) => {
      const ss = SPANS.filter((s) => s.kind === k);
      const ok = ss.filter((s) => s.status !== 'error');
      expect([rows[i][0], rows[i][2]]).toEqual([k, new Set(ss.map((s) => s.model)).size]);
      expectClose(rows[i][1], round(sum(ok, (s) => s.cost) / ok.length, 9), 2e-9);
    });
  });

  it('span ids of a trace with groupArray', async () => {
    const t = TRACE_ROWS[3];
    const a = await sql(
      f,
      `SELECT trace_id, groupArray(span_id) AS ids, length(ids) AS n FROM spans WHERE trace_id = '${t.trace_id}' GROUP BY trace_id`,
    );
    const rows = rowsOf(a, ['trace_id', 'ids', 'n']);
    expect(rows).toHaveLength(1);
    expect([...(rows[0][1] as string[])].sort()).toEqual(t.spans.map((s) => s.span_id).sort());
    expect(rows[0][2]).toBe(t.span_count);
  });
});

describe('the guard fails closed', () => {
  it('every node the parser produced for the queries above was examined, with every property in the allowlist', () => {
    expectShapesKnown(ANALYST_QUERIES);
  });
});
