import { useState, type FormEvent } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { api, ApiError } from '../api';
import { useWorkspaces } from '../project';
import { ErrorBox, Loading, useTitle } from '../components/ui';

/** `/projects/new`: a project in one of the caller's workspaces (docs/concepts.md, "Create a project"). */
export function NewProjectPage() {
  useTitle('New project');
  const workspaces = useWorkspaces();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [error, setError] = useState<string | null>(null);
  if (workspaces.isPending) return <Loading />;
  if (workspaces.error) return <ErrorBox error={workspaces.error} />;
  const writable = workspaces.data.data.filter((w) => w.role !== 'VIEWER');
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    try {
      const created = await api<{ id: string }>('/projects', {
        method: 'POST',
        body: {
          name: form.get('name'),
          workspace_id: form.get('workspace_id'),
          trace_ttl_days: Number(form.get('ttl')),
        },
      });
      await client.invalidateQueries({ queryKey: ['projects'] });
      navigate(`/projects/${created.id}/traces`);
    } catch (err) {
      setError(err instanceof ApiError ? err.detail : String(err));
    }
  };
  return (
    <div className="page narrow">
      <h1>New project</h1>
      <p className="muted">
        A project holds traces, dashboards, signals and API keys. Every project starts with an Overview dashboard.
      </p>
      <form className="stack card" onSubmit={submit}>
        {error && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <label>
          Name
          <input name="name" required maxLength={200} autoFocus />
        </label>
        <label>
          Workspace
          <select name="workspace_id" required>
            {writable.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Keep traces for (days)
          <input name="ttl" type="number" min={1} max={3650} defaultValue={30} required />
        </label>
        <button className="primary" type="submit">
          Create project
        </button>
      </form>
    </div>
  );
}
