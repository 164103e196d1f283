import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../src/runtime.js';
import { queryWidget, resolveWindow } from '../src/widgets/data.js';
import { OVERVIEW_WIDGETS } from '../src/widgets/spec.js';
import { median, percentile, time, type Row } from './measure.js';

/**
 * Dashboard rows of the benchmark: the default "Overview" dashboard of a project through the API
 * over 1d/7d/30d/90d, and its widgets read from the rollups against the same widgets read from raw
 * spans (90d).
 */
export async function benchDashboards(ctx: Runtime, api: FastifyInstance, key: string, projectId: string, runs: number, rows: Row[], label = '') {
  const list = await api.inject({ method: 'GET', url: '/api/v1/public/dashboards', headers: { authorization: `Bearer ${key}` } });
  const overview = (list.json() as { data: { id: string; is_default: boolean }[] }).data.find((d) => d.is_default);
  if (!overview) throw new Error(`no default dashboard: ${list.body.slice(0, 200)}`);
  const out: Record<string, unknown> = {};
  for (const range of ['1d', '7d', '30d', '90d']) {
    const times: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const ms = await time(async () => {
        const res = await api.inject({ method: 'GET', url: `/api/v1/public/dashboards/${overview.id}/data?range=${range}`, headers: { authorization: `Bearer ${key}` } });
        if (res.statusCode !== 200) throw new Error(`dashboard data ${range}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        const body = res.json() as { failed: number; widgets: { error: string }[] };
        if (body.failed) throw new Error(`dashboard data ${range}: ${body.widgets.map((w) => w.error).join('; ')}`);
      });
      if (i >= 2) times.push(ms);
    }
    out[range] = { p50_ms: median(times), p95_ms: percentile(times, 95) };
    rows.push({ work: `default dashboard ${range}${label} (7 widgets)`, api: `p50 ${median(times).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`, reference: '', ratio: '', target: range === '90d' ? 'p50 ≤ 300 ms' : '' });
  }
  const window = resolveWindow({ range: '90d' }, Date.now(), 3650);
  const pathTimes = async (raw: boolean) => {
    const times: number[] = [];
    for (let i = 0; i < Math.max(3, Math.floor(runs / 2)) + 1; i++) {
      const ms = await time(async () => {
        for (const w of OVERVIEW_WIDGETS) await queryWidget(ctx, projectId, w.type, w.spec, window, { raw });
      });
      if (i >= 1) times.push(ms);
    }
    return median(times);
  };
  const rollup = await pathTimes(false);
  const raw = await pathTimes(true);
  rows.push({ work: `Overview widgets 90d${label}: rollups vs raw spans`, api: `${rollup.toFixed(1)} ms`, reference: `${raw.toFixed(1)} ms (raw)`, ratio: `${(raw / rollup).toFixed(1)}× faster`, target: '' });
  out.rollup_vs_raw_90d = { rollup_ms: rollup, raw_ms: raw };
  return out;
}
