import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import { requireWorkspaceRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { forgetVerifiedKeys } from '../auth/key-cache.js';
import type { Role } from '../auth/roles.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { enqueueProjectPurge } from '../deletions/service.js';
import { normaliseEmail } from '../accounts/service.js';

export async function listWorkspaces(ctx: AppContext, user: UserPrincipal) {
  const { rows } = await ctx.pg.pool.query<{ id: string; name: string; role: Role }>(
    `SELECT w.id, w.name, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.user_id = $1 ORDER BY w.created_at, w.id`,
    [user.userId],
  );
  return { data: rows };
}

/**
 * Bounds of the unpaged workspace and member lists (409 beyond; issue 20 for who counts what):
 * - a user creates at most MAX_WORKSPACES_PER_USER workspaces: only the ones they created count, so
 *   others adding them to workspaces never stops them from making their own;
 * - a user is added to others' workspaces only while they belong to fewer than
 *   MAX_WORKSPACES_PER_USER (409 naming the way out: they can leave any workspace);
 * - a workspace holds at most MAX_MEMBERS_PER_WORKSPACE members.
 * So a user's workspace list holds at most twice MAX_WORKSPACES_PER_USER.
 */
export const MAX_WORKSPACES_PER_USER = 100;
export const MAX_MEMBERS_PER_WORKSPACE = 1000;

/** The user's row lock serialises concurrent joins and creates, so the counts stay true until commit. */
async function lockUser(tx: Queryable, userId: string): Promise<void> {
  await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
}

async function ensureRoomToCreate(tx: Queryable, userId: string): Promise<void> {
  await lockUser(tx, userId);
  const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces WHERE created_by = $1', [
    userId,
  ]);
  if (rows[0]!.n >= MAX_WORKSPACES_PER_USER)
    throw new ConflictError(
      `a user creates at most ${MAX_WORKSPACES_PER_USER} workspaces; delete one before creating another`,
    );
}

async function ensureRoomToAdd(tx: Queryable, userId: string, workspaceId: string): Promise<void> {
  await lockUser(tx, userId);
  const { rows } = await tx.query<{ mine: number; members: number }>(
    `SELECT (SELECT count(*)::int FROM memberships WHERE user_id = $1) AS mine,
            (SELECT count(*)::int FROM memberships WHERE workspace_id = $2) AS members`,
    [userId, workspaceId],
  );
  if (rows[0]!.mine >= MAX_WORKSPACES_PER_USER) {
    throw new ConflictError(
      `this user already belongs to ${MAX_WORKSPACES_PER_USER} workspaces, at most; they can leave one before being added to another`,
    );
  }
  if (rows[0]!.members >= MAX_MEMBERS_PER_WORKSPACE)
    throw new ConflictError(`a workspace holds at most ${MAX_MEMBERS_PER_WORKSPACE} members`);
}

export async function createWorkspace(ctx: AppContext, user: UserPrincipal, name: string) {
  const workspace = { id: newId(), name };
  await withTransaction(ctx.pg.pool, async (tx) => {
    await ensureRoomToCreate(tx, user.userId);
    await tx.query('INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)', [
      workspace.id,
      name,
      user.userId,
    ]);
    await tx.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'ADMIN')`, [
      workspace.id,
      user.userId,
    ]);
  });
  return workspace;
}

type Member = { user_id: string; email: string; name: string; role: Role };

const MEMBER_SELECT = `SELECT m.user_id, u.email, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id`;

export async function listMembers(ctx: AppContext, user: UserPrincipal, workspaceId: string) {
  await requireWorkspaceRole(ctx.pg.pool, user, workspaceId, 'VIEWER');
  const { rows } = await ctx.pg.pool.query<Member>(
    `${MEMBER_SELECT} WHERE m.workspace_id = $1 ORDER BY m.created_at, u.email`,
    [workspaceId],
  );
  return { data: rows };
}

export async function addMember(
  ctx: AppContext,
  user: UserPrincipal,
  workspaceId: string,
  input: { email: string; role: Role },
): Promise<Member> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireWorkspaceRole(tx, user, workspaceId, 'ADMIN');
    const { rows } = await tx.query<{ id: string; email: string; name: string }>(
      'SELECT id, email, name FROM users WHERE email = $1',
      [normaliseEmail(input.email)],
    );
    const target = rows[0];
    if (!target) throw new NotFoundError('no user with this e-mail');
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [workspaceId]);
    await ensureRoomToAdd(tx, target.id, workspaceId);
    const inserted = await tx.query(
      `INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT (workspace_id, user_id) DO NOTHING`,
      [workspaceId, target.id, input.role],
    );
    if (inserted.rowCount === 0) throw new ConflictError('this user is already a member of the workspace');
    return { user_id: target.id, email: target.email, name: target.name, role: input.role };
  });
}

/** Role changes and removals keep at least one ADMIN in every workspace (409 otherwise). */
export async function changeMemberRole(
  ctx: AppContext,
  user: UserPrincipal,
  workspaceId: string,
  memberId: string,
  role: Role,
): Promise<Member> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireWorkspaceRole(tx, user, workspaceId, 'ADMIN');
    const member = await lockMember(tx, workspaceId, memberId);
    if (member.role === 'ADMIN' && role !== 'ADMIN')
      await ensureAnotherAdmin(tx, workspaceId, 'the last ADMIN of a workspace cannot be demoted');
    await tx.query('UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND user_id = $2', [
      workspaceId,
      memberId,
      role,
    ]);
    return { ...member, role };
  });
}

/**
 * An ADMIN removes anyone; any member removes themselves (leaving: nobody can be kept in a workspace
 * someone else added them to). Either way the last ADMIN stays (409).
 */
export async function removeMember(ctx: AppContext, user: UserPrincipal, workspaceId: string, memberId: string) {
  const leaving = memberId === user.userId;
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireWorkspaceRole(tx, user, workspaceId, leaving ? 'VIEWER' : 'ADMIN');
    const member = await lockMember(tx, workspaceId, memberId);
    if (member.role === 'ADMIN') {
      await ensureAnotherAdmin(
        tx,
        workspaceId,
        leaving
          ? 'the last ADMIN of a workspace cannot leave it; make another member ADMIN first'
          : 'the last ADMIN of a workspace cannot be removed',
      );
    }
    await tx.query('DELETE FROM memberships WHERE workspace_id = $1 AND user_id = $2', [workspaceId, member.user_id]);
    return { deleted: true, workspace_id: workspaceId, user_id: memberId };
  });
}

async function lockMember(tx: Queryable, workspaceId: string, memberId: string): Promise<Member> {
  // Every ADMIN row of the workspace is locked too, so two demotions can't both see "another ADMIN".
  await tx.query(`SELECT 1 FROM memberships WHERE workspace_id = $1 AND role = 'ADMIN' FOR UPDATE`, [workspaceId]);
  const { rows } = await tx.query<Member>(
    `${MEMBER_SELECT} WHERE m.workspace_id = $1 AND m.user_id::text = $2 FOR UPDATE OF m`,
    [workspaceId, memberId],
  );
  if (!rows[0]) throw new NotFoundError('member not found');
  return rows[0];
}

async function ensureAnotherAdmin(tx: Queryable, workspaceId: string, detail: string): Promise<void> {
  const { rows } = await tx.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1 AND role = 'ADMIN'`,
    [workspaceId],
  );
  if ((rows[0]?.n ?? 0) <= 1) throw new ConflictError(detail);
}

/**
 * What a workspace delete removes with it, counted before the cascade (the `cascaded` answer).
 * Tables added later that hang off a workspace or project add a line here.
 */
const CASCADE_COUNTS: Record<string, string> = {
  projects: 'SELECT count(*)::int AS n FROM projects WHERE workspace_id = $1',
  api_keys:
    'SELECT count(*)::int AS n FROM api_keys k JOIN projects p ON p.id = k.project_id WHERE p.workspace_id = $1',
  memberships: 'SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1',
  invites: 'SELECT count(*)::int AS n FROM invites WHERE workspace_id = $1',
};

/**
 * Hard delete with typed confirmation (docs/concepts.md, "Delete a workspace"). All checks and the
 * cascade run in one transaction with the workspace row locked: a refused delete changes nothing.
 * ClickHouse rows of its projects are purged afterwards by the deletions worker.
 */
export async function deleteWorkspace(
  ctx: AppContext,
  user: UserPrincipal,
  workspaceId: string,
  input: { name: string; reason: string },
) {
  const result = await withTransaction(ctx.pg.pool, async (tx) => {
    const workspace = await requireWorkspaceRole(tx, user, workspaceId, 'ADMIN');
    await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR UPDATE', [workspaceId]);
    if (input.name !== workspace.name) throw new BadRequestError("name does not match the workspace's current name");
    const { rows: mine } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM memberships WHERE user_id = $1',
      [user.userId],
    );
    if ((mine[0]?.n ?? 0) <= 1) throw new ConflictError("the caller's only workspace cannot be deleted");

    const cascaded: Record<string, number> = {};
    for (const [name, sql] of Object.entries(CASCADE_COUNTS)) {
      const { rows } = await tx.query<{ n: number }>(sql, [workspaceId]);
      cascaded[name] = rows[0]?.n ?? 0;
    }
    const { rows: projects } = await tx.query<{ id: string }>('SELECT id FROM projects WHERE workspace_id = $1', [
      workspaceId,
    ]);
    await tx.query('DELETE FROM workspaces WHERE id = $1', [workspaceId]);
    await tx.query(
      `INSERT INTO audit_log (actor_user_id, action, target_type, target_id, target_name, reason, details)
       VALUES ($1, 'delete', 'workspace', $2, $3, $4, $5)`,
      [user.userId, workspaceId, workspace.name, input.reason, JSON.stringify({ cascaded })],
    );
    return {
      answer: { deleted: true, reason: input.reason, workspace: { id: workspace.id, name: workspace.name }, cascaded },
      projectIds: projects.map((p) => p.id),
    };
  });
  forgetVerifiedKeys(ctx.pg, { workspaceId });
  await enqueueProjectPurge(ctx, result.projectIds);
  return result.answer;
}
