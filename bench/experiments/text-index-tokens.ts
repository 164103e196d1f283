// Experiment (not a test): the text indexer's tokens written by a view on `text_postings` (one read
// and tokenization of the spans' text a pass) against its own INSERT … SELECT that reads and
// tokenizes the text again (src/traces/text-index.ts). Same 20,000 realistic spans, the tables
// emptied between rounds, rounds alternated; wall ms of a pass's two writes.
//
// 2026-11-28, 4 rounds: statement 1,891 ms, view 1,671 ms (−12%), the same 64,289 tokens. Not taken:
// the second read is a small part of a pass (the postings' ARRAY JOIN and GROUP BY are most of it),
// not worth a migration and a view on the postings.
//
//   npx tsx bench/experiments/text-index-tokens.ts [--spans 20000] [--rounds 4] [--dir /tmp/x]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { realisticTraces } from '../corpus.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { withPayload } from '../../src/traces/span-payload.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '4' },
    dir: { type: 'string', default: '/tmp/sightline-exp-text-tokens' },
  },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
for (const m of clickHouseMigrations(path.join(ROOT_DIR, 'clickhouse')))
  for (const statement of m.statements) await ch.command({ query: statement });
const N = Number(args.spans);
const rows: object[] = [];
for (const spans of realisticTraces({ spans: N, startMs: Date.now() - 86_400_000, endMs: Date.now(), seed: 7 })) {
  const accepted = validateSpans(spans).accepted;
  const hour = Math.floor(Math.min(...accepted.map((s) => s.start_time)) / 3_600_000) * 3600;
  for (const s of accepted) rows.push(withPayload({ ...s, project_id: 'p', trace_start_hour: hour, ttl_days: 30 }));
  if (rows.length >= N) break;
}
for (let i = 0; i < rows.length; i += 5000)
  await ch.insert({ table: 'spans', values: rows.slice(i, i + 5000), format: 'JSONEachRow' });

const FIELD_TOKENS = `arrayConcat(
    arrayMap(t -> (t, toUInt8(1)), arrayDistinct(splitByNonAlpha(lowerUTF8(ifNull(input, ''))))),
    arrayMap(t -> (t, toUInt8(2)), arrayDistinct(splitByNonAlpha(lowerUTF8(ifNull(output, ''))))),
    arrayMap(t -> (t, toUInt8(4)), arrayDistinct(splitByNonAlpha(lowerUTF8(error_message)))))`;
const POSTINGS = `INSERT INTO text_postings (project_id, token, trace_start_hour, trace_key, fields, ttl_days)
SELECT project_id, tf.1 AS token, trace_start_hour, sipHash64(trace_id) AS trace_key, groupBitOr(tf.2) AS fields, max(ttl_days) AS ttl_days
FROM spans ARRAY JOIN ${FIELD_TOKENS} AS tf WHERE length(tf.1) >= 3
GROUP BY project_id, token, trace_start_hour, trace_key`;
const TOKENS = `INSERT INTO text_tokens (project_id, token, last_hour, ttl_days)
SELECT project_id, token, max(trace_start_hour) AS last_hour, max(ttl_days) AS ttl_days
FROM spans ARRAY JOIN arrayDistinct(splitByNonAlpha(lowerUTF8(concat(ifNull(input, ''), ' ', ifNull(output, ''), ' ', error_message)))) AS token
WHERE length(token) >= 3 GROUP BY project_id, token`;
const VIEW = `CREATE MATERIALIZED VIEW exp_tokens_mv TO text_tokens AS
SELECT project_id, token, max(trace_start_hour) AS last_hour, max(ttl_days) AS ttl_days FROM text_postings GROUP BY project_id, token`;

const tokens = async () =>
  (
    await (
      await ch.query({
        query:
          'SELECT project_id, token, max(last_hour) AS h, max(ttl_days) AS t FROM text_tokens GROUP BY ALL ORDER BY ALL',
        format: 'JSONEachRow',
      })
    ).json()
  ).map((r) => JSON.stringify(r));
const times: Record<string, number[]> = { statement: [], view: [] };
let reference: string[] | undefined;
for (let round = 0; round < Number(args.rounds); round++)
  for (const way of ['statement', 'view'] as const) {
    for (const t of ['text_postings', 'text_tokens']) await ch.command({ query: `TRUNCATE TABLE ${t}` });
    await ch.command({ query: 'DROP VIEW IF EXISTS exp_tokens_mv' });
    if (way === 'view') await ch.command({ query: VIEW });
    const started = performance.now();
    await ch.command({ query: POSTINGS });
    if (way === 'statement') await ch.command({ query: TOKENS });
    times[way]!.push(performance.now() - started);
    const got = await tokens();
    reference ??= got;
    if (got.join('\n') !== reference.join('\n')) throw new Error(`${way}: the tokens differ`);
  }
console.log(`${N} spans, ${reference!.length} tokens, the same both ways`);
for (const [way, xs] of Object.entries(times))
  console.log(`${way}: ${median(xs).toFixed(0)} ms (runs ${xs.map((x) => x.toFixed(0)).join(', ')})`);
await ch.close();
