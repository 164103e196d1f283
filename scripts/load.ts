import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

/**
 * `npm run load`: mixed traffic against a running server for a fixed time: ingest (batches of 100
 * spans, every span new), the trace list, the default dashboard's data and a SQL query, in turn on
 * every connection. Prints throughput, latency percentiles and answers by status; exits 1 on any
 * error or 5xx.
 *
 *   npm run load -- --key sl_... [--api http://localhost:8000] [--duration 30] [--connections 8]
 */

const { values } = parseArgs({
  options: {
    api: { type: 'string', default: process.env.SIGHTLINE_API_URL ?? 'http://localhost:8000' },
    key: { type: 'string', default: process.env.SIGHTLINE_API_KEY },
    duration: { type: 'string', default: '30' },
    connections: { type: 'string', default: '8' },
  },
});

async function main(): Promise<void> {
  if (!values.key)
    throw new Error('pass --key with a project API key (npm start prints the demo key on its first run)');
  const api = values.api!.replace(/\/+$/, '');
  const headers = { authorization: `Bearer ${values.key}`, 'content-type': 'application/json' };
  const dashboards = await fetch(`${api}/api/v1/public/dashboards`, { headers });
  if (!dashboards.ok)
    throw new Error(`the server answered ${dashboards.status} to GET /dashboards: ${await dashboards.text()}`);
  const dashboardId = ((await dashboards.json()) as { data: { id: string }[] }).data[0]!.id;
  let batch = 0;
  const run = `load-${Date.now().toString(36)}`;

  const result = await autocannon({
    url: api,
    connections: Number(values.connections),
    duration: Number(values.duration),
    requests: [
      {
        method: 'POST',
        path: '/api/v1/public/traces',
        headers,
        setupRequest: (request) => {
          const trace = `${run}-${batch++}`;
          const now = Date.now();
          const spans = Array.from({ length: 100 }, (_, i) => ({
            trace_id: trace,
            span_id: `s${i}`,
            parent_span_id: i ? 's0' : null,
            name: i ? 'llm.chat' : 'agent',
            kind: i ? 'llm' : 'agent',
            model_name: i % 2 ? 'gpt-4o' : 'claude-3-haiku',
            start_time: new Date(now + i).toISOString(),
            end_time: new Date(now + i + 40).toISOString(),
            input_tokens: 120,
            output_tokens: 30,
            cost: 0.0004,
            metadata: { tenant: `t${batch % 7}` },
          }));
          return { ...request, body: JSON.stringify({ spans }) };
        },
      },
      { method: 'GET', path: '/api/v1/public/traces?limit=50', headers },
      { method: 'GET', path: `/api/v1/public/dashboards/${dashboardId}/data?range=1d`, headers },
      {
        method: 'POST',
        path: '/api/v1/public/sql',
        headers,
        body: JSON.stringify({
          query:
            'SELECT model_name, count() AS calls, quantile(0.95)(duration_ms) AS p95 FROM spans GROUP BY model_name',
        }),
      },
    ],
  });

  const statuses = Object.entries(result.statusCodeStats ?? {}).map(
    ([code, s]) => `${code}: ${(s as { count: number }).count}`,
  );
  const fiveXx = Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => Number(code) >= 500)
    .reduce((n, [, s]) => n + (s as { count: number }).count, 0);
  const lines = [
    `Load: ${result.requests.total} requests in ${result.duration} s over ${values.connections} connections (${Math.round(result.requests.average)} req/s; ${batch * 100} spans ingested)`,
    `Latency ms: p50 ${result.latency.p50}, p90 ${result.latency.p90}, p99 ${result.latency.p99}, max ${result.latency.max}`,
    `Answers by status: ${statuses.join(', ')}`,
    `Errors: ${result.errors} (timeouts ${result.timeouts}), 5xx: ${fiveXx}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  if (result.errors > 0 || fiveXx > 0) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`load: ${(error as Error).message}\n`);
  process.exitCode = 1;
});
