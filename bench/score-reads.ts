// The score reads of issues 31 and 34 (trace list with score summaries and a `score` filter, SCORES
// widgets, the prompt version comparison), timed for two source trees in ONE process over one data
// set: the requests alternate between an API built from this tree and one built from `--baseline`
// (another checkout, e.g. /work/main), so both see the same machine load, and every answer of the
// two is compared (they must be identical).
//
//   npx tsx bench/score-reads.ts --baseline /work/main [--spans 1000000] [--runs 15] [--dir /tmp/score-reads]
//
// The data set (bench/scores.ts's scored traces and bench/prompts.ts's prompt spans) is kept in --dir
// and reused by the next run with the same --spans. The stores are opened by this tree (its migrations).
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { isDeepStrictEqual, parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { median, percentile } from './measure.js';
import { publicCall } from './bench-server.js';
import { loadScoredTraces } from './scores.js';
import { loadPromptSpans, PROMPT_NAME } from './prompts.js';

const DAY_MS = 86_400_000;

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    spans: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '15' },
    dir: { type: 'string', default: '/tmp/score-reads' },
    only: { type: 'string' },
  },
});

type Saved = {
  spans: number;
  token: string;
  scores: { id: string; key: string };
  prompts: { id: string; key: string };
};

async function main() {
  const spans = Number(args.spans);
  const runs = Number(args.runs);
  const dir = path.resolve(args.dir);
  const savedFile = path.join(dir, 'score-reads.json');
  let saved: Saved | undefined = fs.existsSync(savedFile) ? JSON.parse(fs.readFileSync(savedFile, 'utf8')) : undefined;
  if (saved && saved.spans !== spans) {
    fs.rmSync(dir, { recursive: true, force: true });
    saved = undefined;
  }
  const { loadConfig } = await import('../src/config.js');
  const { openRuntime } = await import('../src/runtime.js');
  const { buildApiApp } = await import('../src/app.js');
  const { buildWebApp } = await import('../src/web/app.js');
  const ctx = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
  const mine = buildApiApp(ctx);
  const apps: { name: string; api: FastifyInstance }[] = [{ name: 'this tree', api: mine }];
  if (args.baseline) {
    const base = path.resolve(args.baseline);
    const { buildApiApp: buildBase } = await import(path.join(base, 'src/app.ts'));
    apps.unshift({ name: `baseline (${base})`, api: buildBase(ctx) });
  }
  const web = buildWebApp(ctx);
  await Promise.all([...apps.map((a) => a.api.ready()), web.ready()]);
  try {
    if (!saved) {
      const signup = (
        await web.inject({
          method: 'POST',
          url: '/api/auth/signup',
          payload: { email: `bench-${Date.now()}@sightline.local`, password: 'bench password 1', name: 'Bench' },
        })
      ).json();
      const project = async (name: string) => {
        const p = await publicCall(mine, 'POST', '/projects', signup.session_token, {
          name,
          workspace_id: signup.workspace.id,
          trace_ttl_days: 365,
        });
        const key = (
          await publicCall(mine, 'POST', `/projects/${p.id}/api-keys`, signup.session_token, { name: 'bench' })
        ).key;
        return { id: p.id as string, key: key as string };
      };
      const scores = await project('score reads');
      const prompts = await project('prompt reads');
      const t0 = performance.now();
      await loadScoredTraces(ctx, scores.id, spans);
      for (let v = 1; v <= 5; v++)
        await publicCall(mine, 'POST', `/prompts?project_id=${prompts.id}`, signup.session_token, {
          name: PROMPT_NAME,
          type: 'text',
          prompt: `v${v}: answer {{question}}`,
        });
      await loadPromptSpans(ctx, prompts.id, spans);
      console.log(`loaded ${spans} spans twice in ${Math.round(performance.now() - t0)} ms`);
      saved = { spans, token: signup.session_token, scores, prompts };
      fs.writeFileSync(savedFile, JSON.stringify(saved));
    }
    const s = saved!;
    // One window for every request of the run, so the answers of the two trees can be compared.
    const now = Date.now();
    const startAfter = new Date(now - 90 * DAY_MS).toISOString();
    const listed = (filters?: unknown[]) =>
      `/traces?${new URLSearchParams({ start_after: startAfter, limit: '50', ...(filters ? { filters: JSON.stringify(filters) } : {}) })}`;
    const widget = (spec: Record<string, unknown>, range = '90d', type = 'timeseries') => ({
      type,
      start_time: new Date(now - (range === '1h' ? 3_600_000 : 90 * DAY_MS)).toISOString(),
      end_time: new Date(now).toISOString(),
      spec: { view: 'SCORES', score_name: 'helpfulness', measure: 'value', aggregation: 'avg', ...spec },
    });
    const window = `start_time=${startAfter}&end_time=${new Date(now).toISOString()}`;
    type Case = { name: string; target?: number; key: string; method: 'GET' | 'POST'; url: string; payload?: unknown };
    const cases: Case[] = [
      { name: 'list + score summaries, 90d', target: 100, key: s.scores.key, method: 'GET', url: listed() },
      {
        name: 'list, score filter helpfulness < 0.1, 90d',
        target: 100,
        key: s.scores.key,
        method: 'GET',
        url: listed([{ field: 'score', key: 'helpfulness', op: 'lt', value: 0.1 }]),
      },
      {
        name: 'list, score filter tone in [rude], 90d',
        key: s.scores.key,
        method: 'GET',
        url: listed([{ field: 'score', key: 'tone', op: 'in', value: ['rude'] }]),
      },
      {
        name: 'list, score filter toxicity is_not_set, 90d',
        key: s.scores.key,
        method: 'GET',
        url: listed([{ field: 'score', key: 'toxicity', op: 'is_not_set' }]),
      },
      {
        name: 'SCORES widget, hourly avg, 90d',
        target: 300,
        key: s.scores.key,
        method: 'POST',
        url: '/widgets/query',
        payload: widget({ interval: '1h' }),
      },
      {
        name: 'SCORES widget, daily avg by metadata.tenant, 90d',
        key: s.scores.key,
        method: 'POST',
        url: '/widgets/query',
        payload: widget({ interval: '1d', group_by: ['metadata.tenant'] }),
      },
      {
        name: 'SCORES widget, hourly avg, one tenant, 90d',
        target: 300,
        key: s.scores.key,
        method: 'POST',
        url: '/widgets/query',
        payload: widget({
          interval: '1h',
          filters: [{ field: 'metadata', key: 'tenant', op: 'eq', value: 'tenant-3' }],
        }),
      },
      {
        name: 'SCORES widget, p90 by score_source, 90d',
        key: s.scores.key,
        method: 'POST',
        url: '/widgets/query',
        payload: widget({ aggregation: 'p90', group_by: ['score_source'] }, '90d', 'table'),
      },
      {
        name: 'SCORES alert read, 1h avg by metadata.tenant',
        key: s.scores.key,
        method: 'POST',
        url: '/widgets/query',
        payload: widget({ group_by: ['metadata.tenant'] }, '1h', 'table'),
      },
      {
        name: 'GET /scores name=tone, newest 50',
        key: s.scores.key,
        method: 'GET',
        url: `/scores?name=tone&limit=50`,
      },
      { name: 'GET /traces/st-7 (detail with scores)', key: s.scores.key, method: 'GET', url: '/traces/st-7' },
      {
        name: 'prompt version comparison, 90d',
        target: 300,
        key: s.prompts.key,
        method: 'GET',
        url: `/prompts/${encodeURIComponent(PROMPT_NAME)}/metrics?${window}`,
      },
    ];
    console.log(
      `load average before: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    const lines: string[] = [];
    for (const c of cases) {
      if (args.only && !c.name.includes(args.only)) continue;
      const answers: unknown[] = [];
      for (const a of apps) answers.push(await publicCall(a.api, c.method, c.url, c.key, c.payload));
      const same = answers.every((x) => isDeepStrictEqual(x, answers[0]));
      if (!same) {
        fs.writeFileSync(path.join(dir, 'differ.json'), JSON.stringify(answers, null, 1));
        console.log(`ANSWERS DIFFER: ${c.name} (written to ${path.join(dir, 'differ.json')})`);
      }
      const times = apps.map(() => [] as number[]);
      for (let i = 0; i < runs; i++) {
        // Alternate which tree goes first.
        const order = i % 2 ? [...apps.keys()].reverse() : [...apps.keys()];
        for (const k of order) {
          const t = performance.now();
          await publicCall(apps[k]!.api, c.method, c.url, c.key, c.payload);
          times[k]!.push(performance.now() - t);
        }
      }
      const cells = apps.map(
        (a, k) => `${a.name}: p50 ${median(times[k]!).toFixed(1)} ms, p95 ${percentile(times[k]!, 95).toFixed(1)}`,
      );
      const ratio = apps.length === 2 ? `, ratio ${(median(times[0]!) / median(times[1]!)).toFixed(1)}x` : '';
      const line = `${c.name}${c.target ? ` (target <= ${c.target} ms)` : ''}: ${cells.join(' | ')}${ratio}${same ? '' : ' ANSWERS DIFFER'}`;
      console.log(line);
      lines.push(line);
    }
    console.log(
      `load average after: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    await Promise.all([...apps.map((a) => a.api.close()), web.close()]);
    await ctx.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
