import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { requireProjectRole } from '../auth/access.js';
import type { ApiKeyPrincipal, UserPrincipal } from '../auth/principal.js';
import { hashToken, newApiKey } from '../auth/secrets.js';
import { forgetVerifiedKeys } from '../auth/key-cache.js';
import { ConflictError, NotFoundError } from '../errors.js';
import { withTransaction } from '../stores/postgres.js';

type KeyRow = {
  id: string;
  name: string;
  key_prefix: string;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
};

/** Unrevoked keys a project may hold (409 beyond): the key list answers them all, unpaged. */
export const MAX_API_KEYS_PER_PROJECT = 100;

/** The full key is in this answer only; the store keeps its hash (docs/authentication.md). */
export async function createApiKey(
  ctx: AppContext,
  user: UserPrincipal,
  projectId: string,
  input: { name: string; expires_at?: string },
) {
  const { key, prefix } = newApiKey();
  const row = await withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    // The project row lock serialises concurrent creates, so the count stays true until commit.
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [projectId]);
    const { rows: live } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM api_keys WHERE project_id = $1 AND revoked_at IS NULL',
      [projectId],
    );
    if (live[0]!.n >= MAX_API_KEYS_PER_PROJECT)
      throw new ConflictError(
        `a project holds at most ${MAX_API_KEYS_PER_PROJECT} API keys; revoke one before creating another`,
      );
    const { rows } = await tx.query<KeyRow>(
      `INSERT INTO api_keys (id, project_id, name, key_hash, key_prefix, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id, name, key_prefix, created_at, expires_at`,
      [newId(), projectId, input.name, hashToken(key), prefix, user.userId, input.expires_at ?? null],
    );
    return rows[0]!;
  });
  return {
    id: row.id,
    name: row.name,
    key,
    key_prefix: row.key_prefix,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

export async function listApiKeys(ctx: AppContext, user: UserPrincipal, projectId: string) {
  await requireProjectRole(ctx.pg.pool, user, projectId, 'VIEWER');
  const { rows } = await ctx.pg.pool.query<KeyRow>(
    `SELECT id, name, key_prefix, created_at, expires_at, last_used_at FROM api_keys
      WHERE project_id = $1 AND revoked_at IS NULL ORDER BY created_at, id`,
    [projectId],
  );
  return { data: rows };
}

export async function revokeApiKey(ctx: AppContext, user: UserPrincipal, projectId: string, keyId: string) {
  await requireProjectRole(ctx.pg.pool, user, projectId, 'MEMBER');
  const { rows } = await ctx.pg.pool.query<{ id: string; name: string }>(
    `UPDATE api_keys SET revoked_at = now() WHERE project_id = $1 AND id::text = $2 AND revoked_at IS NULL RETURNING id, name`,
    [projectId, keyId],
  );
  if (!rows[0]) throw new NotFoundError('API key not found');
  forgetVerifiedKeys(ctx.pg, { keyId: rows[0].id });
  return { deleted: true, id: rows[0].id, name: rows[0].name };
}

export function whoami(key: ApiKeyPrincipal) {
  return { project_id: key.projectId, project_name: key.projectName, workspace_id: key.workspaceId, key_id: key.keyId };
}
