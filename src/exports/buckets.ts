import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import { isRefusedLiteralHost } from '../outbound/addresses.js';

/**
 * Export buckets (docs/exports.md, "Buckets"): a project's S3-compatible destinations. The access key
 * id and the secret are sealed by the deployment's secret box before they are stored and opened only
 * by the export worker to write; no answer carries either. `endpoint` follows the webhook address
 * rules (src/outbound/addresses.ts) unless EXPORT_ALLOW_PRIVATE=true: a literal private address is
 * refused here, and a name resolving to one when the worker connects (src/exports/bucket-writer.ts).
 */

export const BUCKET_NOT_FOUND = 'export bucket not found';
export const MAX_BUCKETS_PER_PROJECT = 20;
const UNIQUE_VIOLATION = '23505';
// A schedule's reference (ON DELETE RESTRICT) refuses the delete with one of these.
const REFERENCED = new Set(['23503', '23001']);

export type BucketInput = {
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  prefix?: string | null;
  access_key_id: string;
  secret_access_key: string;
  force_path_style?: boolean | null;
};

type BucketRow = {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  access_key_id_sealed: string;
  secret_access_key_sealed: string;
  force_path_style: boolean;
  created_at: Date;
};

export type BucketRecord = {
  id: string;
  project_id: string;
  name: string;
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  force_path_style: boolean;
  created_at: string;
};

/** What the worker needs to write: the keys opened. Never answered, never logged. */
export type OpenBucket = {
  endpoint: string;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
};

const COLUMNS =
  'id, project_id, name, endpoint, region, bucket, prefix, access_key_id_sealed, secret_access_key_sealed, force_path_style, created_at';

function recordOf(row: BucketRow): BucketRecord {
  return {
    id: row.id,
    project_id: row.project_id,
    name: row.name,
    endpoint: row.endpoint,
    region: row.region,
    bucket: row.bucket,
    prefix: row.prefix,
    force_path_style: row.force_path_style,
    created_at: row.created_at.toISOString(),
  };
}

async function findRow(db: Queryable, projectId: string, id: string): Promise<BucketRow> {
  if (!isUuid(id)) throw new NotFoundError(BUCKET_NOT_FOUND);
  const { rows } = await db.query<BucketRow>(
    `SELECT ${COLUMNS} FROM export_buckets WHERE id = $1 AND project_id = $2`,
    [id, projectId],
  );
  if (!rows[0]) throw new NotFoundError(BUCKET_NOT_FOUND);
  return rows[0];
}

/** Whether `id` names a bucket of this project: an export or schedule may only name its own project's. */
export async function bucketExists(db: Queryable, projectId: string, id: string): Promise<boolean> {
  if (!isUuid(id)) return false;
  const { rows } = await db.query('SELECT 1 FROM export_buckets WHERE id = $1 AND project_id = $2', [id, projectId]);
  return rows.length > 0;
}

export async function openBucket(ctx: AppContext, projectId: string, id: string): Promise<OpenBucket> {
  const row = await findRow(ctx.pg.pool, projectId, id);
  return {
    endpoint: row.endpoint,
    region: row.region,
    bucket: row.bucket,
    prefix: row.prefix,
    forcePathStyle: row.force_path_style,
    accessKeyId: ctx.secrets.open(row.access_key_id_sealed),
    secretAccessKey: ctx.secrets.open(row.secret_access_key_sealed),
  };
}

export async function listBuckets(
  db: Queryable,
  projectId: string,
  q: { limit: number; page: number },
): Promise<{ data: BucketRecord[]; meta: { page: number; limit: number; total: number } }> {
  const [{ rows }, count] = await Promise.all([
    db.query<BucketRow>(
      `SELECT ${COLUMNS} FROM export_buckets WHERE project_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [projectId, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM export_buckets WHERE project_id = $1', [projectId]),
  ]);
  return { data: rows.map(recordOf), meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

export async function createBucket(ctx: AppContext, projectId: string, input: BucketInput): Promise<BucketRecord> {
  if (!ctx.config.exports.allowPrivate && isRefusedLiteralHost(new URL(input.endpoint)))
    throw new RequestValidationError([
      {
        loc: ['body', 'endpoint'],
        msg: 'endpoint points at a loopback or private address; set EXPORT_ALLOW_PRIVATE=true to allow it',
        type: 'value_error',
        input: input.endpoint,
      },
    ]);
  const { rows } = await ctx.pg.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM export_buckets WHERE project_id = $1',
    [projectId],
  );
  if (rows[0]!.n >= MAX_BUCKETS_PER_PROJECT)
    throw new ConflictError(
      `a project holds at most ${MAX_BUCKETS_PER_PROJECT} export buckets; delete one before creating another`,
    );
  const id = newId();
  try {
    await ctx.pg.pool.query(
      `INSERT INTO export_buckets (id, project_id, name, endpoint, region, bucket, prefix, access_key_id_sealed,
                                   secret_access_key_sealed, force_path_style)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        id,
        projectId,
        input.name,
        input.endpoint,
        input.region,
        input.bucket,
        input.prefix ?? '',
        ctx.secrets.seal(input.access_key_id),
        ctx.secrets.seal(input.secret_access_key),
        input.force_path_style ?? false,
      ],
    );
  } catch (error) {
    if ((error as { code?: string }).code === UNIQUE_VIOLATION)
      throw new ConflictError('an export bucket of this project already has that name');
    throw error;
  }
  return recordOf(await findRow(ctx.pg.pool, projectId, id));
}

/** 409 while a schedule writes to it; exports that wrote to it keep their objects' keys. */
export async function deleteBucket(
  db: Queryable,
  projectId: string,
  id: string,
): Promise<{ deleted: true; id: string }> {
  await findRow(db, projectId, id);
  try {
    await db.query('DELETE FROM export_buckets WHERE id = $1 AND project_id = $2', [id, projectId]);
  } catch (error) {
    if (REFERENCED.has(String((error as { code?: string }).code)))
      throw new ConflictError('an export schedule writes to this bucket; delete that schedule first');
    throw error;
  }
  return { deleted: true, id };
}
