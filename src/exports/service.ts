import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError, RequestValidationError, TooManyRequestsError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import type { Predicate } from '../query/predicates.js';
import type { ExportFormat, ExportKind } from '../query/exports.js';
import { BUCKET_NOT_FOUND, bucketExists } from './buckets.js';
import { partName } from './plan.js';

/**
 * Exports (docs/exports.md; quality.md §6): a request is stored `queued` and handed to the worker
 * (src/exports/runner.ts, workers/exports.ts); nothing is read from ClickHouse on the request path.
 * Caps: a window of at most MAX_WINDOW_DAYS, at most EXPORT_CONCURRENT_PER_PROJECT exports queued or
 * running per project (429 past it), at most EXPORT_MAX_ROWS rows an export (the worker fails it).
 */

export const EXPORTS_QUEUE = 'exports';
export type ExportJob = { export_id: string };
export const EXPORT_NOT_FOUND = 'export not found';
export const MAX_WINDOW_DAYS = 400;
const DAY_MS = 86_400_000;

export type ExportInput = {
  kind: ExportKind;
  format: ExportFormat;
  start_time: string;
  end_time: string;
  filters?: Predicate[] | null;
  destination?: { bucket_id: string } | null;
};

export type ExportRow = {
  id: string;
  project_id: string;
  kind: ExportKind;
  format: ExportFormat;
  start_time: Date;
  end_time: Date;
  filters: Predicate[];
  bucket_id: string | null;
  to_bucket: boolean;
  schedule_id: string | null;
  status: 'queued' | 'running' | 'completed' | 'failed';
  parts: unknown;
  parts_done: number;
  rows: string | number;
  bytes: string | number;
  objects: string[];
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
  expires_at: Date | null;
};

export type ExportRecord = {
  export_id: string;
  kind: ExportKind;
  format: ExportFormat;
  status: ExportRow['status'];
  start_time: string;
  end_time: string;
  filters: Predicate[];
  destination: { bucket_id: string | null } | null;
  schedule_id: string | null;
  rows: number;
  bytes: number;
  objects: string[];
  error: string | null;
  created_at: string;
  finished_at: string | null;
  expires_at: string | null;
};

export function recordOf(row: ExportRow): ExportRecord {
  return {
    export_id: row.id,
    kind: row.kind,
    format: row.format,
    status: row.status,
    start_time: row.start_time.toISOString(),
    end_time: row.end_time.toISOString(),
    filters: row.filters,
    destination: row.to_bucket ? { bucket_id: row.bucket_id } : null,
    schedule_id: row.schedule_id,
    rows: Number(row.rows),
    bytes: Number(row.bytes),
    objects: row.objects,
    error: row.error,
    created_at: row.created_at.toISOString(),
    finished_at: row.finished_at?.toISOString() ?? null,
    expires_at: row.expires_at?.toISOString() ?? null,
  };
}

export async function findExport(db: Queryable, projectId: string, id: string): Promise<ExportRow> {
  if (!isUuid(id)) throw new NotFoundError(EXPORT_NOT_FOUND);
  const { rows } = await db.query<ExportRow>('SELECT * FROM exports WHERE id = $1 AND project_id = $2', [
    id,
    projectId,
  ]);
  if (!rows[0]) throw new NotFoundError(EXPORT_NOT_FOUND);
  return rows[0];
}

function invalid(loc: (string | number)[], msg: string, input?: unknown): RequestValidationError {
  return new RequestValidationError([{ loc, msg, type: 'value_error', ...(input === undefined ? {} : { input }) }]);
}

/** Where a download's parts are kept: DATA_DIR/exports/{export_id}/ (the api and the worker share DATA_DIR). */
export function downloadDir(ctx: AppContext, exportId: string): string {
  return path.resolve(ctx.config.dataDir, 'exports', exportId);
}

/** Queues the worker's run of an export; a failed add is retried by the periodic pass (queued, no lease). */
export async function enqueueExport(ctx: AppContext, exportId: string): Promise<void> {
  await ctx.queue
    .queue<ExportJob>(EXPORTS_QUEUE)
    .add(
      'run',
      { export_id: exportId },
      { jobId: `export-${exportId}-${Date.now()}`, removeOnComplete: 100, removeOnFail: 100 },
    );
}

/**
 * Stores a queued export. The project's row is locked while the running exports are counted, so two
 * requests at once can't both take the last place.
 */
export async function insertExport(
  ctx: AppContext,
  projectId: string,
  input: ExportInput & { schedule_id?: string },
): Promise<ExportRow> {
  const startMs = Date.parse(input.start_time);
  const endMs = Date.parse(input.end_time);
  if (!(endMs > startMs)) throw invalid(['body', 'end_time'], 'end_time must be after start_time', input.end_time);
  if (endMs - startMs > MAX_WINDOW_DAYS * DAY_MS)
    throw invalid(['body', 'end_time'], `the window is at most ${MAX_WINDOW_DAYS} days`, input.end_time);
  const bucketId = input.destination?.bucket_id ?? null;
  if (bucketId !== null && !(await bucketExists(ctx.pg.pool, projectId, bucketId)))
    throw new NotFoundError(BUCKET_NOT_FOUND);
  const cap = ctx.config.exports.concurrentPerProject;
  return withTransaction(ctx.pg.pool, async (tx) => {
    await tx.query('SELECT 1 FROM projects WHERE id = $1 FOR UPDATE', [projectId]);
    const { rows } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM exports WHERE project_id = $1 AND status IN ('queued', 'running')`,
      [projectId],
    );
    if (rows[0]!.n >= cap)
      throw new TooManyRequestsError(
        `a project runs at most ${cap} exports at a time; try again when one of them has finished`,
        30,
      );
    const inserted = await tx.query<ExportRow>(
      `INSERT INTO exports (id, project_id, kind, format, start_time, end_time, filters, bucket_id, to_bucket, schedule_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10) RETURNING *`,
      [
        newId(),
        projectId,
        input.kind,
        input.format,
        new Date(startMs),
        new Date(endMs),
        JSON.stringify(input.filters ?? []),
        bucketId,
        bucketId !== null,
        input.schedule_id ?? null,
      ],
    );
    return inserted.rows[0]!;
  });
}

export async function createExport(
  ctx: AppContext,
  projectId: string,
  input: ExportInput,
): Promise<{ export_id: string; status: 'queued' }> {
  const row = await insertExport(ctx, projectId, input);
  // Stored first: if the queue is away, the periodic pass queues it later.
  await enqueueExport(ctx, row.id).catch(() => {});
  return { export_id: row.id, status: 'queued' };
}

export async function getExport(db: Queryable, projectId: string, id: string): Promise<ExportRecord> {
  return recordOf(await findExport(db, projectId, id));
}

export async function listExports(
  db: Queryable,
  projectId: string,
  q: { limit: number; page: number },
): Promise<{ data: ExportRecord[]; meta: { page: number; limit: number; total: number } }> {
  const [{ rows }, count] = await Promise.all([
    db.query<ExportRow>('SELECT * FROM exports WHERE project_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3', [
      projectId,
      q.limit,
      q.page * q.limit,
    ]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM exports WHERE project_id = $1', [projectId]),
  ]);
  return { data: rows.map(recordOf), meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  parquet: 'application/vnd.apache.parquet',
  jsonl: 'application/x-ndjson',
  csv: 'text/csv',
};

/**
 * A completed download's file: the parts one after the other (a CSV's header is in the first part
 * only), read from disk as they are sent. Parquet files can't be joined so: an export of several
 * Parquet parts is downloaded a part at a time (`part`, 1-based).
 */
export async function openDownload(
  ctx: AppContext,
  projectId: string,
  id: string,
  part: number | undefined,
): Promise<{ body: Readable; contentType: string; fileName: string }> {
  const row = await findExport(ctx.pg.pool, projectId, id);
  if (row.to_bucket) throw new ConflictError('this export was written to a bucket; read its objects there');
  if (row.status !== 'completed')
    throw new ConflictError(`this export is ${row.status}; it can be downloaded once it has completed`);
  if (row.expires_at && row.expires_at.getTime() <= Date.now())
    throw new NotFoundError('this export’s file was deleted 24 hours after it completed');
  const count = row.objects.length;
  if (part !== undefined && part > Math.max(count, 1))
    throw invalid(['query', 'part'], `this export has ${count} part${count === 1 ? '' : 's'}`, part);
  if (row.format === 'parquet' && count > 1 && part === undefined)
    throw new ConflictError(
      `this Parquet export has ${count} parts; download them one at a time with ?part=1 to ?part=${count}`,
    );
  const dir = downloadDir(ctx, row.id);
  const names = part === undefined ? row.objects : row.objects.slice(part - 1, part);
  async function* files() {
    for (const name of names) yield* fs.createReadStream(path.join(dir, path.basename(name)));
  }
  const suffix = part === undefined ? '' : `-${partName(part - 1, row.format).replace(/\.\w+$/, '')}`;
  return {
    body: Readable.from(files(), { objectMode: false }),
    contentType: CONTENT_TYPES[row.format],
    fileName: `export-${row.id}${suffix}.${row.format}`,
  };
}
