// Experiment (not a test): three ways to list the newest 50 traces with aggregates, on generated
// spans in the embedded engine. Run: npx tsx bench/experiments/trace-list-schemas.ts [spans]
// Results of the first run (2M spans) are in the closing note of session 1.
import { createClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
const ch = createClient({
  connection: createChdbConnection({ path: process.env.EXP_DIR ?? './bench/data/exp-trace-list' }),
} as any);
const q = async (sql: string) => {
  const t = performance.now();
  const r = await ch.query({ query: sql, format: 'JSONEachRow' });
  const rows = await r.json();
  return { ms: performance.now() - t, rows };
};
const N = Number(process.argv[2] ?? 2_000_000);
await ch.command({ query: 'DROP TABLE IF EXISTS spans SYNC' });
await ch.command({ query: 'DROP TABLE IF EXISTS traces SYNC' });
await ch.command({ query: 'DROP VIEW IF EXISTS traces_mv SYNC' });
await ch.command({
  query: `CREATE TABLE spans (
  project_id LowCardinality(String), trace_id String, span_id String, parent_span_id String,
  name LowCardinality(String), kind LowCardinality(String), start_time DateTime64(3), end_time DateTime64(3),
  status LowCardinality(String), model_name LowCardinality(String), cost Float64, total_tokens UInt64, input String
) ENGINE = ReplacingMergeTree ORDER BY (project_id, toStartOfHour(start_time), trace_id, span_id)
 SETTINGS non_replicated_deduplication_window = 1000`,
});
await ch.command({
  query: `CREATE TABLE traces (
  project_id LowCardinality(String), trace_id String,
  start_time SimpleAggregateFunction(min, DateTime64(3)), end_time SimpleAggregateFunction(max, DateTime64(3)),
  span_ids AggregateFunction(uniqExact, String),
  costs AggregateFunction(groupUniqArray, Tuple(String, Float64)),
  name AggregateFunction(argMin, String, Tuple(UInt8, DateTime64(3)))
) ENGINE = AggregatingMergeTree ORDER BY (project_id, trace_id)`,
});
await ch.command({
  query: `CREATE MATERIALIZED VIEW traces_mv TO traces AS SELECT project_id, trace_id, min(start_time) AS start_time, max(end_time) AS end_time,
  uniqExactState(span_id) AS span_ids, groupUniqArrayState((span_id, cost)) AS costs, argMinState(nm, (parent_span_id != '', st)) AS name FROM (SELECT *, start_time AS st, name AS nm FROM spans) GROUP BY project_id, trace_id`,
});
const now = Date.now();
const t = performance.now();
const batch = 500_000;
for (let off = 0; off < N; off += batch) {
  await ch.command({
    query: `INSERT INTO spans SELECT
    concat('p', toString(n % 5)) AS project_id,
    concat('t', toString(intDiv(n, 10))) AS trace_id,
    concat('s', toString(n % 10)) AS span_id,
    if(n % 10 = 0, '', 's0') AS parent_span_id,
    ['agent','llm','tool','retriever'][n % 4 + 1] AS name, ['agent','llm','tool','retriever'][n % 4 + 1] AS kind,
    fromUnixTimestamp64Milli(toInt64(${now} - (intDiv(n, 10) * 77777) % (90 * 86400000) + (n % 10) * 100)) AS start_time,
    start_time + toIntervalMillisecond(50 + n % 1000) AS end_time,
    if(n % 97 = 0, 'error', 'ok') AS status, ['gpt-4o','claude','llama'][n % 3 + 1] AS model_name,
    (n % 100) / 1000 AS cost, n % 2000 AS total_tokens, repeat('x', 200) AS input
  FROM (SELECT number + ${off} AS n FROM numbers(${Math.min(batch, N - off)}))
  SETTINGS max_partitions_per_insert_block = 1000`,
  });
}
console.log('load', N, (performance.now() - t).toFixed(0), 'ms');
await ch.command({ query: 'OPTIMIZE TABLE traces FINAL' });
for (const days of [1, 7, 90]) {
  const from = `now64(3) - INTERVAL ${days} DAY`;
  const runs: Record<string, number[]> = { naive: [], agg: [], pagefirst: [] };
  for (let i = 0; i < 5; i++) {
    runs.naive.push(
      (
        await q(
          `SELECT trace_id, min(start_time) s, count() c, sum(cost) cost, argMin(name, (parent_span_id != '', start_time)) nm FROM spans WHERE project_id='p1' AND start_time >= ${from} GROUP BY trace_id ORDER BY s DESC LIMIT 50`,
        )
      ).ms,
    );
    runs.agg.push(
      (
        await q(
          `SELECT trace_id, min(start_time) s, uniqExactMerge(span_ids) c, arraySum(x -> x.2, groupUniqArrayMerge(costs)) cost, argMinMerge(name) nm FROM traces WHERE project_id='p1' GROUP BY trace_id HAVING s >= ${from} ORDER BY s DESC LIMIT 50`,
        )
      ).ms,
    );
    runs.pagefirst.push(
      (
        await q(`WITH page AS (SELECT trace_id, start_time FROM spans WHERE project_id='p1' AND start_time >= ${from} AND parent_span_id = '' ORDER BY start_time DESC LIMIT 50)
      SELECT trace_id, min(start_time) s, count() c, sum(cost) cost, argMin(name, (parent_span_id != '', start_time)) nm FROM spans WHERE project_id='p1' AND start_time >= (SELECT min(start_time) FROM page) - INTERVAL 1 HOUR AND trace_id IN (SELECT trace_id FROM page) GROUP BY trace_id ORDER BY s DESC`)
      ).ms,
    );
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[2]!.toFixed(1);
  console.log(`${days}d naive ${med(runs.naive)} agg ${med(runs.agg)} pagefirst ${med(runs.pagefirst)}`);
}
const cnt = await q(`SELECT count() FROM traces WHERE project_id='p1'`);
console.log(cnt.rows);
process.exit(0);
