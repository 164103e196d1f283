import { useEffect, useMemo } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, NavLink, Navigate, Outlet, useLocation, useNavigate, useParams } from 'react-router';
import { request } from './api';
import { SESSION_KEY, useSession } from './auth';
import { lastProject, ProjectContext, rememberProject, useProjects, useWorkspaces } from './project';
import { ErrorBox, Loading, NotFound } from './components/ui';
import type { Project } from './types';

const SECTIONS = [
  ['traces', 'Traces'],
  ['sessions', 'Sessions'],
  ['dashboards', 'Dashboards'],
  ['sql', 'SQL'],
  ['signals', 'Signals'],
  ['alerts', 'Alerts'],
  ['evaluations', 'Evaluations'],
  ['evaluators', 'Evaluators'],
  ['prompts', 'Prompts'],
  ['annotation', 'Annotation'],
  ['usage', 'Usage'],
  ['settings', 'Settings'],
] as const;

/** Switches projects across workspaces, keeping the section (traces, dashboards, ...) in view. */
function ProjectSwitcher({ current }: { current?: string }) {
  const projects = useProjects();
  const navigate = useNavigate();
  const location = useLocation();
  const groups = useMemo(() => {
    const byWorkspace = new Map<string, { name: string; projects: Project[] }>();
    for (const p of projects.data?.data ?? []) {
      const g = byWorkspace.get(p.workspace_id) ?? { name: p.workspace_name, projects: [] };
      g.projects.push(p);
      byWorkspace.set(p.workspace_id, g);
    }
    return [...byWorkspace.values()];
  }, [projects.data]);
  if (!projects.data) return <span className="switcher-placeholder" />;
  const section = /^\/projects\/[^/]+\/([^/]+)/.exec(location.pathname)?.[1] ?? 'traces';
  return (
    <label className="switcher">
      <span className="sr-only">Project</span>
      <select
        aria-label="Project"
        data-testid="project-switcher"
        value={current ?? ''}
        onChange={(e) => {
          if (e.target.value === '__new') navigate('/projects/new');
          else navigate(`/projects/${e.target.value}/${section}`);
        }}
      >
        {!current && <option value="">Choose a project…</option>}
        {groups.map((g) => (
          <optgroup key={g.name + g.projects[0]!.workspace_id} label={g.name}>
            {g.projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </optgroup>
        ))}
        <option value="__new">+ New project…</option>
      </select>
    </label>
  );
}

function UserMenu() {
  const session = useSession();
  const client = useQueryClient();
  const navigate = useNavigate();
  const logout = useMutation({
    mutationFn: () => request('/api/auth/logout', { method: 'POST' }),
    onSettled: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, undefined);
      navigate('/login');
    },
  });
  return (
    <div className="user-menu">
      {/* The API reference is served by the API process; the web origin's /docs redirects there. */}
      <a className="small ghost" href="/docs" target="_blank" rel="noreferrer">
        API docs
      </a>
      <span className="user-name" title={session.data?.user.email}>
        {session.data?.user.name}
      </span>
      <button className="small ghost" onClick={() => logout.mutate()} disabled={logout.isPending}>
        Log out
      </button>
    </div>
  );
}

/** The frame of every logged-in page: brand, project switcher, sections, user. */
export function Shell() {
  const { projectId } = useParams();
  return (
    <div className="shell">
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Sightline home">
          <span className="logo" aria-hidden="true" />
          Sightline
        </Link>
        <ProjectSwitcher current={projectId} />
        {projectId && (
          <nav className="sections" aria-label="Sections">
            {SECTIONS.map(([path, label]) => (
              <NavLink key={path} to={`/projects/${projectId}/${path}`}>
                {label}
              </NavLink>
            ))}
          </nav>
        )}
        <UserMenu />
      </header>
      <main className="content">
        <Outlet />
      </main>
    </div>
  );
}

/** Resolves `:projectId` against the caller's projects: unknown ids get a not-found page. */
export function ProjectLayout() {
  const { projectId } = useParams();
  const projects = useProjects();
  const workspaces = useWorkspaces();
  const project = projects.data?.data.find((p) => p.id === projectId);
  useEffect(() => {
    if (project) rememberProject(project.id);
  }, [project]);
  if (projects.isPending) return <Loading />;
  if (projects.error) return <ErrorBox error={projects.error} />;
  if (!project) return <NotFound what="project" />;
  const role = workspaces.data?.data.find((w) => w.id === project.workspace_id)?.role ?? null;
  return (
    <ProjectContext.Provider value={{ project, role }}>
      <Outlet />
    </ProjectContext.Provider>
  );
}

/** `/`: the last project used, else the first one, else a prompt to create one. */
export function Home() {
  const projects = useProjects();
  if (projects.isPending) return <Loading />;
  if (projects.error) return <ErrorBox error={projects.error} />;
  const list = projects.data.data;
  const last = lastProject();
  const target = list.find((p) => p.id === last) ?? list[0];
  if (target) return <Navigate to={`/projects/${target.id}/traces`} replace />;
  return <Navigate to="/projects/new" replace />;
}
