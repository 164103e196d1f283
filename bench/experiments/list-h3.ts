// Experiment (not a test): timings of candidate SQL for the 90-day trace list rows, interleaved.
//   DIR=/tmp/bench-lists-10m npx tsx bench/experiments/list-h3.ts sql file.sql ...
// Each file: `-- name: <label>` headers, one query after each. {p:String} is the bench data set's
// first project, {from:DateTime64(3)} the window start (WINDOW_DAYS, default 90). The queries run
// round-robin (one run of each in turn), so load drifts hit all alike; medians printed.
import fs from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { median } from '../measure.js';

const DIR = process.env.DIR ?? '/tmp/bench-lists-10m';
const marker = JSON.parse(fs.readFileSync(`${DIR}/bench-dataset.json`, 'utf8')) as { projectIds: string[] };
const ctx = await openRuntime(loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const [cmd, ...files] = process.argv.slice(2);
const runs = Number(process.env.RUNS ?? 7);
const days = Number(process.env.WINDOW_DAYS ?? 90);
const params = { p: marker.projectIds[0], from: (Date.now() - days * 86_400_000) / 1000 };
const params_from = () => Date.now() - days * 86_400_000;
if (cmd === 'exec') {
  for (const file of files)
    for (const query of fs
      .readFileSync(file, 'utf8')
      .split(/;\s*$/m)
      .filter((s) => s.trim())) {
      const t = performance.now();
      await ctx.ch.client.command({
        query,
        query_params: params,
        clickhouse_settings: { max_execution_time: 3600 } as never,
      });
      console.log(`${(performance.now() - t).toFixed(0)} ms: ${query.trim().slice(0, 100).replace(/\s+/g, ' ')}`);
    }
} else if (cmd === 'list') {
  // The whole list call (src/traces/service.ts listTraces: both phases, as the API runs them, less
  // HTTP) for each bench list case and window, before (BEFORE_SRC's service) and after, interleaved.
  const { LIST_CASES } = await import('../reference-queries.js');
  const { parseFilters } = await import('../../src/traces/filters.js');
  const after = await import('../../src/traces/service.js');
  const before = (await import(`${process.env.BEFORE_SRC ?? '/tmp/h3-main/src'}/traces/service.ts`)) as typeof after;
  const only = files[0] ? new RegExp(files[0]) : undefined;
  const cases = LIST_CASES.filter((c) => !only || only.test(c.name));
  const windows = (process.env.WINDOWS ?? '90').split(',').map(Number);
  const times = new Map<string, number[]>();
  const answers = new Map<string, string>();
  const now = Date.now();
  for (let i = 0; i < runs + 1; i++)
    for (const w of windows)
      for (const c of cases)
        for (const [label, mod] of [
          ['before', before],
          ['after', after],
        ] as const) {
          const params = {
            projectId: marker.projectIds[0]!,
            limit: 50,
            page: 0,
            includeEvaluations: false,
            startAfter: now - w * 86_400_000,
            filters: parseFilters(c.filters ? JSON.stringify(c.filters) : undefined),
            ...(c.search ? { searchQuery: c.search } : {}),
          };
          const t = performance.now();
          const page = await mod.listTraces(ctx as never, params);
          const ms = performance.now() - t;
          const name = `${w}d ${c.name} | ${label}`;
          if (i > 0) times.set(name, [...(times.get(name) ?? []), ms]);
          answers.set(name, JSON.stringify(page));
        }
  for (const w of windows)
    for (const c of cases) {
      const b = times.get(`${w}d ${c.name} | before`)!;
      const a = times.get(`${w}d ${c.name} | after`)!;
      const same = answers.get(`${w}d ${c.name} | before`) === answers.get(`${w}d ${c.name} | after`);
      const total = (JSON.parse(answers.get(`${w}d ${c.name} | after`)!) as { meta: { total: number } }).meta.total;
      console.log(
        `${String(w).padStart(2)}d ${c.name.padEnd(40)} before ${median(b).toFixed(1).padStart(7)} ms  after ${median(a).toFixed(1).padStart(7)} ms  ${(median(b) / median(a)).toFixed(2)}x  total ${total}  ${same ? 'same answer' : 'ANSWERS DIFFER'}`,
      );
    }
} else if (cmd === 'select') {
  // The list's phase-1 query (src/traces/list-query.ts) for each bench list case, before (BEFORE_SRC,
  // the same module of another checkout) and after (this one), interleaved. Totals must agree.
  const { LIST_CASES } = await import('../reference-queries.js');
  const { parseFilters } = await import('../../src/traces/filters.js');
  const { KEYS_LIMITS } = await import('../../src/traces/read-bounds.js');
  const after = await import('../../src/traces/list-query.js');
  const before = (await import(`${process.env.BEFORE_SRC ?? '/work/main/src'}/traces/list-query.ts`)) as typeof after;
  const only = files[0] ? new RegExp(files[0]) : undefined;
  const cases = LIST_CASES.filter((c) => !only || only.test(c.name));
  const times = new Map<string, number[]>();
  const totals = new Map<string, number>();
  for (let i = 0; i < runs + 1; i++)
    for (const c of cases)
      for (const [label, mod] of [
        ['before', before],
        ['after', after],
      ] as const) {
        const params = {
          projectId: marker.projectIds[0]!,
          limit: 50,
          page: 0,
          includeEvaluations: false,
          startAfter: params_from(),
          filters: parseFilters(c.filters ? JSON.stringify(c.filters) : undefined),
          ...(c.search ? { searchQuery: c.search } : {}),
        };
        const q = mod.selectTracesQuery(params, KEYS_LIMITS);
        const t = performance.now();
        const out = await (await ctx.ch.client.query({ ...q, format: 'JSONEachRow' })).json<{ total: string }>();
        const ms = performance.now() - t;
        const name = `${c.name} | ${label}`;
        if (i > 0) times.set(name, [...(times.get(name) ?? []), ms]);
        totals.set(name, Number(out[0]?.total ?? 0));
      }
  for (const c of cases) {
    const b = times.get(`${c.name} | before`)!;
    const a = times.get(`${c.name} | after`)!;
    const tb = totals.get(`${c.name} | before`);
    const ta = totals.get(`${c.name} | after`);
    console.log(
      `${days}d ${c.name.padEnd(40)} before ${median(b).toFixed(1).padStart(7)} ms  after ${median(a).toFixed(1).padStart(7)} ms  ${(median(b) / median(a)).toFixed(2)}x  totals ${tb}${tb === ta ? '' : ` != ${ta}`}`,
    );
  }
} else {
  const queries = files.flatMap((file) =>
    fs
      .readFileSync(file, 'utf8')
      .split(/^-- name: /m)
      .filter((s) => s.trim())
      .map((part) => {
        const [name, ...body] = part.split('\n');
        return { name: name!.trim(), query: body.join('\n').trim() };
      }),
  );
  const times = new Map<string, number[]>();
  const firsts = new Map<string, string>();
  for (let i = 0; i < runs + 1; i++)
    for (const q of queries) {
      const t = performance.now();
      const r = await ctx.ch.client.query({ query: q.query, query_params: params, format: 'JSONEachRow' });
      const out = await r.json<Record<string, unknown>>();
      const ms = performance.now() - t;
      if (i > 0) times.set(q.name, [...(times.get(q.name) ?? []), ms]);
      firsts.set(q.name, `rows ${out.length} first ${JSON.stringify(out[0])?.slice(0, 120)}`);
    }
  for (const q of queries)
    console.log(
      `${days}d ${q.name.padEnd(44)} p50 ${median(times.get(q.name)!).toFixed(1).padStart(7)} ms  ${firsts.get(q.name)}`,
    );
}
await ctx.close();
process.exit(0);
