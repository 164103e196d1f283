// Experiment (not a test): how much of what the views on `spans` cost is per insert and how much per
// span. Inserts the same spans (from a Memory table: no JSON parsing) into `spans` in blocks of each
// size, with no view, every view, and each view fed by `spans` alone and with the views chained on
// its target; background merges stopped, so only the insert's own work is timed. Medians of the
// rounds, process CPU (engine threads included) and wall per insert.
//
//   npx tsx bench/experiments/ingest-view-fixed-cost.ts [--corpus realistic|default] [--batches 50,1000] [--reps 7]
//
// 2026-11-28, realistic corpus, load average 6: all views 120 ms CPU an insert of 50 spans, 165 ms of
// 1,000 (no view: 11 and 30): the views' work is mostly a fixed cost per insert and per view
// (docs/scaling.md, "Ingest after issue 22").
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { createChdbConnection } from 'chdb/connection';
import { clickHouseMigrations, ROOT_DIR } from '../../src/stores/migrate.js';
import { corpusSpans, type CorpusName } from '../corpus.js';
import { validateSpans } from '../../src/traces/span-input.js';
import { median } from '../measure.js';

const { values: args } = parseArgs({
  options: {
    corpus: { type: 'string', default: 'realistic' },
    batches: { type: 'string', default: '50,1000' },
    reps: { type: 'string', default: '7' },
    dir: { type: 'string', default: '/tmp/sightline-exp-view-fixed-cost' },
    settings: { type: 'string', default: '' },
    migrations: { type: 'string', default: path.join(ROOT_DIR, 'clickhouse') },
  },
});
fs.rmSync(args.dir, { recursive: true, force: true });
fs.mkdirSync(args.dir, { recursive: true });
const ch: ClickHouseClient = createClient({
  connection: createChdbConnection({ path: path.join(args.dir, 'clickhouse') }),
} as Parameters<typeof createClient>[0]);
for (const m of clickHouseMigrations(args.migrations)) for (const s of m.statements) await ch.command({ query: s });
const sizes = args.batches.split(',').map(Number);
const stamp = Date.now();
const spans = corpusSpans(args.corpus as CorpusName, {
  spans: Math.max(...sizes) * 3,
  startMs: stamp - 86_400_000,
  endMs: stamp,
  seed: 7,
});
const rows = validateSpans(spans.slice(Math.max(...sizes))).accepted.map((s) => ({
  ...s,
  project_id: 'p',
  trace_start_hour: Math.floor(s.start_time / 3_600_000) * 3600,
  ttl_days: 30,
}));
for (const n of sizes) {
  await ch.command({ query: `CREATE TABLE mem_${n} AS spans ENGINE = Memory` });
  await ch.insert({ table: `mem_${n}`, values: rows.slice(0, n), format: 'JSONEachRow' });
}
await ch.command({ query: 'SYSTEM STOP MERGES' });
const r = await ch.query({
  query:
    "SELECT name, as_select AS q, create_table_query AS c FROM system.tables WHERE database = currentDatabase() AND engine = 'MaterializedView'",
  format: 'JSONEachRow',
});
const all = (await r.json<{ name: string; q: string; c: string }>()).map((v) => ({
  name: v.name,
  to: /\bTO (?:\w+\.)?(\w+)/.exec(v.c)![1]!,
  from: [...v.q.matchAll(/\bFROM (?:\w+\.)?(\w+)/g)].map((m) => m[1]!),
}));
const chain = (t: string): string[] => all.filter((v) => v.from.includes(t)).flatMap((v) => [v.name, ...chain(v.to)]);
const top = all.filter((v) => v.from.includes('spans'));
const configs: Record<string, string[]> = { none: [], all: all.map((v) => v.name) };
for (const v of top) {
  configs[`${v.name} alone`] = [v.name];
  if (chain(v.to).length) configs[`${v.name} + chain`] = [v.name, ...chain(v.to)];
}
const attached = new Set(all.map((v) => v.name));
const setViews = async (want: string[]) => {
  for (const v of [...attached])
    if (!want.includes(v)) {
      await ch.command({ query: `DETACH TABLE ${v}` });
      attached.delete(v);
    }
  for (const v of want)
    if (!attached.has(v)) {
      await ch.command({ query: `ATTACH TABLE ${v}` });
      attached.add(v);
    }
};
const timeIt = async (fn: () => Promise<unknown>) => {
  const c = process.cpuUsage();
  const t = performance.now();
  await fn();
  const u = process.cpuUsage(c);
  return [performance.now() - t, (u.user + u.system) / 1000];
};
const res: Record<string, [number[], number[]]> = {};
const settings = args.settings ? `SETTINGS ${args.settings}` : '';
for (let i = 0; i < Number(args.reps); i++)
  for (const [name, views] of Object.entries(configs)) {
    await setViews(views);
    for (const n of sizes) {
      const [w, c] = await timeIt(() => ch.command({ query: `INSERT INTO spans ${settings} SELECT * FROM mem_${n}` }));
      const k = `${name} @${n}`;
      res[k] ??= [[], []];
      res[k][0].push(w!);
      res[k][1].push(c!);
    }
  }
for (const [k, [w, c]] of Object.entries(res))
  console.log(
    `${k.padEnd(50)} wall ${median(w).toFixed(1).padStart(7)} ms  cpu ${median(c).toFixed(1).padStart(7)} ms`,
  );
await ch.close();
