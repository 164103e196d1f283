import { useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from '../api';
import { useProject } from '../project';
import { ErrorBox, Loading, useTitle } from '../components/ui';
import { TimeChart, type Series } from '../components/time-chart';
import { fmtCost, fmtInt } from '../format';
import type { ProjectUsage, UsageDay, WorkspaceUsage } from '../types';

/**
 * Usage (docs/producer-controls.md, "Usage"): the project's day by day (GET /projects/{id}/usage) in a
 * chart of the chosen measure and a table of every measure, its storage on disk now, and the workspace's
 * total with each project's share (GET /workspaces/{id}/usage; its members see it).
 */

const WINDOWS = [7, 30, 90] as const;
const DAY_MS = 86_400_000;

type Measure = Exclude<keyof UsageDay, 'date'>;
const MEASURES: [Measure, string][] = [
  ['spans', 'Spans'],
  ['traces', 'Traces'],
  ['bytes', 'Bytes sent'],
  ['sampled_out_spans', 'Sampled-out spans'],
  ['masked_values', 'Masked values'],
  ['scores', 'Scores'],
  ['judge_calls', 'Judge calls'],
  ['judge_cost', 'Judge cost'],
];

export function fmtBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${u === 0 ? Math.round(v) : v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

function fmtMeasure(measure: Measure): (v: number | null) => string {
  if (measure === 'bytes') return fmtBytes;
  if (measure === 'judge_cost') return fmtCost;
  return fmtInt;
}

function total(days: UsageDay[], measure: Measure): number {
  return days.reduce((sum, d) => sum + d[measure], 0);
}

/** The window's query: whole UTC days, today included. */
function windowOf(days: number): { start_time: string; end_time: string } {
  const end = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS;
  return { start_time: new Date(end - days * DAY_MS).toISOString(), end_time: new Date(end).toISOString() };
}

export function UsagePage() {
  const { project, projectId } = useProject();
  useTitle(`Usage · ${project.name}`);
  const [days, setDays] = useState<(typeof WINDOWS)[number]>(30);
  const [measure, setMeasure] = useState<Measure>('spans');
  const query = useMemo(() => windowOf(days), [days]);
  const usage = useQuery({
    queryKey: ['usage', projectId, days],
    queryFn: () => api<ProjectUsage>(`/projects/${projectId}/usage`, { query }),
  });
  const workspace = useQuery({
    queryKey: ['workspace-usage', project.workspace_id, days],
    queryFn: () => api<WorkspaceUsage>(`/workspaces/${project.workspace_id}/usage`, { query }),
  });
  const format = fmtMeasure(measure);
  const chart = useMemo(() => {
    const data = usage.data?.data ?? [];
    const times = data.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000);
    const series: Series[] = [
      { label: MEASURES.find(([m]) => m === measure)![1], values: data.map((d) => d[measure]) },
    ];
    return { times, series };
  }, [usage.data, measure]);

  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Usage</h1>
          <div className="muted">
            {project.name} · {project.workspace_name} · per UTC day
          </div>
        </div>
        <div className="row">
          <label>
            Window
            <select
              aria-label="Window"
              value={days}
              onChange={(e) => setDays(Number(e.target.value) as (typeof WINDOWS)[number])}
            >
              {WINDOWS.map((d) => (
                <option key={d} value={d}>
                  Last {d} days
                </option>
              ))}
            </select>
          </label>
        </div>
      </div>
      {usage.isPending ? (
        <Loading />
      ) : usage.error ? (
        <ErrorBox error={usage.error} />
      ) : (
        <section className="stack">
          <div className="card stack">
            <div className="row">
              <label>
                Measure
                <select aria-label="Measure" value={measure} onChange={(e) => setMeasure(e.target.value as Measure)}>
                  {MEASURES.map(([m, label]) => (
                    <option key={m} value={m}>
                      {label}
                    </option>
                  ))}
                </select>
              </label>
              <div className="muted grow" data-testid="usage-total">
                {format(total(usage.data.data, measure))} in {days} days · storage on disk now{' '}
                <strong data-testid="usage-storage">{fmtBytes(usage.data.storage_bytes)}</strong>
              </div>
            </div>
            <TimeChart times={chart.times} series={chart.series} format={format} />
          </div>
          <div className="table-wrap">
            <table className="data" data-testid="usage-table">
              <thead>
                <tr>
                  <th>Day (UTC)</th>
                  {MEASURES.map(([m, label]) => (
                    <th key={m} className="num">
                      {label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {[...usage.data.data].reverse().map((d) => (
                  <tr key={d.date}>
                    <td>{d.date}</td>
                    {MEASURES.map(([m]) => (
                      <td key={m} className="num">
                        {fmtMeasure(m)(d[m])}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      <section className="stack">
        <h2>Workspace {project.workspace_name}</h2>
        {workspace.isPending ? (
          <Loading rows={2} />
        ) : workspace.error ? (
          <ErrorBox error={workspace.error} title="The workspace's usage could not be read" />
        ) : (
          <div className="table-wrap">
            <table className="data" data-testid="workspace-usage-table">
              <thead>
                <tr>
                  <th>Project</th>
                  <th className="num">Spans</th>
                  <th className="num">Traces</th>
                  <th className="num">Bytes sent</th>
                  <th className="num">Sampled out</th>
                  <th className="num">Judge cost</th>
                  <th className="num">Storage</th>
                </tr>
              </thead>
              <tbody>
                {workspace.data.projects.map((p) => (
                  <tr key={p.project_id} data-testid="workspace-usage-project">
                    <td>{p.name}</td>
                    <td className="num">{fmtInt(total(p.data, 'spans'))}</td>
                    <td className="num">{fmtInt(total(p.data, 'traces'))}</td>
                    <td className="num">{fmtBytes(total(p.data, 'bytes'))}</td>
                    <td className="num">{fmtInt(total(p.data, 'sampled_out_spans'))}</td>
                    <td className="num">{fmtCost(total(p.data, 'judge_cost'))}</td>
                    <td className="num">{fmtBytes(p.storage_bytes)}</td>
                  </tr>
                ))}
                <tr data-testid="workspace-usage-total">
                  <td>
                    <strong>Total</strong>
                  </td>
                  <td className="num">{fmtInt(total(workspace.data.data, 'spans'))}</td>
                  <td className="num">{fmtInt(total(workspace.data.data, 'traces'))}</td>
                  <td className="num">{fmtBytes(total(workspace.data.data, 'bytes'))}</td>
                  <td className="num">{fmtInt(total(workspace.data.data, 'sampled_out_spans'))}</td>
                  <td className="num">{fmtCost(total(workspace.data.data, 'judge_cost'))}</td>
                  <td className="num">{fmtBytes(workspace.data.storage_bytes)}</td>
                </tr>
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
