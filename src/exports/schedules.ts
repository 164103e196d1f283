import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import type { Predicate } from '../query/predicates.js';
import type { ExportFormat, ExportKind } from '../query/exports.js';
import { BUCKET_NOT_FOUND, bucketExists } from './buckets.js';
import { enqueueExport, insertExport } from './service.js';

/**
 * Export schedules (docs/exports.md, "Schedules"): once a day, at `hour_utc` or at the first tick
 * after it, the previous UTC day is exported to the schedule's bucket. The tick (every minute, the
 * exports' periodic pass; workers/exports.ts) moves `last_day` to that day in the same statement that
 * finds the schedule due, so however many workers tick, a day is exported once.
 */

export const SCHEDULE_NOT_FOUND = 'export schedule not found';
export const MAX_SCHEDULES_PER_PROJECT = 20;
const DAY_MS = 86_400_000;

export type ScheduleInput = {
  kind: ExportKind;
  format: ExportFormat;
  filters?: Predicate[] | null;
  bucket_id: string;
  hour_utc: number;
};

type ScheduleRow = {
  id: string;
  project_id: string;
  kind: ExportKind;
  format: ExportFormat;
  filters: Predicate[];
  bucket_id: string;
  hour_utc: number;
  last_day: string | null;
  created_at: Date;
};

export type ScheduleRecord = {
  id: string;
  kind: ExportKind;
  format: ExportFormat;
  filters: Predicate[];
  bucket_id: string;
  hour_utc: number;
  last_day: string | null;
  created_at: string;
};

const COLUMNS = `id, project_id, kind, format, filters, bucket_id, hour_utc, to_char(last_day, 'YYYY-MM-DD') AS last_day, created_at`;

function recordOf(row: ScheduleRow): ScheduleRecord {
  return {
    id: row.id,
    kind: row.kind,
    format: row.format,
    filters: row.filters,
    bucket_id: row.bucket_id,
    hour_utc: row.hour_utc,
    last_day: row.last_day,
    created_at: row.created_at.toISOString(),
  };
}

async function findRow(db: Queryable, projectId: string, id: string): Promise<ScheduleRow> {
  if (!isUuid(id)) throw new NotFoundError(SCHEDULE_NOT_FOUND);
  const { rows } = await db.query<ScheduleRow>(
    `SELECT ${COLUMNS} FROM export_schedules WHERE id = $1 AND project_id = $2`,
    [id, projectId],
  );
  if (!rows[0]) throw new NotFoundError(SCHEDULE_NOT_FOUND);
  return rows[0];
}

export async function createSchedule(
  ctx: AppContext,
  projectId: string,
  input: ScheduleInput,
): Promise<ScheduleRecord> {
  if (!(await bucketExists(ctx.pg.pool, projectId, input.bucket_id))) throw new NotFoundError(BUCKET_NOT_FOUND);
  const { rows } = await ctx.pg.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM export_schedules WHERE project_id = $1',
    [projectId],
  );
  if (rows[0]!.n >= MAX_SCHEDULES_PER_PROJECT)
    throw new ConflictError(
      `a project holds at most ${MAX_SCHEDULES_PER_PROJECT} export schedules; delete one before creating another`,
    );
  const id = newId();
  await ctx.pg.pool.query(
    `INSERT INTO export_schedules (id, project_id, kind, format, filters, bucket_id, hour_utc)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
    [id, projectId, input.kind, input.format, JSON.stringify(input.filters ?? []), input.bucket_id, input.hour_utc],
  );
  return recordOf(await findRow(ctx.pg.pool, projectId, id));
}

export async function getSchedule(db: Queryable, projectId: string, id: string): Promise<ScheduleRecord> {
  return recordOf(await findRow(db, projectId, id));
}

export async function listSchedules(
  db: Queryable,
  projectId: string,
  q: { limit: number; page: number },
): Promise<{ data: ScheduleRecord[]; meta: { page: number; limit: number; total: number } }> {
  const [{ rows }, count] = await Promise.all([
    db.query<ScheduleRow>(
      `SELECT ${COLUMNS} FROM export_schedules WHERE project_id = $1 ORDER BY created_at, id LIMIT $2 OFFSET $3`,
      [projectId, q.limit, q.page * q.limit],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM export_schedules WHERE project_id = $1', [projectId]),
  ]);
  return { data: rows.map(recordOf), meta: { page: q.page, limit: q.limit, total: count.rows[0]!.n } };
}

export async function deleteSchedule(
  db: Queryable,
  projectId: string,
  id: string,
): Promise<{ deleted: true; id: string }> {
  await findRow(db, projectId, id);
  await db.query('DELETE FROM export_schedules WHERE id = $1 AND project_id = $2', [id, projectId]);
  return { deleted: true, id };
}

/**
 * Starts the exports of the schedules due at `nowMs`: those whose hour has come today and whose
 * previous day is not exported yet. A schedule whose export can't be stored (its project runs its
 * most exports already) is tried again at the next tick. Answers the exports started.
 */
export async function runDueSchedules(
  ctx: AppContext,
  nowMs = Date.now(),
  options: { projectIds?: readonly string[] } = {},
): Promise<string[]> {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const yesterday = new Date(today - DAY_MS).toISOString().slice(0, 10);
  const hour = new Date(nowMs).getUTCHours();
  // `projectIds`: only those projects' schedules (tests sharing one Postgres database with others).
  const { rows } = await ctx.pg.pool.query<ScheduleRow>(
    `SELECT ${COLUMNS} FROM export_schedules
      WHERE hour_utc <= $1 AND (last_day IS NULL OR last_day < $2::date)
        AND ($3::uuid[] IS NULL OR project_id = ANY($3::uuid[]))
      ORDER BY created_at LIMIT 100`,
    [hour, yesterday, options.projectIds ? [...options.projectIds] : null],
  );
  const started: string[] = [];
  for (const schedule of rows) {
    const taken = await ctx.pg.pool.query(
      `UPDATE export_schedules SET last_day = $2::date WHERE id = $1 AND (last_day IS NULL OR last_day < $2::date)`,
      [schedule.id, yesterday],
    );
    if (taken.rowCount === 0) continue;
    try {
      const row = await insertExport(ctx, schedule.project_id, {
        kind: schedule.kind,
        format: schedule.format,
        start_time: new Date(today - DAY_MS).toISOString(),
        end_time: new Date(today).toISOString(),
        filters: schedule.filters,
        destination: { bucket_id: schedule.bucket_id },
        schedule_id: schedule.id,
      });
      await enqueueExport(ctx, row.id).catch(() => {});
      started.push(row.id);
    } catch {
      // Give the day back: the next tick tries again.
      await ctx.pg.pool.query(
        `UPDATE export_schedules SET last_day = $2::date - 1 WHERE id = $1 AND last_day = $2::date`,
        [schedule.id, yesterday],
      );
    }
  }
  return started;
}
