import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useNavigate, useSearchParams } from 'react-router';
import { api, ApiError, request } from '../api';
import { SESSION_KEY, useSession } from '../auth';
import { useProject } from '../project';
import { Badge, CopyButton, Empty, ErrorBox, Loading, Modal, Time, useTitle } from '../components/ui';
import type { ApiKey, Member, Role } from '../types';
import { ModelPricesTab } from './model-prices-tab';
import { LlmConnectionsTab, ScoreConfigsTab } from './quality-settings';
import { MaskingTab, QuotasTab } from './producer-settings';
import { SamplingTab } from './sampling';

const TABS = [
  ['keys', 'API keys'],
  ['members', 'Members'],
  ['project', 'Project'],
  ['sampling', 'Sampling'],
  ['prices', 'Model prices'],
  ['score-configs', 'Score configs'],
  ['llm-connections', 'LLM connections'],
  ['masking', 'Masking'],
  ['quotas', 'Quotas'],
  ['account', 'Account'],
] as const;

function errorText(error: unknown): string {
  return error instanceof ApiError ? error.detail : String(error);
}

function ApiKeys() {
  const { projectId, canWrite } = useProject();
  const client = useQueryClient();
  const [created, setCreated] = useState<ApiKey | null>(null);
  const keys = useQuery({
    queryKey: ['api-keys', projectId],
    queryFn: () => api<{ data: ApiKey[] }>(`/projects/${projectId}/api-keys`),
  });
  const create = useMutation({
    mutationFn: (body: { name: string; expires_at?: string }) =>
      api<ApiKey>(`/projects/${projectId}/api-keys`, { method: 'POST', body }),
    onSuccess: (key) => {
      setCreated(key);
      void client.invalidateQueries({ queryKey: ['api-keys', projectId] });
    },
  });
  const revoke = useMutation({
    mutationFn: (id: string) => api(`/projects/${projectId}/api-keys/${id}`, { method: 'DELETE' }),
    onSuccess: () => client.invalidateQueries({ queryKey: ['api-keys', projectId] }),
  });
  return (
    <section className="stack">
      <p className="muted">
        API keys send traces and read this project's data. Use them as <code>Authorization: Bearer sl_…</code>. A key is
        shown once, when it is created.
      </p>
      {canWrite && (
        <form
          className="row card"
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            const expires = String(form.get('expires') ?? '');
            create.mutate({
              name: String(form.get('name')),
              expires_at: expires ? new Date(`${expires}T23:59:59`).toISOString() : undefined,
            });
            e.currentTarget.reset();
          }}
        >
          <label className="grow">
            Key name
            <input name="name" required maxLength={200} placeholder="e.g. production ingest" />
          </label>
          <label>
            Expires (optional)
            <input name="expires" type="date" />
          </label>
          <button className="primary" type="submit" disabled={create.isPending} style={{ alignSelf: 'end' }}>
            Create key
          </button>
          {create.error && <p className="form-error">{errorText(create.error)}</p>}
        </form>
      )}
      {keys.isPending ? (
        <Loading />
      ) : keys.error ? (
        <ErrorBox error={keys.error} />
      ) : keys.data.data.length === 0 ? (
        <Empty title="No API keys">Create one to send traces to this project.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data" data-testid="key-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Created</th>
                <th className="hide-phone">Expires</th>
                <th className="hide-phone">Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
                <tr key={k.id} data-testid="key-row">
                  <td>{k.name}</td>
                  <td className="mono">{k.key_prefix}…</td>
                  <td>
                    <Time iso={k.created_at} />
                  </td>
                  <td className="hide-phone">
                    {k.expires_at ? <Time iso={k.expires_at} /> : <span className="muted">never</span>}
                  </td>
                  <td className="hide-phone">
                    {k.last_used_at ? <Time iso={k.last_used_at} /> : <span className="muted">–</span>}
                  </td>
                  <td className="num">
                    {canWrite && (
                      <button
                        className="small danger"
                        onClick={() =>
                          confirm(`Revoke the key “${k.name}”? Anything using it stops at once.`) && revoke.mutate(k.id)
                        }
                      >
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {created && (
        <Modal title="Your new API key" onClose={() => setCreated(null)}>
          <p>Copy it now: it is not shown again.</p>
          <div className="secret" data-testid="new-key">
            {created.key}
          </div>
          <div className="row">
            <CopyButton text={created.key ?? ''} label="Copy key" />
            <button className="primary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </Modal>
      )}
    </section>
  );
}

function Members() {
  const { project, isAdmin } = useProject();
  const session = useSession();
  const client = useQueryClient();
  const workspaceId = project.workspace_id;
  const key = ['members', workspaceId];
  const members = useQuery({
    queryKey: key,
    queryFn: () => api<{ data: Member[] }>(`/workspaces/${workspaceId}/members`),
  });
  const refresh = () => client.invalidateQueries({ queryKey: key });
  const add = useMutation({
    mutationFn: (body: { email: string; role: Role }) =>
      api(`/workspaces/${workspaceId}/members`, { method: 'POST', body }),
    onSuccess: refresh,
  });
  const change = useMutation({
    mutationFn: ({ userId, role }: { userId: string; role: Role }) =>
      api(`/workspaces/${workspaceId}/members/${userId}`, { method: 'PATCH', body: { role } }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: (userId: string) => api(`/workspaces/${workspaceId}/members/${userId}`, { method: 'DELETE' }),
    onSuccess: refresh,
  });
  const failure = add.error ?? change.error ?? remove.error;
  return (
    <section className="stack">
      <p className="muted">
        Members of the workspace <strong>{project.workspace_name}</strong> and their roles: viewers read, members also
        create and change, admins also manage members and delete.
      </p>
      {isAdmin && (
        <form
          className="row card"
          onSubmit={(e) => {
            e.preventDefault();
            const form = new FormData(e.currentTarget);
            add.mutate({ email: String(form.get('email')), role: form.get('role') as Role });
            e.currentTarget.reset();
          }}
        >
          <label className="grow">
            E-mail of an existing user
            <input name="email" type="email" required />
          </label>
          <label>
            Role
            <select name="role" defaultValue="MEMBER">
              <option>VIEWER</option>
              <option>MEMBER</option>
              <option>ADMIN</option>
            </select>
          </label>
          <button className="primary" type="submit" style={{ alignSelf: 'end' }}>
            Add member
          </button>
        </form>
      )}
      {failure && <p className="form-error">{errorText(failure)}</p>}
      {members.isPending ? (
        <Loading />
      ) : members.error ? (
        <ErrorBox error={members.error} />
      ) : (
        <div className="table-wrap">
          <table className="data">
            <thead>
              <tr>
                <th>Name</th>
                <th>E-mail</th>
                <th>Role</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {members.data.data.map((m) => (
                <tr key={m.user_id}>
                  <td>
                    {m.name} {m.user_id === session.data?.user.id && <Badge>you</Badge>}
                  </td>
                  <td>{m.email}</td>
                  <td>
                    {isAdmin ? (
                      <select
                        aria-label={`Role of ${m.email}`}
                        value={m.role}
                        onChange={(e) => change.mutate({ userId: m.user_id, role: e.target.value as Role })}
                      >
                        <option>VIEWER</option>
                        <option>MEMBER</option>
                        <option>ADMIN</option>
                      </select>
                    ) : (
                      <Badge>{m.role}</Badge>
                    )}
                  </td>
                  <td className="num">
                    {isAdmin && m.user_id !== session.data?.user.id && (
                      <button
                        className="small danger"
                        onClick={() => confirm(`Remove ${m.email} from the workspace?`) && remove.mutate(m.user_id)}
                      >
                        Remove
                      </button>
                    )}
                    {m.user_id === session.data?.user.id && (
                      <button
                        className="small danger"
                        onClick={() =>
                          confirm(`Leave the workspace ${project.workspace_name}?`) && remove.mutate(m.user_id)
                        }
                      >
                        Leave
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

type ProjectDetail = {
  id: string;
  name: string;
  trace_ttl_days: number;
  workspace_name: string;
  created_at: string;
  role: Role;
};

function ProjectSettings() {
  const { projectId, project, isAdmin, canWrite } = useProject();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState(false);
  const detail = useQuery({
    queryKey: ['project', projectId],
    queryFn: () => api<ProjectDetail>(`/projects/${projectId}`),
  });
  const save = useMutation({
    mutationFn: (body: { name?: string; trace_ttl_days?: number }) =>
      api<ProjectDetail>(`/projects/${projectId}`, { method: 'PATCH', body }),
    onSuccess: (p) => {
      client.setQueryData(['project', projectId], p);
      void client.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  const remove = useMutation({
    mutationFn: (reason: string) => api(`/projects/${projectId}`, { method: 'DELETE', query: { reason } }),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['projects'] });
      navigate('/');
    },
  });
  if (detail.isPending) return <Loading />;
  if (detail.error) return <ErrorBox error={detail.error} />;
  return (
    <section className="stack">
      <form
        className="card stack"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const name = String(form.get('name')).trim();
          const ttl = Number(form.get('ttl'));
          save.mutate({
            ...(name !== detail.data.name ? { name } : {}),
            ...(ttl !== detail.data.trace_ttl_days ? { trace_ttl_days: ttl } : {}),
          });
        }}
      >
        <div className="grid-form">
          <label>
            Project name
            <input name="name" defaultValue={detail.data.name} required maxLength={200} disabled={!canWrite} />
          </label>
          <label>
            Retention: keep traces for (days)
            <input
              name="ttl"
              type="number"
              min={1}
              max={3650}
              defaultValue={detail.data.trace_ttl_days}
              required
              disabled={!isAdmin}
              aria-describedby="ttl-help"
            />
          </label>
        </div>
        <p className="muted" id="ttl-help">
          New spans are kept this long; dashboards never reach further back.{' '}
          {isAdmin ? '' : 'Only workspace admins change the retention.'}
        </p>
        {save.error && <p className="form-error">{errorText(save.error)}</p>}
        {save.isSuccess && <p className="muted">Saved.</p>}
        {canWrite && (
          <div>
            <button className="primary" type="submit" disabled={save.isPending}>
              Save
            </button>
          </div>
        )}
      </form>
      {isAdmin && (
        <div className="card stack">
          <h3>Delete this project</h3>
          <p className="muted">
            The project leaves every list and its API keys stop working at once; its data stays until the retention
            ends.
          </p>
          <div>
            <button className="danger" onClick={() => setDeleting(true)}>
              Delete project…
            </button>
          </div>
        </div>
      )}
      {deleting && (
        <Modal title={`Delete ${project.name}?`} onClose={() => setDeleting(false)}>
          <form
            className="stack"
            onSubmit={(e) => {
              e.preventDefault();
              remove.mutate(String(new FormData(e.currentTarget).get('reason')));
            }}
          >
            <label>
              Reason (kept in the audit log)
              <input name="reason" required minLength={3} maxLength={500} />
            </label>
            {remove.error && <p className="form-error">{errorText(remove.error)}</p>}
            <button className="danger solid" type="submit" disabled={remove.isPending}>
              Delete project
            </button>
          </form>
        </Modal>
      )}
    </section>
  );
}

/** `/projects/{project_id}/settings`: API keys, members and roles, retention, sampling, model prices (`?tab=`). */
export function SettingsPage() {
  const { project } = useProject();
  useTitle(`Settings · ${project.name}`);
  const [params, setParams] = useSearchParams();
  const tab = (TABS.find(([id]) => id === params.get('tab')) ?? TABS[0])[0];
  return (
    <div className="page">
      <div className="page-head">
        <div>
          <h1>Settings</h1>
          <div className="muted">
            {project.name} · {project.workspace_name}
          </div>
        </div>
      </div>
      <div className="tabs" role="tablist">
        {TABS.map(([id, label]) => (
          <button
            key={id}
            role="tab"
            aria-selected={tab === id}
            onClick={() => setParams(id === 'keys' ? {} : { tab: id })}
          >
            {label}
          </button>
        ))}
      </div>
      {tab === 'keys' ? (
        <ApiKeys />
      ) : tab === 'members' ? (
        <Members />
      ) : tab === 'sampling' ? (
        <SamplingTab />
      ) : tab === 'prices' ? (
        <ModelPricesTab />
      ) : tab === 'score-configs' ? (
        <ScoreConfigsTab />
      ) : tab === 'llm-connections' ? (
        <LlmConnectionsTab />
      ) : tab === 'masking' ? (
        <MaskingTab />
      ) : tab === 'quotas' ? (
        <QuotasTab />
      ) : tab === 'account' ? (
        <AccountSettings />
      ) : (
        <ProjectSettings />
      )}
    </div>
  );
}

/** Account: change the password (other sessions end) and log out everywhere (docs/authentication.md). */
function AccountSettings() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const change = useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      request<{ revoked_sessions: number }>('/api/auth/password', { method: 'POST', body }),
  });
  const everywhere = useMutation({
    mutationFn: () => request('/api/auth/logout-all', { method: 'POST' }),
    onSettled: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, undefined);
      navigate('/login');
    },
  });
  return (
    <section className="stack">
      <form
        className="card stack"
        data-testid="password-form"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          change.mutate({ current_password: String(form.get('current')), new_password: String(form.get('new')) });
          e.currentTarget.reset();
        }}
      >
        <h3>Change password</h3>
        <div className="grid-form">
          <label>
            Current password
            <input name="current" type="password" autoComplete="current-password" required maxLength={1024} />
          </label>
          <label>
            New password (at least 8 characters)
            <input name="new" type="password" autoComplete="new-password" required minLength={8} maxLength={1024} />
          </label>
        </div>
        {change.error && <p className="form-error">{errorText(change.error)}</p>}
        {change.isSuccess && (
          <p className="muted">Password changed; {change.data.revoked_sessions} other session(s) logged out.</p>
        )}
        <div>
          <button className="primary" type="submit" disabled={change.isPending}>
            Change password
          </button>
        </div>
      </form>
      <div className="card stack">
        <h3>Log out everywhere</h3>
        <p className="muted">Ends every session of your account, this one too, and every CLI access token.</p>
        <div>
          <button
            className="danger"
            onClick={() => confirm('Log out of every session?') && everywhere.mutate()}
            disabled={everywhere.isPending}
          >
            Log out everywhere
          </button>
        </div>
      </div>
    </section>
  );
}
