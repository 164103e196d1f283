import type { AppContext } from '../context.js';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js';
import { hashPassword, verifyPassword } from '../auth/secrets.js';
import type { UserPrincipal } from '../auth/principal.js';
import { authPool, withTransaction, type PostgresStore } from '../stores/postgres.js';
import { normaliseEmail } from './service.js';

/**
 * Password change, operator reset and "log out everywhere" (docs/authentication.md, "Passwords and
 * sessions"). Every one ends sessions: a stolen session must not outlive the password it came from.
 * Access tokens (CLI JWTs) are checked against their live session on every request, so ending a
 * session ends the tokens minted from it at the same moment.
 */

export const WRONG_CURRENT_PASSWORD_DETAIL = 'the current password is wrong';
export const SESSION_REQUIRED_DETAIL =
  'changing the password needs the session itself (log in again), not a CLI access token';

/**
 * `POST {web_url}/api/auth/password`: checks the current password, stores the new one and ends
 * every other session of the user; the caller's own session stays. Answers how many ended.
 */
export async function changePassword(
  ctx: AppContext,
  user: UserPrincipal,
  input: { current_password: string; new_password: string },
): Promise<{ revoked_sessions: number }> {
  if (user.via !== 'session') throw new UnauthorizedError(SESSION_REQUIRED_DETAIL);
  const { rows } = await authPool(ctx.pg).query<{ password_hash: string }>(
    'SELECT password_hash FROM users WHERE id = $1',
    [user.userId],
  );
  if (!rows[0]) throw new UnauthorizedError();
  // 403, not 401: the session is fine, and a 401 would send the web app to its login page.
  if (!(await verifyPassword(input.current_password, rows[0].password_hash)))
    throw new ForbiddenError(WRONG_CURRENT_PASSWORD_DETAIL);
  const hash = await hashPassword(input.new_password);
  return withTransaction(ctx.pg.pool, async (tx) => {
    await tx.query('UPDATE users SET password_hash = $2 WHERE id = $1', [user.userId, hash]);
    const revoked = await tx.query(
      'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL',
      [user.userId, user.sessionId],
    );
    return { revoked_sessions: revoked.rowCount ?? 0 };
  });
}

/** `POST {web_url}/api/auth/logout-all`: every session of the user ends, the caller's too. */
export async function logoutEverywhere(ctx: AppContext, user: UserPrincipal): Promise<{ revoked_sessions: number }> {
  const revoked = await ctx.pg.pool.query(
    'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL',
    [user.userId],
  );
  return { revoked_sessions: revoked.rowCount ?? 0 };
}

/**
 * The operator's reset (`npm run reset-password -- <email>`, scripts/reset-password.ts): whoever can
 * reach the database sets a new password and ends every session of the user. No route does this:
 * a workspace ADMIN manages memberships, not the accounts of people who may belong to other
 * workspaces too, so an ADMIN reset would let one tenant take over another's account.
 */
export async function resetPassword(
  pg: PostgresStore,
  email: string,
  newPassword: string,
): Promise<{ user_id: string; revoked_sessions: number }> {
  const hash = await hashPassword(newPassword);
  return withTransaction(pg.pool, async (tx) => {
    const { rows } = await tx.query<{ id: string }>(
      'UPDATE users SET password_hash = $2 WHERE email = $1 RETURNING id',
      [normaliseEmail(email), hash],
    );
    if (!rows[0]) throw new NotFoundError('no user with this e-mail');
    const revoked = await tx.query('UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL', [
      rows[0].id,
    ]);
    return { user_id: rows[0].id, revoked_sessions: revoked.rowCount ?? 0 };
  });
}
