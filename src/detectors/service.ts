import type { z } from 'zod';
import { isUuid, newId } from '../ids.js';
import type { AppContext } from '../context.js';
import { requireProjectRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { zodIssuesToValidation } from '../zod-issues.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { parseConfig, type DetectorConfig, type DetectorType, type SqlConfig } from './config.js';
import { columnProblem, describeSqlColumns } from './sql-columns.js';

/**
 * The detector catalog (docs/signals.md, "Detectors"). Reads take a project already resolved by
 * `resolveReadProject`; writes check MEMBER+ themselves, inside their transaction. Running detectors
 * is src/signals/detection.ts.
 */

/** The catalog's size bound (docs/limits.md, "Catalogs"; 409 beyond): every pass runs each one. */
export const MAX_DETECTORS_PER_PROJECT = 50;

/** Every project's default detector (issue 11): every error span, grouped by error type and span name. */
export const DEFAULT_DETECTOR = { name: 'Errors', type: 'error', config: {} } as const;

const NOT_FOUND = 'detector not found';

export type DetectorRecord = {
  id: string;
  name: string;
  type: DetectorType;
  config: DetectorConfig;
  enabled: boolean;
  created_at: string;
  update_time: string;
};
type DetectorRow = Omit<DetectorRecord, 'created_at' | 'update_time'> & { created_at: Date; update_time: Date };

const COLUMNS = 'id, name, type, config, enabled, created_at, update_time';

function record(row: DetectorRow): DetectorRecord {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    config: row.config,
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    update_time: row.update_time.toISOString(),
  };
}

/**
 * Creates the project's default "Errors" detector unless it has one. Run it inside the caller's
 * transaction, on that transaction's client (embedded PGlite deadlocks on a pool query inside a
 * transaction). Idempotent under races: the insert conflicts on the one-default-per-project index.
 */
export async function ensureDefaultDetector(tx: Queryable, projectId: string): Promise<boolean> {
  // $1 id, $2 project id, $3 name, $4 type, $5 config
  const inserted = await tx.query(
    `INSERT INTO detectors (id, project_id, name, type, config, enabled, is_default, created_by)
     SELECT $1::uuid, p.id, $3::text, $4::text, $5::jsonb, true, true, p.created_by FROM projects p WHERE p.id = $2
     ON CONFLICT (project_id) WHERE is_default DO NOTHING`,
    [newId(), projectId, DEFAULT_DETECTOR.name, DEFAULT_DETECTOR.type, JSON.stringify(DEFAULT_DETECTOR.config)],
  );
  return (inserted.rowCount ?? 0) > 0;
}

/** The default detector first, then by creation time. Not paginated: a project holds at most 50. */
export async function listDetectors(db: Queryable, projectId: string): Promise<{ data: DetectorRecord[] }> {
  const { rows } = await db.query<DetectorRow>(
    `SELECT ${COLUMNS} FROM detectors WHERE project_id = $1 ORDER BY is_default DESC, created_at, id`,
    [projectId],
  );
  return { data: rows.map(record) };
}

export async function getDetector(db: Queryable, projectId: string, detectorId: string): Promise<DetectorRecord> {
  if (!isUuid(detectorId)) throw new NotFoundError(NOT_FOUND);
  const { rows } = await db.query<DetectorRow>(`SELECT ${COLUMNS} FROM detectors WHERE id = $1 AND project_id = $2`, [
    detectorId,
    projectId,
  ]);
  if (!rows[0]) throw new NotFoundError(NOT_FOUND);
  return record(rows[0]);
}

export type CreateDetectorInput = {
  project_id: string;
  name: string;
  type: DetectorType;
  config?: unknown;
  enabled?: boolean;
};
export type UpdateDetectorInput = {
  project_id: string;
  name?: string;
  type?: DetectorType;
  config?: unknown;
  enabled?: boolean;
};

/** 422 at `body.config…` for a config its type refuses (zod issues, so the entries read like every other). */
function invalidConfig(issues: z.core.$ZodIssue[], body: unknown): RequestValidationError {
  return new RequestValidationError(
    zodIssuesToValidation(
      'body',
      issues.map((i) => ({ ...i, path: ['config', ...i.path] })),
      body,
    ),
  );
}

/**
 * The config as stored: parsed for its type, and for a sql detector, its query's columns checked
 * against the engine (outside any transaction: a ClickHouse round trip must not hold Postgres).
 */
async function checkedConfig(
  ctx: AppContext,
  projectId: string,
  type: DetectorType,
  raw: unknown,
  body: unknown,
): Promise<DetectorConfig> {
  const parsed = parseConfig(type, raw);
  if (!parsed.ok) throw invalidConfig(parsed.issues, body);
  if (type === 'sql') {
    const described = await describeSqlColumns(ctx, projectId, (parsed.config as SqlConfig).query);
    const message = 'problem' in described ? described.problem : columnProblem(described.columns)?.message;
    if (message)
      throw invalidConfig(
        [{ code: 'custom', path: ['query'], message, input: (parsed.config as SqlConfig).query } as z.core.$ZodIssue],
        body,
      );
  }
  return parsed.config;
}

export async function createDetector(
  ctx: AppContext,
  user: UserPrincipal,
  input: CreateDetectorInput,
): Promise<DetectorRecord> {
  // The role first, so a caller without it learns nothing from the config checks.
  await requireProjectRole(ctx.pg.pool, user, input.project_id, 'MEMBER');
  const config = await checkedConfig(ctx, input.project_id, input.type, input.config, input);
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    // The project row lock serialises concurrent creates, so the count below stays true until commit.
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE', [input.project_id]);
    const { rows } = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM detectors WHERE project_id = $1', [
      input.project_id,
    ]);
    if (rows[0]!.n >= MAX_DETECTORS_PER_PROJECT) {
      throw new ConflictError(
        `a project holds at most ${MAX_DETECTORS_PER_PROJECT} detectors; delete one before creating another`,
      );
    }
    const inserted = await tx.query<DetectorRow>(
      `INSERT INTO detectors (id, project_id, name, type, config, enabled, created_by) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7) RETURNING ${COLUMNS}`,
      [newId(), input.project_id, input.name, input.type, JSON.stringify(config), input.enabled ?? true, user.userId],
    );
    return record(inserted.rows[0]!);
  });
}

/**
 * Edits name, type, config and enabled. The resulting config is checked against the resulting type
 * (422 at body.config). Re-enabling a detector starts it from now: it does not replay what arrived
 * while it was off (`scan_from`); an edited config applies from the detector's current watermark.
 */
export async function updateDetector(
  ctx: AppContext,
  user: UserPrincipal,
  detectorId: string,
  input: UpdateDetectorInput,
): Promise<DetectorRecord> {
  await requireProjectRole(ctx.pg.pool, user, input.project_id, 'MEMBER');
  const current = await getDetector(ctx.pg.pool, input.project_id, detectorId);
  const type = input.type ?? current.type;
  const rawConfig = input.config !== undefined ? input.config : type === current.type ? current.config : undefined;
  const config =
    input.config !== undefined || type !== current.type
      ? await checkedConfig(ctx, input.project_id, type, rawConfig, { ...input, config: rawConfig })
      : current.config;
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    const updated = await tx.query<DetectorRow>(
      `UPDATE detectors
          SET name = COALESCE($3, name), type = $4, config = $5::jsonb, enabled = COALESCE($6, enabled),
              scan_from = CASE WHEN $6 AND NOT enabled THEN now() ELSE scan_from END,
              watermark_ms = CASE WHEN $6 AND NOT enabled THEN NULL ELSE watermark_ms END,
              update_time = now()
        WHERE id = $1 AND project_id = $2
        RETURNING ${COLUMNS}`,
      [detectorId, input.project_id, input.name ?? null, type, JSON.stringify(config), input.enabled ?? null],
    );
    if (!updated.rows[0]) throw new NotFoundError(NOT_FOUND);
    return record(updated.rows[0]);
  });
}

/**
 * Deletes a detector with its signals (their findings stay in ClickHouse until the project's retention
 * removes them; nothing lists them without their signal). The default "Errors" detector stays (409):
 * disable it instead, as the default dashboard stays.
 */
export async function deleteDetector(
  ctx: AppContext,
  user: UserPrincipal,
  detectorId: string,
  projectId: string,
): Promise<{ deleted: true; id: string }> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (!isUuid(detectorId)) throw new NotFoundError(NOT_FOUND);
    const { rows } = await tx.query<{ is_default: boolean }>(
      'SELECT is_default FROM detectors WHERE id = $1 AND project_id = $2 FOR UPDATE',
      [detectorId, projectId],
    );
    if (!rows[0]) throw new NotFoundError(NOT_FOUND);
    if (rows[0].is_default)
      throw new ConflictError("the project's default Errors detector cannot be deleted; disable it instead");
    await tx.query('DELETE FROM detectors WHERE id = $1', [detectorId]);
    return { deleted: true as const, id: detectorId };
  });
}
