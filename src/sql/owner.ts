import type { AppContext } from '../context.js';
import type { Principal } from '../auth/principal.js';
import type { ProjectScope } from '../auth/access.js';
import type { SqlOwner } from './scheduler.js';

/**
 * Whose share of the SQL engine a query takes (scheduler.ts): its project, the project's workspace,
 * and a user: the one logged in, or for an API key the user who made the key. Keys of one user's
 * projects then share that user's share, so three projects don't make three shares.
 */
export async function sqlOwner(ctx: AppContext, principal: Principal, scope: ProjectScope): Promise<SqlOwner> {
  const owner: SqlOwner = { projectId: scope.projectId, workspaceId: scope.workspaceId };
  if (principal.kind === 'user') return { ...owner, userId: principal.userId };
  const { rows } = await ctx.pg.pool.query<{ created_by: string | null }>(
    'SELECT created_by FROM api_keys WHERE id = $1',
    [principal.keyId],
  );
  const creator = rows[0]?.created_by;
  return creator ? { ...owner, userId: creator } : owner;
}

/** A sql detector's owner: its project, the project's workspace, and the user who made the detector. */
export async function detectorOwner(ctx: AppContext, detectorId: string, projectId: string): Promise<SqlOwner> {
  const { rows } = await ctx.pg.pool.query<{ workspace_id: string; created_by: string | null }>(
    'SELECT p.workspace_id, d.created_by FROM detectors d JOIN projects p ON p.id = d.project_id WHERE d.id = $1',
    [detectorId],
  );
  const row = rows[0];
  if (!row) return { projectId };
  return { projectId, workspaceId: row.workspace_id, ...(row.created_by ? { userId: row.created_by } : {}) };
}
