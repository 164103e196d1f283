import type { z } from 'zod';
import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { requireProjectRole, requireWorkspaceRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { forgetVerifiedKeys } from '../auth/key-cache.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { ensureDefaultDashboard } from '../dashboards/service.js';
import { ensureDefaultDetector } from '../detectors/service.js';
import type { ProjectDetailAnswer } from './answers.js';

export type CreateProjectInput = { name: string; workspace_id?: string; trace_ttl_days?: number };

/**
 * Live projects a workspace may hold (409 beyond): project lists, a workspace's delete cascade and its
 * purge job all grow with it, so its size is bounded where it grows.
 */
export const MAX_PROJECTS_PER_WORKSPACE = 1000;

/**
 * Idempotent on the name within the workspace (docs/concepts.md, "Create a project"): a second call
 * with the same name answers the live project of that name with `created: false`.
 */
export async function createProject(ctx: AppContext, user: UserPrincipal, input: CreateProjectInput) {
  const workspaceId = input.workspace_id ?? (await soleWorkspace(ctx, user));
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireWorkspaceRole(tx, user, workspaceId, 'MEMBER');
    // The workspace row lock serialises concurrent creates, so the count stays true until commit.
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [workspaceId]);
    const { rows: live } = await tx.query<{ n: number; named: number }>(
      'SELECT count(*)::int AS n, count(*) FILTER (WHERE name = $2)::int AS named FROM projects WHERE workspace_id = $1 AND deleted_at IS NULL',
      [workspaceId, input.name],
    );
    // At the cap a repeated create of an existing name still answers that project (idempotent).
    if (live[0]!.n >= MAX_PROJECTS_PER_WORKSPACE && live[0]!.named === 0) {
      throw new ConflictError(
        `a workspace holds at most ${MAX_PROJECTS_PER_WORKSPACE} projects; delete one before creating another`,
      );
    }
    const inserted = await tx.query<{ id: string; name: string; workspace_id: string }>(
      `INSERT INTO projects (id, workspace_id, name, trace_ttl_days, created_by) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (workspace_id, name) WHERE deleted_at IS NULL DO NOTHING
       RETURNING id, name, workspace_id`,
      [newId(), workspaceId, input.name, input.trace_ttl_days ?? 30, user.userId],
    );
    // The project the user creates is where they land next (GET /projects lists it first).
    const landing = inserted.rows[0]?.id ?? null;
    if (landing) await tx.query('UPDATE users SET last_project_id = $2 WHERE id = $1', [user.userId, landing]);
    if (inserted.rows[0]) {
      // Every project has its default dashboard from the start (docs/dashboards.md).
      await ensureDefaultDashboard(tx, inserted.rows[0].id);
      // And its "Errors" detector, so signals appear without configuring anything (issue 11).
      await ensureDefaultDetector(tx, inserted.rows[0].id);
      return { created: true, ...inserted.rows[0] };
    }
    const { rows } = await tx.query<{ id: string; name: string; workspace_id: string }>(
      'SELECT id, name, workspace_id FROM projects WHERE workspace_id = $1 AND name = $2 AND deleted_at IS NULL',
      [workspaceId, input.name],
    );
    return { created: false, ...rows[0]! };
  });
}

/** Without `workspace_id`, a user who belongs to exactly one workspace means that one. */
async function soleWorkspace(ctx: AppContext, user: UserPrincipal): Promise<string> {
  const { rows } = await ctx.pg.pool.query<{ workspace_id: string }>(
    'SELECT workspace_id FROM memberships WHERE user_id = $1 LIMIT 2',
    [user.userId],
  );
  if (rows.length === 1) return rows[0]!.workspace_id;
  throw new RequestValidationError([
    {
      loc: ['body', 'workspace_id'],
      msg: 'Field required when the user belongs to more than one workspace',
      type: 'missing',
    },
  ]);
}

/**
 * The user's projects, the landing project first (what the web app opens at `/` and a client takes
 * as the default: issue 20). The landing project is the one the user last created or read; then come
 * the workspaces the user created, then the others in the order the user joined them, each workspace's
 * projects together. Names play no part: a workspace someone else added the user to can't put itself
 * first by calling itself "AAA".
 */
export async function listProjects(ctx: AppContext, user: UserPrincipal, workspaceId?: string) {
  const { rows } = await ctx.pg.pool.query<{ id: string; name: string; workspace_id: string; workspace_name: string }>(
    `WITH landing AS (
       SELECT p.id, p.workspace_id FROM users u JOIN projects p ON p.id = u.last_project_id AND p.deleted_at IS NULL WHERE u.id = $1
     )
     SELECT p.id, p.name, p.workspace_id, w.name AS workspace_name
       FROM projects p
       JOIN memberships m ON m.workspace_id = p.workspace_id AND m.user_id = $1
       JOIN workspaces w ON w.id = p.workspace_id
      WHERE p.deleted_at IS NULL AND ($2::text IS NULL OR p.workspace_id::text = $2)
      ORDER BY (p.workspace_id IN (SELECT workspace_id FROM landing)) DESC, (w.created_by IS NOT DISTINCT FROM $1::uuid) DESC,
               m.created_at, w.id, (p.id IN (SELECT id FROM landing)) DESC, p.created_at, p.name`,
    [user.userId, workspaceId ?? null],
  );
  return { data: rows };
}

/**
 * Soft delete: the project leaves every list and read and its keys stop authenticating at once
 * (both check `deleted_at`); its data stays for the retention window. One audit row records it.
 */
export async function deleteProject(ctx: AppContext, user: UserPrincipal, projectId: string, reason: string) {
  const answer = await withTransaction(ctx.pg.pool, async (tx) => {
    const project = await requireProjectRole(tx, user, projectId, 'ADMIN');
    const updated = await tx.query('UPDATE projects SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL', [
      projectId,
    ]);
    // A concurrent delete got there first: to this caller the project no longer exists.
    if (updated.rowCount === 0) throw new NotFoundError('project not found');
    await tx.query(
      `INSERT INTO audit_log (actor_user_id, action, target_type, target_id, target_name, reason, details)
       VALUES ($1, 'delete', 'project', $2, $3, $4, $5)`,
      [user.userId, project.id, project.name, reason, JSON.stringify({ workspace_id: project.workspace_id })],
    );
    return { deleted: true, project: { id: project.id, name: project.name }, reason };
  });
  forgetVerifiedKeys(ctx.pg, { projectId: answer.project.id });
  return answer;
}

/** Inferred from the answer schema (answers.ts). */
export type ProjectDetail = z.output<typeof ProjectDetailAnswer>;

async function projectDetail(db: Queryable, projectId: string, role: ProjectDetail['role']): Promise<ProjectDetail> {
  const { rows } = await db.query<Omit<ProjectDetail, 'role'>>(
    `SELECT p.id, p.name, p.workspace_id, w.name AS workspace_name, p.trace_ttl_days, p.created_at
       FROM projects p JOIN workspaces w ON w.id = p.workspace_id WHERE p.id = $1`,
    [projectId],
  );
  return { ...rows[0]!, role };
}

/** `GET /projects/{project_id}`: the project with its retention and the caller's role (settings page). */
export async function getProject(ctx: AppContext, user: UserPrincipal, projectId: string): Promise<ProjectDetail> {
  const project = await requireProjectRole(ctx.pg.pool, user, projectId, 'VIEWER');
  return projectDetail(ctx.pg.pool, project.id, project.role);
}

/**
 * `PATCH /projects/{project_id}` (docs/authentication.md, rule 3: project updates take the project from the path):
 * rename (MEMBER+, idempotent names stay unique per workspace: 409) or change the retention (ADMIN:
 * it decides how long data is kept). New spans carry the new retention; dashboards clamp to it at once.
 */
export async function updateProject(
  ctx: AppContext,
  user: UserPrincipal,
  projectId: string,
  input: { name?: string; trace_ttl_days?: number },
): Promise<ProjectDetail> {
  // The keys carry the project's name and retention (their principal): kept ones are dropped.
  const detail = await withTransaction(ctx.pg.pool, async (tx) => {
    const project = await requireProjectRole(
      tx,
      user,
      projectId,
      input.trace_ttl_days !== undefined ? 'ADMIN' : 'MEMBER',
    );
    try {
      await tx.query(
        'UPDATE projects SET name = COALESCE($2, name), trace_ttl_days = COALESCE($3, trace_ttl_days) WHERE id = $1 AND deleted_at IS NULL',
        [projectId, input.name ?? null, input.trace_ttl_days ?? null],
      );
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw new ConflictError('another project of this workspace has that name');
      throw error;
    }
    return projectDetail(tx, project.id, project.role);
  });
  forgetVerifiedKeys(ctx.pg, { projectId: detail.id });
  return detail;
}
