import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { ConflictError, ForbiddenError, UnauthorizedError } from '../errors.js';
import { dummyPasswordHash, hashPassword, hashToken, newSessionToken, verifyPassword } from '../auth/secrets.js';
import type { UserPrincipal } from '../auth/principal.js';
import { authPool, withTransaction, type Queryable } from '../stores/postgres.js';

export type PublicUser = { id: string; email: string; name: string };

const UNIQUE_VIOLATION = '23505';
export const WRONG_LOGIN_DETAIL = 'wrong e-mail or password';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Creates a user who is ADMIN of a new workspace, and logs them in (docs/authentication.md). */
export async function signup(ctx: AppContext, input: { email: string; password: string; name: string }) {
  if (!ctx.config.signupEnabled) throw new ForbiddenError('sign-up is disabled on this server');
  const email = normaliseEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  const user: PublicUser = { id: newId(), email, name: input.name.trim() };
  const workspace = { id: newId(), name: `${user.name}'s workspace` };
  try {
    return await withTransaction(ctx.pg.pool, async (tx) => {
      await tx.query('INSERT INTO users (id, email, name, password_hash) VALUES ($1, $2, $3, $4)', [
        user.id,
        email,
        user.name,
        passwordHash,
      ]);
      await tx.query('INSERT INTO workspaces (id, name, created_by) VALUES ($1, $2, $3)', [
        workspace.id,
        workspace.name,
        user.id,
      ]);
      await tx.query(`INSERT INTO memberships (workspace_id, user_id, role) VALUES ($1, $2, 'ADMIN')`, [
        workspace.id,
        user.id,
      ]);
      const sessionToken = await createSession(tx, user.id, ctx.config.sessionTtlDays);
      return { session_token: sessionToken, user, workspace };
    });
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION)
      throw new ConflictError('an account with this e-mail already exists');
    throw error;
  }
}

/** Same detail and about the same time for an unknown e-mail and a wrong password. */
/** `caller`: the request's remote address (the hashing pool serves callers in turn: src/auth/hash-pool.ts). */
export async function login(ctx: AppContext, input: { email: string; password: string }, caller?: string) {
  const email = normaliseEmail(input.email);
  // The reserved authentication pool (src/stores/postgres.ts): a login never waits behind request work.
  const { rows } = await authPool(ctx.pg).query<PublicUser & { password_hash: string }>(
    'SELECT id, email, name, password_hash FROM users WHERE email = $1',
    [email],
  );
  const row = rows[0];
  const ok = await verifyPassword(input.password, row?.password_hash ?? (await dummyPasswordHash()), caller);
  if (!row || !ok) throw new UnauthorizedError(WRONG_LOGIN_DETAIL);
  const sessionToken = await createSession(authPool(ctx.pg), row.id, ctx.config.sessionTtlDays);
  return { session_token: sessionToken, user: { id: row.id, email: row.email, name: row.name } };
}

/** Ends the login session; every access token minted from it stops working with it. */
export async function logout(ctx: AppContext, user: UserPrincipal): Promise<void> {
  await ctx.pg.pool.query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [
    user.sessionId,
  ]);
}

export async function createSession(db: Queryable, userId: string, ttlDays: number): Promise<string> {
  const token = newSessionToken();
  await db.query(
    `INSERT INTO sessions (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, now() + make_interval(days => $4))`,
    [newId(), userId, hashToken(token), ttlDays],
  );
  return token;
}
