import type { AppContext } from '../context.js';
import { isUuid } from '../ids.js';
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import type { Principal, UserPrincipal } from './principal.js';
import { hasRole, roleRefusal, type Role } from './roles.js';

export const PROJECT_ID_REQUIRED_DETAIL = 'project_id query parameter is required for user credentials';
export const PROJECT_ID_MISMATCH_DETAIL = "project_id does not match the API key's project";
export const NO_PROJECT_ACCESS_DETAIL = 'you do not have access to this project';

export type ProjectRow = { id: string; name: string; workspace_id: string; trace_ttl_days: number; created_at: Date };
export type ProjectScope = { projectId: string; workspaceId: string; traceTtlDays: number };

/**
 * The project a project-scoped read acts on (docs/authentication.md, rules 1 and the API key
 * bullet): an API key's own project, where a `project_id` sent along must match (else 400); for user
 * credentials `project_id` is required (400 with the spec's exact detail) and the user must be a
 * member of the project's workspace (else 403; unknown and deleted projects answer the same).
 */
export async function resolveReadProject(
  ctx: AppContext,
  principal: Principal,
  projectId: string | undefined,
  minRole: Role = 'VIEWER',
): Promise<ProjectScope> {
  if (principal.kind === 'api_key') {
    if (projectId !== undefined && projectId.toLowerCase() !== principal.projectId)
      throw new BadRequestError(PROJECT_ID_MISMATCH_DETAIL);
    // The key was resolved against a live project moments ago (principal.ts); no second lookup.
    return { projectId: principal.projectId, workspaceId: principal.workspaceId, traceTtlDays: principal.traceTtlDays };
  }
  if (projectId === undefined || projectId === '') throw new BadRequestError(PROJECT_ID_REQUIRED_DETAIL);
  const found = await projectWithRole(ctx.pg.pool, projectId, principal.userId);
  if (!found || !found.role) throw new ForbiddenError(NO_PROJECT_ACCESS_DETAIL);
  if (!hasRole(found.role, minRole)) throw new ForbiddenError(roleRefusal(minRole));
  // The project the user reads is their landing project (GET /projects lists it first); written only
  // when it changes, so reads of one project cost no write.
  if (found.lastProjectId !== found.project.id) {
    await ctx.pg.pool.query('UPDATE users SET last_project_id = $2 WHERE id = $1', [
      principal.userId,
      found.project.id,
    ]);
  }
  return {
    projectId: found.project.id,
    workspaceId: found.project.workspace_id,
    traceTtlDays: found.project.trace_ttl_days,
  };
}

/**
 * A write on a project named in the path (`/projects/{project_id}/...`): 404 when it doesn't exist
 * (or was deleted), 403 when the user isn't a member of its workspace or lacks `minRole`.
 */
export async function requireProjectRole(
  db: Queryable,
  user: UserPrincipal,
  projectId: string,
  minRole: Role,
): Promise<ProjectRow & { role: Role }> {
  const found = await projectWithRole(db, projectId, user.userId);
  if (!found) throw new NotFoundError('project not found');
  if (!found.role) throw new ForbiddenError(NO_PROJECT_ACCESS_DETAIL);
  if (!hasRole(found.role, minRole)) throw new ForbiddenError(roleRefusal(minRole));
  return { ...found.project, role: found.role };
}

/** 404 when the workspace doesn't exist, 403 when the user isn't in it or lacks `minRole`. */
export async function requireWorkspaceRole(
  db: Queryable,
  user: UserPrincipal,
  workspaceId: string,
  minRole: Role,
): Promise<{ id: string; name: string; role: Role }> {
  if (!isUuid(workspaceId)) throw new NotFoundError('workspace not found');
  const { rows } = await db.query<{ id: string; name: string; role: Role | null }>(
    `SELECT w.id, w.name, m.role
       FROM workspaces w LEFT JOIN memberships m ON m.workspace_id = w.id AND m.user_id = $2
      WHERE w.id = $1`,
    [workspaceId, user.userId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError('workspace not found');
  if (!row.role) throw new ForbiddenError('you are not a member of this workspace');
  if (!hasRole(row.role, minRole)) throw new ForbiddenError(roleRefusal(minRole));
  return { id: row.id, name: row.name, role: row.role };
}

const PROJECT_COLUMNS = 'p.id, p.name, p.workspace_id, p.trace_ttl_days, p.created_at';

async function projectWithRole(
  db: Queryable,
  projectId: string,
  userId: string,
): Promise<{ project: ProjectRow; role: Role | null; lastProjectId: string | null } | null> {
  if (!isUuid(projectId)) return null;
  const { rows } = await db.query<ProjectRow & { role: Role | null; last_project_id: string | null }>(
    `SELECT ${PROJECT_COLUMNS}, m.role, (SELECT u.last_project_id FROM users u WHERE u.id = $2) AS last_project_id
       FROM projects p LEFT JOIN memberships m ON m.workspace_id = p.workspace_id AND m.user_id = $2
      WHERE p.id = $1 AND p.deleted_at IS NULL`,
    [projectId, userId],
  );
  const row = rows[0];
  if (!row) return null;
  const { role, last_project_id: lastProjectId, ...project } = row;
  return { project, role, lastProjectId };
}
