import type pg from 'pg';
import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { isRefusedLiteralHost } from '../outbound/addresses.js';
import { SecretBoxError } from '../secrets/secret-box.js';
type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };
import { DEFAULT_TEST_MODELS, testCall, type OpenConnection, type Provider } from './providers.js';

/**
 * LLM connections (docs/evaluators.md, "LLM connections"): a project's provider accounts. The key is
 * sealed by the deployment's secret box before it is stored and opened only to make a call; answers
 * carry its last 4 characters. Routes check the caller's role (user credentials only); every read and
 * write here is scoped by the project it is given.
 */

/** The catalog's size bound (docs/limits.md, "Catalogs"). */
export const MAX_CONNECTIONS_PER_PROJECT = 50;
export const CONNECTION_NOT_FOUND = 'LLM connection not found';
const UNIQUE_VIOLATION = '23505';
const CONNECTION_IN_USE = 'an evaluator uses this LLM connection; change or delete that evaluator first';

export type ConnectionInput = {
  name: string;
  provider: Provider;
  base_url?: string | null;
  api_key: string;
  default_model?: string | null;
  extra_headers?: Record<string, string> | null;
};
export type ConnectionUpdate = Partial<Omit<ConnectionInput, 'provider'>>;

type ConnectionRow = {
  id: string;
  project_id: string;
  name: string;
  provider: Provider;
  base_url: string | null;
  api_key_sealed: string;
  key_preview: string;
  default_model: string | null;
  extra_headers_sealed: string | null;
  extra_header_names: string[];
  created_at: Date;
  updated_at: Date;
};

export type ConnectionRecord = {
  id: string;
  project_id: string;
  name: string;
  provider: Provider;
  base_url: string | null;
  key_preview: string;
  default_model: string | null;
  extra_header_names: string[];
  created_at: string;
  updated_at: string;
};

const COLUMNS =
  'id, project_id, name, provider, base_url, api_key_sealed, key_preview, default_model, extra_headers_sealed, extra_header_names, created_at, updated_at';

function recordOf(row: ConnectionRow): ConnectionRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    provider: row.provider,
    base_url: row.base_url,
    key_preview: row.key_preview,
    default_model: row.default_model,
    extra_header_names: row.extra_header_names,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** The last 4 characters, or fewer of a very short key (never the whole of a key of 8 or fewer). */
export function keyPreview(key: string): string {
  return key.length > 8 ? key.slice(-4) : key.slice(-Math.min(4, Math.floor(key.length / 2)));
}

function invalid(loc: (string | number)[], msg: string, input?: unknown): RequestValidationError {
  return new RequestValidationError([{ loc, msg, type: 'value_error', ...(input === undefined ? {} : { input }) }]);
}

/** `base_url` follows the webhook address rules (src/outbound/addresses.ts); `openai_compatible` needs one. */
function checkBaseUrl(ctx: AppContext, provider: Provider, baseUrl: string | null | undefined): void {
  if (baseUrl == null) {
    if (provider === 'openai_compatible')
      throw invalid(['body', 'base_url'], 'base_url is required for an openai_compatible connection');
    return;
  }
  if (!ctx.config.llmConnections.allowPrivate && isRefusedLiteralHost(new URL(baseUrl)))
    throw invalid(
      ['body', 'base_url'],
      'base_url points at a loopback or private address; set LLM_CONNECTION_ALLOW_PRIVATE=true to allow it',
      baseUrl,
    );
}

async function findRow(db: Queryable, projectId: string, id: string): Promise<ConnectionRow> {
  if (!isUuid(id)) throw new NotFoundError(CONNECTION_NOT_FOUND);
  const { rows } = await db.query<ConnectionRow>(
    `SELECT ${COLUMNS} FROM llm_connections WHERE id = $1 AND project_id = $2`,
    [id, projectId],
  );
  if (!rows[0]) throw new NotFoundError(CONNECTION_NOT_FOUND);
  return rows[0];
}

/** Whether `id` names a connection of this project (an evaluator's scorer may only use its own project's). */
export async function connectionExists(db: Queryable, projectId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await db.query('SELECT 1 FROM llm_connections WHERE id = $1 AND project_id = $2', [id, projectId]);
  return rows.length > 0;
}

/** The connection with its key and headers opened, for a call; only this project's. */
export async function openConnection(
  ctx: AppContext,
  projectId: string,
  id: string,
): Promise<OpenConnection & { defaultModel: string | null }> {
  return openSealed(ctx, await findRow(ctx.pg.pool, projectId, id));
}

/** The columns of a connection a call needs, read by a caller's own statement (the evaluator's claim). */
export type SealedConnection = Pick<
  ConnectionRow,
  'provider' | 'base_url' | 'api_key_sealed' | 'extra_headers_sealed' | 'default_model'
>;

/** A connection row with its key and headers opened, for a call. */
export function openSealed(ctx: AppContext, row: SealedConnection): OpenConnection & { defaultModel: string | null } {
  return {
    provider: row.provider,
    baseUrl: row.base_url,
    apiKey: ctx.secrets.open(row.api_key_sealed),
    extraHeaders: row.extra_headers_sealed
      ? (JSON.parse(ctx.secrets.open(row.extra_headers_sealed)) as Record<string, string>)
      : {},
    defaultModel: row.default_model,
  };
}

export async function listConnections(
  db: Queryable,
  projectId: string,
  q: { limit: number; page: number },
): Promise<Page<ConnectionRecord>> {
  const [{ rows }, count] = await Promise.all([
    db.query<ConnectionRow>(
      `SELECT ${COLUMNS} FROM llm_connections WHERE project_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [projectId, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM llm_connections WHERE project_id = $1', [projectId]),
  ]);
  return { data: rows.map(recordOf), meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

export async function getConnection(db: Queryable, projectId: string, id: string): Promise<ConnectionRecord> {
  return recordOf(await findRow(db, projectId, id));
}

function sealedHeaders(ctx: AppContext, headers: Record<string, string> | null | undefined) {
  const entries = Object.entries(headers ?? {});
  return {
    sealed: entries.length ? ctx.secrets.seal(JSON.stringify(Object.fromEntries(entries))) : null,
    names: JSON.stringify(entries.map(([name]) => name)),
  };
}

function duplicateName(error: unknown): never {
  if ((error as { code?: string }).code === UNIQUE_VIOLATION)
    throw new ConflictError('an LLM connection of this project already has that name');
  throw error;
}

export async function createConnection(
  ctx: AppContext,
  projectId: string,
  userId: string | null,
  input: ConnectionInput,
): Promise<ConnectionRecord> {
  checkBaseUrl(ctx, input.provider, input.base_url);
  const { rows } = await ctx.pg.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM llm_connections WHERE project_id = $1',
    [projectId],
  );
  if (rows[0]!.n >= MAX_CONNECTIONS_PER_PROJECT)
    throw new ConflictError(
      `a project holds at most ${MAX_CONNECTIONS_PER_PROJECT} LLM connections; delete one before creating another`,
    );
  const id = newId();
  const headers = sealedHeaders(ctx, input.extra_headers);
  try {
    await ctx.pg.pool.query(
      `INSERT INTO llm_connections (id, project_id, name, provider, base_url, api_key_sealed, key_preview, default_model,
                                    extra_headers_sealed, extra_header_names, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)`,
      [
        id,
        projectId,
        input.name,
        input.provider,
        input.base_url ?? null,
        ctx.secrets.seal(input.api_key),
        keyPreview(input.api_key),
        input.default_model ?? null,
        headers.sealed,
        headers.names,
        userId,
      ],
    );
  } catch (error) {
    duplicateName(error);
  }
  return getConnection(ctx.pg.pool, projectId, id);
}

/** Edits the given fields; a new `api_key` is sealed again (under the current key: how values rotate). */
export async function updateConnection(
  ctx: AppContext,
  projectId: string,
  id: string,
  input: ConnectionUpdate,
): Promise<ConnectionRecord> {
  const row = await findRow(ctx.pg.pool, projectId, id);
  const baseUrl = input.base_url !== undefined ? input.base_url : row.base_url;
  checkBaseUrl(ctx, row.provider, baseUrl);
  const headers = input.extra_headers !== undefined ? sealedHeaders(ctx, input.extra_headers) : null;
  try {
    await ctx.pg.pool.query(
      `UPDATE llm_connections SET name = $3, base_url = $4, default_model = $5,
              api_key_sealed = COALESCE($6, api_key_sealed), key_preview = COALESCE($7, key_preview),
              extra_headers_sealed = CASE WHEN $8 THEN $9 ELSE extra_headers_sealed END,
              extra_header_names = CASE WHEN $8 THEN $10::jsonb ELSE extra_header_names END,
              updated_at = now()
        WHERE id = $1 AND project_id = $2`,
      [
        row.id,
        projectId,
        input.name ?? row.name,
        baseUrl,
        input.default_model !== undefined ? input.default_model : row.default_model,
        input.api_key !== undefined ? ctx.secrets.seal(input.api_key) : null,
        input.api_key !== undefined ? keyPreview(input.api_key) : null,
        headers !== null,
        headers?.sealed ?? null,
        headers?.names ?? '[]',
      ],
    );
  } catch (error) {
    duplicateName(error);
  }
  return getConnection(ctx.pg.pool, projectId, row.id);
}

/** 409 while an evaluator's scorer uses it: deleting it would leave that evaluator unable to run. */
export async function deleteConnection(
  db: pg.Pool,
  projectId: string,
  id: string,
): Promise<{ deleted: true; id: string }> {
  if (!isUuid(id)) throw new NotFoundError(CONNECTION_NOT_FOUND);
  return withTransaction(db, async (tx) => {
    // The row lock keeps an evaluator from taking the connection up between the check and the delete.
    const { rows } = await tx.query('SELECT 1 FROM llm_connections WHERE id = $1 AND project_id = $2 FOR UPDATE', [
      id,
      projectId,
    ]);
    if (!rows[0]) throw new NotFoundError(CONNECTION_NOT_FOUND);
    const used = await tx.query('SELECT 1 FROM evaluators WHERE connection_id = $1 LIMIT 1', [id]);
    if (used.rows.length > 0) throw new ConflictError(CONNECTION_IN_USE);
    await tx.query('DELETE FROM llm_connections WHERE id = $1', [id]);
    return { deleted: true as const, id };
  });
}

const KEY_UNREADABLE = 'the stored API key can not be opened with the configured secrets keys; set the key again';

/** `POST /llm-connections/{id}/test`: one small call; 200 either way, the failure in a fixed sentence. */
export async function testConnection(
  ctx: AppContext,
  projectId: string,
  id: string,
  model: string | undefined,
): Promise<{ ok: true; model: string; latency_ms: number } | { ok: false; error: string }> {
  let connection: Awaited<ReturnType<typeof openConnection>>;
  try {
    connection = await openConnection(ctx, projectId, id);
  } catch (error) {
    if (error instanceof SecretBoxError) return { ok: false, error: KEY_UNREADABLE };
    throw error;
  }
  const chosen =
    model ??
    connection.defaultModel ??
    (connection.provider === 'openai_compatible' ? undefined : DEFAULT_TEST_MODELS[connection.provider]);
  if (chosen === undefined)
    throw invalid(['body', 'model'], 'name a model to test: this connection has no default_model');
  const result = await testCall(connection, chosen, ctx.config.llmConnections);
  return result.ok ? { ok: true, model: chosen, latency_ms: result.latencyMs } : { ok: false, error: result.error };
}
