import { beforeAll, describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import {
  chDay,
  cmp,
  expectClose,
  groupBy,
  OTHER,
  postSql,
  round,
  rowsOf,
  setUp,
  SPANS,
  sql,
  sum,
  TRACE_ROWS,
  typeOf,
  type Fixture,
  type S,
} from './corpus-fixture.js';
import { ANALYST_QUERIES } from './corpus-fixture.js';
import { expectShapesKnown } from './shape-audit.js';

/**
 * Public SQL, part 2: joins of traces and spans, CTEs, window functions, UNION ALL, HAVING, subqueries,
 * project isolation, the row cap, JSON-safe integers and refusals. Expected answers are computed from
 * the generated spans (corpus-fixture.ts).
 */

const h = useHarness();
let f: Fixture;
beforeAll(async () => {
  f = await setUp(h());
});

const byTrace = new Map(TRACE_ROWS.map((t) => [t.trace_id, t]));
const traceOf = (s: S) => byTrace.get(s.trace_id)!;
const sorted = <X>(entries: Iterable<[string, X]>) => [...entries].sort(([x], [y]) => cmp(x, y));

describe('public SQL: joins', () => {
  it('every trace span_count equals the count of its spans (join + GROUP BY)', async () => {
    const a = await sql(
      f,
      'SELECT count() AS traces, countIf(n = span_count) AS matching FROM (SELECT t.trace_id, t.span_count AS span_count, count() AS n FROM traces AS t INNER JOIN spans AS s ON s.trace_id = t.trace_id GROUP BY t.trace_id, t.span_count) AS per_trace',
    );
    expect(rowsOf(a, ['traces', 'matching'])).toEqual([[150, 150]]);
  });

  it('the same check as HAVING on the join answers no rows', async () => {
    const a = await sql(
      f,
      'SELECT t.trace_id, t.span_count, count() AS n FROM traces t JOIN spans s ON s.trace_id = t.trace_id GROUP BY t.trace_id, t.span_count HAVING count() != t.span_count',
    );
    expect(a.rows).toEqual([]);
    expect(a.columns.map((c) => c.name)).toEqual(['trace_id', 'span_count', 'n']);
  });

  it('LLM calls by model inside failing traces', async () => {
    const a = await sql(
      f,
      "SELECT s.model_name AS model, count() AS calls FROM spans AS s JOIN traces AS t ON t.trace_id = s.trace_id WHERE t.error_count > 0 AND s.kind = 'llm' GROUP BY model ORDER BY calls DESC, model",
    );
    const ss = SPANS.filter((s) => s.kind === 'llm' && traceOf(s).error_count > 0);
    const expected = [...groupBy(ss, (s) => s.model)]
      .map(([m, xs]) => [m, xs.length] as [string, number])
      .sort((x, y) => y[1] - x[1] || cmp(x[0], y[0]));
    expect(rowsOf(a, ['model', 'calls'])).toEqual(expected);
  });

  it("span cost by the trace's region and span kind", async () => {
    const a = await sql(
      f,
      "SELECT t.metadata['region'] AS region, s.kind AS kind, count() AS spans, round(sum(s.cost), 6) AS cost FROM spans s JOIN traces t ON s.trace_id = t.trace_id GROUP BY region, kind ORDER BY region, kind",
    );
    const expected = sorted(groupBy(SPANS, (s) => `${traceOf(s).metadata.region}|${s.kind}`));
    const rows = rowsOf(a, ['region', 'kind', 'spans', 'cost']);
    expect(rows.map((r) => r.slice(0, 3))).toEqual(expected.map(([k, ss]) => [...k.split('|'), ss.length]));
    rows.forEach((r, i) =>
      expectClose(
        r[3],
        round(
          sum(expected[i][1], (s) => s.cost),
          6,
        ),
      ),
    );
  });

  it('LEFT JOIN to per-trace error counts: traces without errors', async () => {
    const a = await sql(
      f,
      "SELECT countIf(coalesce(e.errs, 0) = 0) AS clean, countIf(e.errs > 0) AS failing FROM traces t LEFT JOIN (SELECT trace_id, count() AS errs FROM spans WHERE status = 'error' GROUP BY trace_id) e ON e.trace_id = t.trace_id",
    );
    const failing = TRACE_ROWS.filter((t) => t.error_count > 0).length;
    expect(rowsOf(a, ['clean', 'failing'])).toEqual([[150 - failing, failing]]);
  });

  it('parent and child kinds with a self join of spans', async () => {
    const a = await sql(
      f,
      'SELECT p.kind AS parent_kind, c.kind AS child_kind, count() AS n FROM spans c JOIN spans p ON c.parent_span_id = p.span_id AND c.trace_id = p.trace_id GROUP BY parent_kind, child_kind ORDER BY parent_kind, child_kind',
    );
    const ids = new Map(SPANS.map((s) => [`${s.trace_id}/${s.span_id}`, s]));
    const pairs = SPANS.filter((s) => s.parent).map((c) => `${ids.get(`${c.trace_id}/${c.parent}`)!.kind}|${c.kind}`);
    const expected = sorted(groupBy(pairs, (p) => p)).map(([k, xs]) => [...k.split('|'), xs.length]);
    expect(rowsOf(a, ['parent_kind', 'child_kind', 'n'])).toEqual(expected);
  });
});

describe('public SQL: CTEs and subqueries', () => {
  it('per-user CTE, summarised', async () => {
    const a = await sql(
      f,
      "WITH per_user AS (SELECT user_id, sum(total_cost) AS cost, count() AS traces FROM traces WHERE user_id != '' GROUP BY user_id) SELECT count() AS users, sum(traces) AS traces, round(max(cost), 6) AS top_cost FROM per_user",
    );
    const users = [
      ...groupBy(
        TRACE_ROWS.filter((t) => t.user),
        (t) => t.user,
      ).values(),
    ];
    const rows = rowsOf(a, ['users', 'traces', 'top_cost']);
    expect(rows[0].slice(0, 2)).toEqual([users.length, 150 - TRACE_ROWS.filter((t) => !t.user).length]);
    expectClose(rows[0][2], round(Math.max(...users.map((ts) => sum(ts, (t) => t.cost))), 6));
  });

  it('two CTEs joined: the traces where LLM calls are the smallest share of cost', async () => {
    const a = await sql(
      f,
      "WITH llm AS (SELECT trace_id, sum(cost) AS llm_cost FROM spans WHERE kind = 'llm' GROUP BY trace_id), tr AS (SELECT trace_id, total_cost FROM traces WHERE total_cost > 0) SELECT tr.trace_id AS trace_id, round(llm.llm_cost / tr.total_cost, 4) AS llm_share FROM tr JOIN llm ON llm.trace_id = tr.trace_id ORDER BY llm_share, trace_id LIMIT 5",
    );
    const expected = TRACE_ROWS.filter((t) => t.cost > 0)
      .map(
        (t) =>
          [
            t.trace_id,
            round(
              sum(
                t.spans.filter((s) => s.kind === 'llm'),
                (s) => s.cost,
              ) / t.cost,
              4,
            ),
          ] as [string, number],
      )
      .sort((x, y) => x[1] - y[1] || cmp(x[0], y[0]))
      .slice(0, 5);
    expect(rowsOf(a, ['trace_id', 'llm_share'])).toEqual(expected);
  });

  it('spans of enterprise traces: IN (SELECT ...)', async () => {
    const a = await sql(
      f,
      "SELECT count() AS spans, round(sum(cost), 6) AS cost FROM spans WHERE trace_id IN (SELECT trace_id FROM traces WHERE metadata['customer_tier'] = 'enterprise')",
    );
    const ss = SPANS.filter((s) => traceOf(s).metadata.customer_tier === 'enterprise');
    const rows = rowsOf(a, ['spans', 'cost']);
    expect(rows[0][0]).toBe(ss.length);
    expectClose(
      rows[0][1],
      round(
        sum(ss, (s) => s.cost),
        6,
      ),
    );
  });

  it('traces without retrieval: NOT IN (SELECT ...) agrees with NOT has(span_kinds, ...)', async () => {
    const a = await sql(
      f,
      "SELECT count() AS traces FROM traces WHERE trace_id NOT IN (SELECT trace_id FROM spans WHERE kind = 'retriever')",
    );
    const b = await sql(f, "SELECT countIf(NOT has(span_kinds, 'retriever')) AS traces FROM traces");
    const expected = TRACE_ROWS.filter((t) => !t.kinds.has('retriever')).length;
    expect(rowsOf(a, ['traces'])).toEqual([[expected]]);
    expect(rowsOf(b, ['traces'])).toEqual([[expected]]);
  });

  it('traces costing over three times the average: scalar subquery', async () => {
    const a = await sql(
      f,
      'SELECT trace_id, total_cost FROM traces WHERE total_cost > (SELECT avg(total_cost) * 3 FROM traces) ORDER BY total_cost DESC, trace_id',
    );
    const avg = sum(TRACE_ROWS, (t) => t.cost) / 150;
    const expected = TRACE_ROWS.filter((t) => t.cost > avg * 3).sort(
      (x, y) => y.cost - x.cost || cmp(x.trace_id, y.trace_id),
    );
    const rows = rowsOf(a, ['trace_id', 'total_cost']);
    expect(rows.map((r) => r[0])).toEqual(expected.map((t) => t.trace_id));
    rows.forEach((r, i) => expectClose(r[1], expected[i].cost, 1e-9));
  });
});

describe('public SQL: window functions', () => {
  it('two most expensive traces per agent: rank() OVER (PARTITION BY ...)', async () => {
    const a = await sql(
      f,
      'SELECT name, trace_id, rnk FROM (SELECT name, trace_id, total_cost, rank() OVER (PARTITION BY name ORDER BY total_cost DESC) AS rnk FROM traces) AS ranked WHERE rnk <= 2 ORDER BY name, rnk, trace_id',
    );
    const expected = sorted(groupBy(TRACE_ROWS, (t) => t.name)).flatMap(([n, ts]) =>
      [...ts]
        .sort((x, y) => y.cost - x.cost)
        .slice(0, 2)
        .map((t, i) => [n, t.trace_id, i + 1]),
    );
    expect(rowsOf(a, ['name', 'trace_id', 'rnk'])).toEqual(expected);
  });

  it('span order inside one trace: row_number()', async () => {
    const t = TRACE_ROWS.reduce((x, y) => (y.span_count > x.span_count ? y : x));
    const a = await sql(
      f,
      `SELECT span_id, kind, row_number() OVER (PARTITION BY trace_id ORDER BY start_time, span_id) AS seq FROM spans WHERE trace_id = '${t.trace_id}' ORDER BY seq`,
    );
    const expected = [...t.spans]
      .sort((x, y) => x.start - y.start || cmp(x.span_id, y.span_id))
      .map((s, i) => [s.span_id, s.kind, i + 1]);
    expect(rowsOf(a, ['span_id', 'kind', 'seq'])).toEqual(expected);
  });

  it('cumulative traces per day: sum(count()) OVER (ORDER BY day)', async () => {
    const a = await sql(
      f,
      'SELECT toDate(trace_start_time) AS day, count() AS traces, sum(count()) OVER (ORDER BY day) AS cumulative FROM traces GROUP BY day ORDER BY day',
    );
    let running = 0;
    const expected = sorted(groupBy(TRACE_ROWS, (t) => chDay(t.start))).map(([d, ts]) => [
      d,
      ts.length,
      (running += ts.length),
    ]);
    expect(rowsOf(a, ['day', 'traces', 'cumulative'])).toEqual(expected);
    expect(expected.at(-1)![2]).toBe(150);
  });

  it("each LLM call's share of its model's calls: count() OVER (PARTITION BY model_name)", async () => {
    const a = await sql(
      f,
      "SELECT DISTINCT model_name, count() OVER (PARTITION BY model_name) AS calls FROM spans WHERE kind = 'llm' ORDER BY model_name",
    );
    const expected = sorted(
      groupBy(
        SPANS.filter((s) => s.kind === 'llm'),
        (s) => s.model,
      ),
    ).map(([m, ss]) => [m, ss.length]);
    expect(rowsOf(a, ['model_name', 'calls'])).toEqual(expected);
  });
});

describe('public SQL: UNION ALL and HAVING', () => {
  it('row counts of all three tables in one answer', async () => {
    const a = await sql(
      f,
      "SELECT source, n FROM (SELECT 'traces' AS source, count() AS n FROM traces UNION ALL SELECT 'spans' AS source, count() AS n FROM spans UNION ALL SELECT 'findings' AS source, count() AS n FROM findings) AS u ORDER BY source",
    );
    expect(rowsOf(a, ['source', 'n'])).toEqual([
      ['findings', 0],
      ['spans', SPANS.length],
      ['traces', 150],
    ]);
  });

  it('error types counted per span and per trace (UNION ALL with arrayJoin)', async () => {
    const a = await sql(
      f,
      "SELECT level, error_type, n FROM (SELECT 'span' AS level, error_type, count() AS n FROM spans WHERE error_type != '' GROUP BY error_type UNION ALL SELECT 'trace' AS level, arrayJoin(error_types) AS error_type, count() AS n FROM traces GROUP BY error_type) AS u ORDER BY level, error_type",
    );
    const types = [...new Set(SPANS.map((s) => s.error_type).filter(Boolean))].sort(cmp);
    expect(types.length).toBeGreaterThan(1);
    expect(rowsOf(a, ['level', 'error_type', 'n'])).toEqual([
      ...types.map((e) => ['span', e, SPANS.filter((s) => s.error_type === e).length]),
      ...types.map((e) => ['trace', e, TRACE_ROWS.filter((t) => t.error_types.has(e)).length]),
    ]);
  });

  it('returning users: HAVING count() >= 3', async () => {
    const a = await sql(
      f,
      "SELECT user_id, count() AS traces, round(sum(total_cost), 6) AS cost FROM traces WHERE user_id != '' GROUP BY user_id HAVING count() >= 3 ORDER BY traces DESC, user_id",
    );
    const expected = [
      ...groupBy(
        TRACE_ROWS.filter((t) => t.user),
        (t) => t.user,
      ),
    ]
      .filter(([, ts]) => ts.length >= 3)
      .sort(([x, a1], [y, b1]) => b1.length - a1.length || cmp(x, y));
    expect(expected.length).toBeGreaterThan(0);
    const rows = rowsOf(a, ['user_id', 'traces', 'cost']);
    expect(rows.map((r) => [r[0], r[1]])).toEqual(expected.map(([u, ts]) => [u, ts.length]));
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

  it('models with failed calls: HAVING on an alias', async () => {
    const a = await sql(
      f,
      "SELECT model_name, countIf(status = 'error') AS errors, count() AS calls FROM spans WHERE kind = 'llm' GROUP BY model_name HAVING errors > 0 ORDER BY model_name",
    );
    const expected = sorted(
      groupBy(
        SPANS.filter((s) => s.kind === 'llm'),
        (s) => s.model,
      ),
    )
      .map(([m, ss]) => [m, ss.filter((s) => s.status === 'error').length, ss.length])
      .filter((r) => (r[1] as number) > 0);
    expect(expected.length).toBeGreaterThan(0);
    expect(rowsOf(a, ['model_name', 'errors', 'calls'])).toEqual(expected);
  });
});

describe('public SQL: scope, credentials and limits', () => {
  it('each project sees only its own rows', async () => {
    const mine = await sql(f, 'SELECT count() AS spans, uniqExact(trace_id) AS traces FROM spans');
    expect(rowsOf(mine, ['spans', 'traces'])).toEqual([[SPANS.length, 150]]);
    const theirs = await sql(
      f,
      'SELECT (SELECT count() FROM spans) AS spans, (SELECT count() FROM traces) AS traces',
      f.otherKey,
    );
    expect(rowsOf(theirs, ['spans', 'traces'])).toEqual([[OTHER.length, 40]]);
    const ids = [...new Set(OTHER.map((s) => s.trace_id))]
      .slice(0, 20)
      .map((id) => `'${id}'`)
      .join(', ');
    const leak = await sql(
      f,
      `SELECT count() AS n FROM traces t JOIN spans s ON s.trace_id = t.trace_id WHERE s.trace_id IN (${ids})`,
    );
    expect(rowsOf(leak, ['n'])).toEqual([[0]]);
  });

  it('a user credential queries with project_id, and needs it', async () => {
    const a = await sql(f, 'SELECT count() AS traces FROM traces', f.ownerToken, { project_id: f.projectId });
    expect(rowsOf(a, ['traces'])).toEqual([[150]]);
    const missing = await postSql(f, 'SELECT count() AS traces FROM traces', f.ownerToken);
    expect(missing.statusCode).toBe(400);
    const foreign = await postSql(f, 'SELECT count() AS traces FROM traces', f.ownerToken, {
      project_id: f.otherProjectId,
    });
    expect(foreign.statusCode).toBe(403);
  });

  it('answers at most 10,000 rows, then truncated; exactly 10,000 is not truncated', async () => {
    const join =
      "SELECT a.span_id AS left_id, b.span_id AS right_id FROM spans AS a JOIN spans AS b ON a.kind = b.kind WHERE a.kind = 'llm'";
    const big = await sql(f, `${join} LIMIT 12000`);
    expect([big.rows.length, big.row_count, big.truncated]).toEqual([10_000, 10_000, true]);
    expect(big.columns.map((c) => c.name)).toEqual(['left_id', 'right_id']);
    const exact = await sql(f, `${join} LIMIT 10000`);
    expect([exact.rows.length, exact.truncated]).toEqual([10_000, false]);
    const small = await sql(f, `${join} LIMIT 9999`);
    expect([small.rows.length, small.truncated]).toEqual([9_999, false]);
  });

  it('64-bit integers: numbers within ±2^53, strings beyond', async () => {
    const tokens = sum(SPANS, (s) => s.tot);
    const a = await sql(
      f,
      'SELECT sum(total_tokens) AS tokens, sum(total_tokens) * 1000000000000 AS huge, toInt64(-9007199254740991) AS low, toUInt64(9007199254740993) AS above FROM spans',
    );
    const rows = rowsOf(a, ['tokens', 'huge', 'low', 'above']);
    expect(rows).toEqual([
      [tokens, (BigInt(tokens) * 1_000_000_000_000n).toString(), -9007199254740991, '9007199254740993'],
    ]);
    expect(typeOf(a, 'tokens')).toBe('UInt64');
  });

  it('refuses what the contract does not allow, with a detail naming it', async () => {
    const refused: [string, RegExp][] = [
      ['SELECT count() FROM traces FINAL', /final/i],
      ['SELECT count() FROM spans SETTINGS max_threads = 1', /settings/i],
      ['SELECT count() FROM spans FORMAT CSV', /format/i],
      ['SELECT arrayMap(x -> x, model_names) FROM traces', /lambda|->/i],
      ['SELECT trace_id::String FROM spans', /::|cast/i],
      ['SELECT CAST(cost AS String) FROM spans', /cast/i],
      ['SELECT trace_id, k FROM traces ARRAY JOIN span_kinds AS k', /array join/i],
      ['SELECT trace_id FROM spans LIMIT 1 BY kind', /limit.*by/i],
      ['SELECT name FROM system.tables', /system\.tables/i],
      ['SELECT count() FROM spans; SELECT 1', /statement/i],
      ["INSERT INTO spans (trace_id) VALUES ('x')", /insert/i],
      ['SELECT project_id FROM spans', /project_id/i],
    ];
    const wrong: string[] = [];
    for (const [query, detail] of refused) {
      const res = await postSql(f, query);
      if (res.statusCode !== 400 || !detail.test(String(res.json().detail)))
        wrong.push(`${query} → ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('public SQL: everyday analyst idioms', () => {
  it('count(*) per span kind', async () => {
    const a = await sql(f, 'SELECT kind, count(*) AS spans FROM spans GROUP BY kind ORDER BY spans DESC, kind');
    const expected = [...groupBy(SPANS, (s) => s.kind)]
      .map(([k, ss]) => [k, ss.length] as [string, number])
      .sort((x, y) => y[1] - x[1] || cmp(x[0], y[0]));
    expect(rowsOf(a, ['kind', 'spans'])).toEqual(expected);
  });

  // The guard refuses bracket literals (['a', 'b']) on purpose, with a hint to write array(...).
  it("traces on either of two models: hasAny(model_names, array('gpt-4o', 'claude-3-haiku'))", async () => {
    const a = await sql(
      f,
      "SELECT count() AS traces FROM traces WHERE hasAny(model_names, array('gpt-4o', 'claude-3-haiku'))",
    );
    expect(rowsOf(a, ['traces'])).toEqual([
      [TRACE_ROWS.filter((t) => t.models.has('gpt-4o') || t.models.has('claude-3-haiku')).length],
    ]);
  });

  it('share of all spans per kind: sum(count()) OVER ()', async () => {
    const a = await sql(
      f,
      'SELECT kind, count() AS spans, round(count() / sum(count()) OVER (), 4) AS share FROM spans GROUP BY kind ORDER BY kind',
    );
    const expected = sorted(groupBy(SPANS, (s) => s.kind));
    const rows = rowsOf(a, ['kind', 'spans', 'share']);
    expect(rows.map((r) => [r[0], r[1]])).toEqual(expected.map(([k, ss]) => [k, ss.length]));
    rows.forEach((r, i) => expectClose(r[2], round(expected[i][1].length / SPANS.length, 4), 1e-9));
  });

  it('unaliased expressions keep the names ClickHouse gives them', async () => {
    const a = await sql(
      f,
      "SELECT kind, sum(input_tokens), count(), max(duration_ms) FROM spans WHERE kind = 'embedding' GROUP BY kind",
    );
    const ss = SPANS.filter((s) => s.kind === 'embedding');
    expect(rowsOf(a, ['kind', 'sum(input_tokens)', 'count()', 'max(duration_ms)'])).toEqual([
      ['embedding', sum(ss, (s) => s.in), ss.length, Math.max(...ss.map((s) => s.dur))],
    ]);
  });
});

describe('the guard fails closed', () => {
  it('every node the parser produced for the queries above was examined, with every property in the allowlist', () => {
    expectShapesKnown(ANALYST_QUERIES);
  });
});
