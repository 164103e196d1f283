// Experiment (not a test): where a newest-first list's time goes, phase by phase (src/traces/service.ts
// chooseNewestPage and fetchItems): the hour counts (the total), the page read from the newest hours
// that hold it, and the fetch of the page's items, for each bench list case, runs interleaved.
//   DIR=/tmp/lists-10m WINDOWS=90 RUNS=5 npx tsx bench/experiments/list-phases.ts [case regex]
import fs from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { median } from '../measure.js';
import { LIST_CASES } from '../reference-queries.js';
import { parseFilters } from '../../src/traces/filters.js';
import { KEYS_LIMITS, answerLimits, LIST_PAGE_BYTES } from '../../src/traces/read-bounds.js';
import { fetchTracesQuery, hourCountsQuery, selectTracesQuery } from '../../src/traces/list-query.js';

const DIR = process.env.DIR ?? '/tmp/lists-10m';
const marker = JSON.parse(fs.readFileSync(`${DIR}/bench-dataset.json`, 'utf8')) as { projectIds: string[] };
const ctx = await openRuntime(loadConfig({ DATA_DIR: DIR, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
const runs = Number(process.env.RUNS ?? 5);
const windows = (process.env.WINDOWS ?? '90').split(',').map(Number);
const only = process.argv[2] ? new RegExp(process.argv[2]) : undefined;
const cases = LIST_CASES.filter((c) => !only || only.test(c.name));
const times = new Map<string, { counts: number[]; page: number[]; fetch: number[]; note: string }>();
const now = Date.now();
const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const out = await fn();
  return [out, performance.now() - t];
};
for (let i = 0; i < runs + 1; i++)
  for (const w of windows)
    for (const c of cases) {
      const params = {
        projectId: marker.projectIds[0]!,
        limit: 50,
        page: 0,
        includeEvaluations: false,
        startAfter: now - w * 86_400_000,
        filters: parseFilters(c.filters ? JSON.stringify(c.filters) : undefined),
        ...(c.search ? { searchQuery: c.search } : {}),
      };
      const [hours, tc] = await timed(() =>
        ctx.ch.rows<{ hour: number; n: string }>(hourCountsQuery(params, KEYS_LIMITS)),
      );
      const total = hours.reduce((s, h) => s + Number(h.n), 0);
      let held = 0;
      let from: number | undefined;
      for (const h of [...hours].sort((a, b) => Number(b.hour) - Number(a.hour))) {
        held += Number(h.n);
        if (held >= 50) {
          from = Number(h.hour);
          break;
        }
      }
      const [page, tp] = await timed(() =>
        ctx.ch.rows<{ trace_id: string; hour: number; start_ms: string }>(selectTracesQuery(params, KEYS_LIMITS, from)),
      );
      const keys = page.map((r) => ({ trace_id: r.trace_id, hour: Number(r.hour) }));
      const [, tf] = await timed(() =>
        ctx.ch.rows(fetchTracesQuery(params, keys, answerLimits(keys.length, LIST_PAGE_BYTES))),
      );
      const name = `${w}d ${c.name}`;
      const entry = times.get(name) ?? { counts: [], page: [], fetch: [], note: '' };
      if (i > 0) {
        entry.counts.push(tc);
        entry.page.push(tp);
        entry.fetch.push(tf);
      }
      entry.note = `total ${total}, page from ${from === undefined ? 'window start' : `${((now / 1000 - from) / 3600).toFixed(0)} h ago`}, ${new Set(keys.map((k) => k.hour)).size} hours`;
      times.set(name, entry);
    }
for (const [name, t] of times)
  console.log(
    `${name.padEnd(44)} counts ${median(t.counts).toFixed(1).padStart(6)}  page ${median(t.page).toFixed(1).padStart(6)}  fetch ${median(t.fetch).toFixed(1).padStart(6)} ms  (${t.note})`,
  );
await ctx.close();
process.exit(0);
