// Disk after heavy ingest (docs/operations.md, "Disk"): spans of the bench generator ingested through
// the API (POST /traces, 1,000-span batches, 4 in flight) into fresh embedded stores, then the
// ClickHouse directory's size (du) and its parts (system.parts) read right after the ingest, after
// the background merges settle, and after a final merge with the replaced parts dropped: the peak
// a disk must hold against the steady size the data keeps.
//
//   npx tsx bench/disk-peak.ts --spans 1000000 [--dir /tmp/sightline-disk]
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../src/config.js';
import { openRuntime, type Runtime } from '../src/runtime.js';
import { buildApiApp } from '../src/app.js';
import { generateSpans } from '../src/demo/generate-spans.js';
import { postIngestBodies } from './measure.js';
import { seedDemoAccount } from '../src/demo/seed.js';

const { values: args } = parseArgs({
  options: {
    spans: { type: 'string', default: '1000000' },
    dir: { type: 'string', default: 'bench/data/disk-peak' },
    settle: { type: 'string', default: '120' },
  },
});
const SPANS = Number(args.spans);
const DIR = path.resolve(args.dir);
const SETTLE_S = Number(args.settle);

function du(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

type Parts = { active_parts: number; active_bytes: number; old_parts: number; old_bytes: number };

async function parts(ctx: Runtime): Promise<Parts> {
  const result = await ctx.ch.client.query({
    query: `SELECT countIf(active) AS active_parts, sumIf(bytes_on_disk, active) AS active_bytes, countIf(NOT active) AS old_parts,
                   sumIf(bytes_on_disk, NOT active) AS old_bytes FROM system.parts WHERE database = currentDatabase()`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<Record<string, string>>();
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)])) as Parts;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  fs.rmSync(DIR, { recursive: true, force: true });
  fs.mkdirSync(DIR, { recursive: true });
  const ctx = await openRuntime(
    loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false', RATE_LIMIT_INGEST_PER_MINUTE: '10000000' }),
  );
  const api = buildApiApp(ctx);
  await api.listen({ port: 0, host: '127.0.0.1' });
  const demo = (await seedDemoAccount(ctx))!;
  const chDir = path.join(DIR, 'clickhouse');
  const empty = du(chDir);

  const now = Date.now();
  const url = `http://127.0.0.1:${(api.server.address() as AddressInfo).port}/api/v1/public/traces`;
  const started = performance.now();
  for (let done = 0; done < SPANS; done += 100_000) {
    const spans = generateSpans({
      traces: Math.ceil(100_000 / 7),
      startMs: now - 86_400_000,
      endMs: now,
      seed: done,
    }).slice(0, Math.min(100_000, SPANS - done));
    const bodies: string[] = [];
    for (let i = 0; i < spans.length; i += 1000)
      bodies.push(
        JSON.stringify({ spans: spans.slice(i, i + 1000).map((s) => ({ ...s, trace_id: `${done}-${s.trace_id}` })) }),
      );
    await postIngestBodies(url, demo.apiKey, bodies, 4);
    process.stdout.write(
      `\ringested ${(done + spans.length).toLocaleString()} spans in ${((performance.now() - started) / 1000).toFixed(0)} s   `,
    );
  }
  process.stdout.write('\n');
  const afterIngest = { du: du(chDir), ...(await parts(ctx)) };
  // Background merges: wait `SETTLE_S` seconds (replaced parts stay on disk for old_parts_lifetime, 8 min).
  await new Promise((resolve) => setTimeout(resolve, SETTLE_S * 1000));
  const settled = { du: du(chDir), ...(await parts(ctx)) };
  const tables = await (
    await ctx.ch.client.query({
      query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree'",
      format: 'JSONEachRow',
    })
  ).json<{ name: string }>();
  for (const { name } of tables) await ctx.ch.client.command({ query: `OPTIMIZE TABLE ${name} FINAL` });
  for (const { name } of tables)
    await ctx.ch.client.command({ query: `ALTER TABLE ${name} MODIFY SETTING old_parts_lifetime = 1` }).catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 15_000));
  const merged = { du: du(chDir), ...(await parts(ctx)) };
  await api.close();
  await ctx.close();

  const report = {
    spans: SPANS,
    empty_bytes: empty,
    after_ingest: afterIngest,
    after_settle_s: SETTLE_S,
    settled,
    merged,
  };
  console.log(JSON.stringify(report, null, 2));
  const out = path.resolve(
    'bench/results',
    `${new Date().toISOString().replace(/[:.]/g, '-')}-disk-peak-${SPANS}.json`,
  );
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(report, null, 2) + '\n');
  console.log(
    `disk (ClickHouse dir) for ${SPANS.toLocaleString()} spans: right after ingest ${mb(afterIngest.du - empty)} (${afterIngest.active_parts} active parts), ` +
      `after ${SETTLE_S} s of merges ${mb(settled.du - empty)}, fully merged ${mb(merged.du - empty)}: peak/steady ${((afterIngest.du - empty) / (merged.du - empty)).toFixed(1)}×`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
