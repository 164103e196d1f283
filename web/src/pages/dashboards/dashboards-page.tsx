import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, ApiError } from '../../api';
import { useProject } from '../../project';
import { Badge, Empty, ErrorBox, Loading, Modal, Time, useTitle } from '../../components/ui';
import type { DashboardItem } from '../../types';
import { SampledBanner } from '../sampling';

export function DashboardsPage() {
  const { projectId, project, canWrite } = useProject();
  useTitle(`Dashboards · ${project.name}`);
  const client = useQueryClient();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const dashboards = useQuery({
    queryKey: ['dashboards', projectId],
    queryFn: ({ signal }) =>
      api<{ data: DashboardItem[] }>('/dashboards', { signal, query: { project_id: projectId } }),
  });
  const create = useMutation({
    mutationFn: (body: { name: string; description: string }) =>
      api<{ id: string }>('/dashboards', { method: 'POST', body: { project_id: projectId, ...body } }),
    onSuccess: async (created) => {
      await client.invalidateQueries({ queryKey: ['dashboards', projectId] });
      navigate(`/projects/${projectId}/dashboards/${created.id}`);
    },
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Dashboards</h1>
          <div className="muted">Charts over your spans and traces, for any window from 30 minutes to 90 days.</div>
        </div>
        {canWrite && (
          <button className="primary" onClick={() => setCreating(true)}>
            New dashboard
          </button>
        )}
      </div>
      <SampledBanner />
      {dashboards.isPending ? (
        <Loading />
      ) : dashboards.error ? (
        <ErrorBox error={dashboards.error} />
      ) : dashboards.data.data.length === 0 ? (
        <Empty title="No dashboards" />
      ) : (
        <div className="table-wrap">
          <table className="data" data-testid="dashboard-table">
            <thead>
              <tr>
                <th>Name</th>
                <th className="num">Widgets</th>
                <th className="hide-phone">Created by</th>
                <th>Updated</th>
              </tr>
            </thead>
            <tbody>
              {dashboards.data.data.map((d) => (
                <tr
                  key={d.id}
                  className="clickable"
                  onClick={() => navigate(`/projects/${projectId}/dashboards/${d.id}`)}
                >
                  <td>
                    <Link to={`/projects/${projectId}/dashboards/${d.id}`} onClick={(e) => e.stopPropagation()}>
                      {d.name}
                    </Link>{' '}
                    {d.is_default && <Badge tone="info">default</Badge>}
                    {d.description && <div className="muted">{d.description}</div>}
                  </td>
                  <td className="num">{d.widget_count}</td>
                  <td className="hide-phone">{d.creator ?? <span className="muted">–</span>}</td>
                  <td className="nowrap">
                    <Time iso={d.update_time} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {creating && (
        <Modal title="New dashboard" onClose={() => setCreating(false)}>
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              const form = new FormData(e.currentTarget);
              create.mutate({ name: String(form.get('name')), description: String(form.get('description') ?? '') });
            }}
          >
            {create.error && (
              <p className="form-error">
                {create.error instanceof ApiError ? create.error.detail : String(create.error)}
              </p>
            )}
            <label>
              Name
              <input name="name" required maxLength={200} />
            </label>
            <label>
              Description
              <textarea name="description" rows={3} maxLength={2000} style={{ fontFamily: 'inherit' }} />
            </label>
            <button className="primary" type="submit" disabled={create.isPending}>
              Create
            </button>
          </form>
        </Modal>
      )}
    </div>
  );
}
