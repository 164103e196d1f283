import { useState } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router';
import { api, ApiError } from '../../api';
import { FilterBar } from '../../components/filter-bar';
import { useProject } from '../../project';
import { fmtInt } from '../../format';
import { Empty, ErrorBox, Loading, useTitle } from '../../components/ui';
import type { AnnotationQueue, Page, Predicate, ScoreConfig } from '../../types';

/** `/projects/{id}/annotation`: the annotation queues, their progress, and a form for a new one. */
export function AnnotationQueuesPage() {
  const { projectId, project, canWrite } = useProject();
  useTitle(`Annotation · ${project.name}`);
  const [creating, setCreating] = useState(false);
  const queues = useQuery({
    queryKey: ['annotation-queues', projectId],
    queryFn: ({ signal }) =>
      api<Page<AnnotationQueue>>('/annotation-queues', { signal, query: { project_id: projectId, limit: 200 } }),
  });
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Annotation queues</h1>
          <div className="muted">Traces for people to score with the queue’s score configs.</div>
        </div>
        {canWrite && !creating && (
          <button className="primary" onClick={() => setCreating(true)}>
            New queue
          </button>
        )}
      </div>
      {creating && <NewQueueForm onCancel={() => setCreating(false)} />}
      {queues.isPending ? (
        <Loading rows={4} />
      ) : queues.error ? (
        <ErrorBox error={queues.error} />
      ) : queues.data.data.length === 0 ? (
        <Empty title="No annotation queues yet">Make one from a filter of the trace list.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" data-testid="queue-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Description</th>
                <th>Done</th>
                <th>Left</th>
              </tr>
            </thead>
            <tbody>
              {queues.data.data.map((q) => (
                <tr key={q.id}>
                  <td>
                    <Link to={`/projects/${projectId}/annotation/${q.id}`}>{q.name}</Link>
                  </td>
                  <td className="muted">{q.description}</td>
                  <td>{fmtInt(q.completed)}</td>
                  <td>{fmtInt(q.pending)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

const WINDOWS = [
  ['1', 'Last 24 hours'],
  ['7', 'Last 7 days'],
  ['30', 'Last 30 days'],
  ['', 'Any time'],
] as const;

/** A queue from a filter of the trace list: its score configs, then the traces the filter gives. */
function NewQueueForm({ onCancel }: { onCancel: () => void }) {
  const { projectId } = useProject();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [configIds, setConfigIds] = useState<string[]>([]);
  const [filters, setFilters] = useState<Predicate[]>([]);
  const [days, setDays] = useState('7');
  const [limit, setLimit] = useState(100);
  const configs = useQuery({
    queryKey: ['score-configs', projectId],
    queryFn: ({ signal }) =>
      api<Page<ScoreConfig>>('/score-configs', { signal, query: { project_id: projectId, limit: 200 } }),
  });
  const create = useMutation({
    mutationFn: async () => {
      const queue = await api<AnnotationQueue>('/annotation-queues', {
        method: 'POST',
        body: { project_id: projectId, name, description: description || null, score_config_ids: configIds },
      });
      await api(`/annotation-queues/${queue.id}/items`, {
        method: 'POST',
        body: {
          project_id: projectId,
          filters,
          limit,
          ...(days ? { start_after: new Date(Date.now() - Number(days) * 86_400_000).toISOString() } : {}),
        },
      });
      return queue;
    },
    onSuccess: (queue) => navigate(`/projects/${projectId}/annotation/${queue.id}`),
  });
  const usable = (configs.data?.data ?? []).filter((c) => !c.archived);
  return (
    <form
      className="card stack"
      aria-label="New annotation queue"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <div className="grid-form">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} />
        </label>
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} maxLength={4096} />
        </label>
      </div>
      <fieldset className="stack" style={{ gap: '0.3rem' }}>
        <legend>Score configs</legend>
        {usable.length === 0 && (
          <span className="muted">No score configs yet: create one with POST /score-configs.</span>
        )}
        {usable.map((c) => (
          <label key={c.id} className="row">
            <input
              type="checkbox"
              checked={configIds.includes(c.id)}
              onChange={(e) =>
                setConfigIds(e.target.checked ? [...configIds, c.id] : configIds.filter((x) => x !== c.id))
              }
            />
            {c.name} <span className="muted">{c.data_type}</span>
          </label>
        ))}
      </fieldset>
      <div className="stack" style={{ gap: '0.3rem' }}>
        <strong>Traces: the trace list’s filter</strong>
        <FilterBar projectId={projectId} filters={filters} onChange={setFilters} exclude={['signal_id']} />
      </div>
      <div className="grid-form">
        <label>
          Started
          <select value={days} onChange={(e) => setDays(e.target.value)}>
            {WINDOWS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          At most (newest first)
          <input
            type="number"
            min={1}
            max={1000}
            value={limit}
            onChange={(e) => setLimit(Math.min(1000, Math.max(1, Number(e.target.value) || 1)))}
          />
        </label>
      </div>
      {create.error && (
        <p className="form-error">{create.error instanceof ApiError ? create.error.detail : String(create.error)}</p>
      )}
      <div className="row">
        <button className="primary" type="submit" disabled={!name.trim() || configIds.length === 0 || create.isPending}>
          Create queue
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
