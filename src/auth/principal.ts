import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { ForbiddenError, ServiceUnavailableError, UnauthorizedError } from '../errors.js';
import { looksLikeJwt } from './access-token.js';
import { API_KEY_PATTERN, hashToken } from './secrets.js';
import { authPool } from '../stores/postgres.js';
import { isUuid } from '../ids.js';
import { noteKeyUsed } from './key-usage.js';
import { verifiedKey } from './key-cache.js';

export type ApiKeyPrincipal = {
  kind: 'api_key';
  keyId: string;
  projectId: string;
  projectName: string;
  workspaceId: string;
  /** The project's retention, stamped on every span ingested with this key (per-row TTL). */
  traceTtlDays: number;
};

export type UserPrincipal = {
  kind: 'user';
  userId: string;
  sessionId: string;
  email: string;
  name: string;
  via: 'session' | 'access_token';
};

export type Principal = ApiKeyPrincipal | UserPrincipal;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export const API_KEY_ONLY_DETAIL = 'this operation requires a project API key; user credentials are not accepted here';
export const USER_LOGIN_REQUIRED_DETAIL = 'this operation requires a user login; API keys are project-scoped';
const UNVERIFIABLE_DETAIL = 'the credential could not be verified; retry later';

/** The bearer credential of a request, or 401 when the header is absent or malformed. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer[ ]+([^\s]+)\s*$/i.exec(header) : null;
  if (!match)
    throw new UnauthorizedError("missing or malformed Authorization header; send 'Authorization: Bearer <credential>'");
  return match[1]!;
}

/**
 * The API key of `Authorization: Basic base64(<anything>:<API key>)`, for the OTLP routes only: some
 * OTLP exporters and the Langfuse SDK (public key : secret key) only send Basic. Undefined when the
 * header is not Basic; 401 when it is Basic without an API key as its password.
 */
export function basicApiKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Basic[ ]+([A-Za-z0-9+/_-]+={0,2})\s*$/i.exec(header) : null;
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const secret = decoded.slice(decoded.indexOf(':') + 1);
  if (!decoded.includes(':') || !secret.startsWith('sl_')) throw new UnauthorizedError(BASIC_DETAIL);
  return secret;
}

const BASIC_DETAIL = "Basic credentials must carry a project API key as the password: 'Basic base64(<any>:sl_…)'";

/**
 * Resolves a bearer credential to a principal: an API key (`sl_` + UUID), a CLI access token (JWT,
 * checked against its live session so logout revokes it at once) or a session token.
 * 401 for anything invalid, expired or revoked; 503 when the credential store can't answer.
 */
export async function resolvePrincipal(ctx: AppContext, token: string): Promise<Principal> {
  try {
    if (token.startsWith('sl_')) {
      if (!API_KEY_PATTERN.test(token)) throw new UnauthorizedError();
      const keyHash = hashToken(token);
      const key = await verifiedKey(ctx.pg, keyHash, () => liveKey(ctx, keyHash));
      if (!key) throw new UnauthorizedError();
      noteKeyUsed(ctx.pg, key.keyId);
      return key;
    }
    if (looksLikeJwt(token)) {
      const claims = await ctx.tokens.verify(token);
      if (!claims || !isUuid(claims.sessionId) || !isUuid(claims.userId)) throw new UnauthorizedError();
      const user = await liveSession(ctx, 's.id = $1 AND s.user_id = $2', [claims.sessionId, claims.userId]);
      return { ...user, via: 'access_token' };
    }
    const user = await liveSession(ctx, 's.token_hash = $1', [hashToken(token)]);
    return { ...user, via: 'session' };
  } catch (error) {
    if (error instanceof UnauthorizedError) throw error;
    throw new ServiceUnavailableError(UNVERIFIABLE_DETAIL);
  }
}

async function liveKey(ctx: AppContext, keyHash: string) {
  const { rows } = await authPool(ctx.pg).query<{
    id: string;
    project_id: string;
    project_name: string;
    workspace_id: string;
    trace_ttl_days: number;
    expires_at: Date | null;
  }>(
    `SELECT k.id, k.project_id, p.name AS project_name, p.workspace_id, p.trace_ttl_days, k.expires_at
       FROM api_keys k JOIN projects p ON p.id = k.project_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND p.deleted_at IS NULL
        AND (k.expires_at IS NULL OR k.expires_at > now())`,
    [keyHash],
  );
  const row = rows[0];
  if (!row) return undefined;
  const principal: ApiKeyPrincipal = {
    kind: 'api_key',
    keyId: row.id,
    projectId: row.project_id,
    projectName: row.project_name,
    workspaceId: row.workspace_id,
    traceTtlDays: row.trace_ttl_days,
  };
  return { principal, expiresAt: row.expires_at };
}

async function liveSession(ctx: AppContext, where: string, params: string[]): Promise<Omit<UserPrincipal, 'via'>> {
  const { rows } = await authPool(ctx.pg).query<{ id: string; user_id: string; email: string; name: string }>(
    `SELECT s.id, s.user_id, u.email, u.name
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE ${where} AND s.revoked_at IS NULL AND s.expires_at > now()`,
    params,
  );
  const row = rows[0];
  if (!row) throw new UnauthorizedError();
  return { kind: 'user', userId: row.user_id, sessionId: row.id, email: row.email, name: row.name };
}

export type Accepts = 'api_key' | 'user' | 'any';

/**
 * The one authentication hook. It runs on `onRequest`, before the body is read, so an
 * unauthenticated caller learns nothing about validation and never makes us parse a large body.
 * - 'api_key': ingest-style routes; a user credential is refused with 401 (docs/authentication.md, rule 5).
 * - 'user': account writes and lists; an API key is refused with 403 (rule 2).
 * `basic`: also takes an API key sent as Basic credentials (`basicApiKey`); only the OTLP routes do.
 */
export function authenticate(
  ctx: AppContext,
  accepts: Accepts,
  options: { basic?: boolean } = {},
): onRequestHookHandler {
  return async function authHook(request: FastifyRequest, _reply: FastifyReply) {
    const principal = await resolvePrincipal(
      ctx,
      (options.basic ? basicApiKey(request) : undefined) ?? bearerToken(request),
    );
    if (accepts === 'api_key' && principal.kind !== 'api_key') throw new UnauthorizedError(API_KEY_ONLY_DETAIL);
    if (accepts === 'user' && principal.kind !== 'user') throw new ForbiddenError(USER_LOGIN_REQUIRED_DETAIL);
    request.principal = principal;
  };
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new UnauthorizedError();
  return request.principal;
}

export function userOf(request: FastifyRequest): UserPrincipal {
  const principal = principalOf(request);
  if (principal.kind !== 'user') throw new ForbiddenError(USER_LOGIN_REQUIRED_DETAIL);
  return principal;
}

export function apiKeyOf(request: FastifyRequest): ApiKeyPrincipal {
  const principal = principalOf(request);
  if (principal.kind !== 'api_key') throw new UnauthorizedError(API_KEY_ONLY_DETAIL);
  return principal;
}
