import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { api, isNotFound } from '../../api';
import { useProject } from '../../project';
import { RANGE_PRESETS } from '../../widget-spec';
import { TimeRange, type TimeValue } from '../../components/time-range';
import { Badge, ErrorBox, Loading, NotFound, Time, useTitle } from '../../components/ui';
import { WidgetBody } from '../../components/widget-view';
import type { Dashboard, DashboardData, Widget } from '../../types';
import { WidgetEditor, type WindowQuery } from './widget-editor';
import { SampledBanner } from '../sampling';

const DEFAULT_RANGE = '1d';

/** `/projects/{project_id}/dashboards/{dashboard_id}`: every widget for a range preset or explicit bounds (in the URL). */
export function DashboardPage() {
  const { projectId, canWrite } = useProject();
  const { dashboardId = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [editing, setEditing] = useState<Widget | 'new' | null>(null);
  const from = params.get('from');
  const to = params.get('to');
  const time: TimeValue =
    from && to ? { range: null, from, to } : { range: params.get('range') ?? DEFAULT_RANGE, from: null, to: null };
  const win: WindowQuery = time.range ? { range: time.range } : { start_time: time.from!, end_time: time.to! };

  const dashboard = useQuery({
    queryKey: ['dashboard', projectId, dashboardId],
    queryFn: ({ signal }) =>
      api<Dashboard>(`/dashboards/${encodeURIComponent(dashboardId)}`, { signal, query: { project_id: projectId } }),
  });
  const data = useQuery({
    queryKey: ['dashboard-data', projectId, dashboardId, win],
    enabled: dashboard.isSuccess,
    placeholderData: keepPreviousData,
    queryFn: ({ signal }) =>
      api<DashboardData>(`/dashboards/${encodeURIComponent(dashboardId)}/data`, {
        signal,
        query: { project_id: projectId, ...win },
      }),
  });
  useTitle(dashboard.data?.name ?? 'Dashboard');
  const removeWidget = useMutation({
    mutationFn: (id: string) =>
      api(`/widgets/${encodeURIComponent(id)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['dashboard', projectId, dashboardId] }),
  });
  const removeDashboard = useMutation({
    mutationFn: () =>
      api(`/dashboards/${encodeURIComponent(dashboardId)}`, { method: 'DELETE', query: { project_id: projectId } }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['dashboards', projectId] });
      navigate(`/projects/${projectId}/dashboards`);
    },
  });

  if (dashboard.isPending) return <Loading rows={6} />;
  if (dashboard.error) {
    if (isNotFound(dashboard.error))
      return (
        <NotFound what="dashboard" back={{ to: `/projects/${projectId}/dashboards`, label: 'Back to dashboards' }} />
      );
    return <ErrorBox error={dashboard.error} />;
  }
  const d = dashboard.data;
  const answers = new Map((data.data?.widgets ?? []).map((w) => [w.id, w]));
  const setTime = (t: TimeValue) =>
    setParams(t.range ? (t.range === DEFAULT_RANGE ? {} : { range: t.range }) : { from: t.from!, to: t.to! });
  return (
    <div className="page">
      <div className="page-head">
        <div style={{ minWidth: 0 }}>
          <div className="crumbs">
            <Link to={`/projects/${projectId}/dashboards`}>Dashboards</Link> /
          </div>
          <h1>
            {d.name} {d.is_default && <Badge tone="info">default</Badge>}
          </h1>
          {d.description && <div className="muted">{d.description}</div>}
          {data.data && (
            <div className="muted" data-testid="dashboard-window">
              <Time iso={data.data.window.start_time} /> – <Time iso={data.data.window.end_time} />
              {data.data.window.clamped && ' · start moved forward to the project’s retention'}
              {data.data.failed > 0 && (
                <span style={{ color: 'var(--error)' }}> · {data.data.failed} widget(s) failed</span>
              )}
              {data.isFetching && ' · updating…'}
            </div>
          )}
        </div>
        <div className="row">
          <TimeRange presets={RANGE_PRESETS} value={time} onChange={setTime} />
          {canWrite && (
            <button className="primary" onClick={() => setEditing('new')}>
              Add widget
            </button>
          )}
        </div>
      </div>
      <SampledBanner />
      {data.error && <ErrorBox error={data.error} title="The dashboard's data could not be read" />}
      {d.widgets.length === 0 ? (
        <div className="empty">
          <strong>This dashboard has no widgets yet</strong>
          {canWrite && (
            <div>
              <button className="primary" onClick={() => setEditing('new')}>
                Add the first widget
              </button>
            </div>
          )}
        </div>
      ) : (
        <div className="widget-grid">
          {d.widgets.map((w) => {
            const answer = answers.get(w.id);
            return (
              <section
                key={w.id}
                className={`widget${answer?.status === 'error' ? ' failed' : ''}`}
                data-testid="widget"
                aria-label={w.title}
              >
                <div className="widget-head">
                  <h3 title={w.title}>{w.title}</h3>
                  {canWrite && (
                    <div className="widget-actions">
                      <button className="small ghost" onClick={() => setEditing(w)} aria-label={`Edit ${w.title}`}>
                        Edit
                      </button>
                      <button
                        className="small ghost danger"
                        aria-label={`Delete ${w.title}`}
                        onClick={() => confirm(`Delete the widget “${w.title}”?`) && removeWidget.mutate(w.id)}
                      >
                        Delete
                      </button>
                    </div>
                  )}
                </div>
                <WidgetBody type={w.type} spec={w.spec} answer={w.type === 'markdown' ? undefined : answer} />
              </section>
            );
          })}
        </div>
      )}
      {canWrite && !d.is_default && (
        <div>
          <button
            className="danger small"
            onClick={() => confirm(`Delete the dashboard “${d.name}” and its widgets?`) && removeDashboard.mutate()}
          >
            Delete dashboard
          </button>
        </div>
      )}
      {editing && (
        <WidgetEditor
          projectId={projectId}
          dashboardId={dashboardId}
          widget={editing === 'new' ? undefined : editing}
          window={win}
          onClose={() => setEditing(null)}
        />
      )}
    </div>
  );
}
