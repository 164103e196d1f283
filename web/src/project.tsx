import { createContext, useContext } from 'react';
import { useQuery } from '@tanstack/react-query';
import { api } from './api';
import type { Project, Role, Workspace } from './types';

export function useProjects() {
  return useQuery({ queryKey: ['projects'], queryFn: () => api<{ data: Project[] }>('/projects'), staleTime: 60_000 });
}

export function useWorkspaces() {
  return useQuery({
    queryKey: ['workspaces'],
    queryFn: () => api<{ data: Workspace[] }>('/workspaces'),
    staleTime: 60_000,
  });
}

export type ProjectScope = { project: Project; role: Role | null };
export const ProjectContext = createContext<ProjectScope | null>(null);

/** The project of the page being shown (set by ProjectLayout from the URL). */
export function useProject(): ProjectScope & { projectId: string; canWrite: boolean; isAdmin: boolean } {
  const scope = useContext(ProjectContext);
  if (!scope) throw new Error('useProject outside a project page');
  return {
    ...scope,
    projectId: scope.project.id,
    canWrite: scope.role === 'MEMBER' || scope.role === 'ADMIN',
    isAdmin: scope.role === 'ADMIN',
  };
}

const LAST_PROJECT = 'sightline:last-project';
export function rememberProject(id: string) {
  try {
    localStorage.setItem(LAST_PROJECT, id);
  } catch {
    /* private mode: nothing to remember */
  }
}
export function lastProject(): string | null {
  try {
    return localStorage.getItem(LAST_PROJECT);
  } catch {
    return null;
  }
}
