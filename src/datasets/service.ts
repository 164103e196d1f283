import type { AppContext } from '../context.js';
import { isUuid, newId } from '../ids.js';
import { NotFoundError } from '../errors.js';
import type { Queryable } from '../stores/postgres.js';
import type { TestCaseInput } from './test-case-input.js';
import { writeVersion } from './version-write.js';

/**
 * Datasets and their versions (docs/datasets.md). Every function takes a project already resolved by
 * the route (an API key's own project for writes; docs/authentication.md); another project's
 * dataset is a 404, never a 403, so ids of other projects are not confirmed.
 *
 * Decisions where the spec is silent (README, "Datasets and evaluations"): dataset names need not be
 * unique (every create inserts, like alerts); a version's `label` defaults to `v<number>`.
 */

export const DATASET_NOT_FOUND = 'dataset not found';

export type DatasetRecord = {
  id: string;
  dataset_id: string;
  name: string;
  description: string;
  version_count: number;
  created_at: string;
  updated_at: string;
};
export type VersionListItem = {
  id: string;
  dataset_version_id: string;
  version_number: number;
  label: string;
  test_case_count: number;
  created_at: string;
};
export type DatasetDetail = DatasetRecord & { versions: VersionListItem[] };

type DatasetRow = {
  id: string;
  name: string;
  description: string;
  version_count: number;
  created_at: Date;
  updated_at: Date;
};

function datasetRecord(row: DatasetRow): DatasetRecord {
  return {
    id: row.id,
    dataset_id: row.id,
    name: row.name,
    description: row.description,
    version_count: row.version_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const DATASET_COLUMNS = 'id, name, description, version_count, created_at, updated_at';

/** Newest first, paged like the trace list (`{data, meta}`). */
export async function listDatasets(db: Queryable, projectId: string, limit: number, page: number) {
  const [items, total] = await Promise.all([
    db.query<DatasetRow>(
      `SELECT ${DATASET_COLUMNS} FROM datasets WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [projectId, limit, limit * page],
    ),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM datasets WHERE project_id = $1', [projectId]),
  ]);
  return { data: items.rows.map(datasetRecord), meta: { page, limit, total: total.rows[0]!.n } };
}

/** One dataset with all its versions, newest first (a version row is small: no cases here). */
export async function getDataset(db: Queryable, projectId: string, datasetId: string): Promise<DatasetDetail> {
  if (!isUuid(datasetId)) throw new NotFoundError(DATASET_NOT_FOUND);
  const { rows } = await db.query<DatasetRow>(
    `SELECT ${DATASET_COLUMNS} FROM datasets WHERE id = $1 AND project_id = $2`,
    [datasetId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(DATASET_NOT_FOUND);
  const versions = await db.query<{
    id: string;
    version_number: number;
    label: string;
    test_case_count: number;
    created_at: Date;
  }>(
    // A version without a number is still being written (version-write.ts): not shown yet.
    'SELECT id, version_number, label, test_case_count, created_at FROM dataset_versions WHERE dataset_id = $1 AND version_number IS NOT NULL ORDER BY version_number DESC',
    [datasetId],
  );
  return {
    ...datasetRecord(rows[0]),
    versions: versions.rows.map((v) => ({
      id: v.id,
      dataset_version_id: v.id,
      version_number: v.version_number,
      label: v.label,
      test_case_count: v.test_case_count,
      created_at: v.created_at.toISOString(),
    })),
  };
}

export async function createDataset(
  ctx: AppContext,
  projectId: string,
  input: { name: string; description?: string | null },
): Promise<DatasetDetail> {
  const id = newId();
  await ctx.pg.pool.query('INSERT INTO datasets (id, project_id, name, description) VALUES ($1, $2, $3, $4)', [
    id,
    projectId,
    input.name,
    input.description ?? '',
  ]);
  return getDataset(ctx.pg.pool, projectId, id);
}

/** Name and description only: versions are immutable, and this route can't touch them. */
export async function updateDataset(
  ctx: AppContext,
  projectId: string,
  datasetId: string,
  input: { name?: string; description?: string | null },
): Promise<DatasetDetail> {
  if (!isUuid(datasetId)) throw new NotFoundError(DATASET_NOT_FOUND);
  const updated = await ctx.pg.pool.query(
    `UPDATE datasets SET name = COALESCE($3, name), description = COALESCE($4, description), updated_at = now()
      WHERE id = $1 AND project_id = $2`,
    [datasetId, projectId, input.name ?? null, input.description ?? null],
  );
  if (updated.rowCount === 0) throw new NotFoundError(DATASET_NOT_FOUND);
  return getDataset(ctx.pg.pool, projectId, datasetId);
}

/**
 * Creates the next version of a dataset from validated cases and answers it whole, as text chunks (the
 * dataset version shape, every case with its new `test_case_id`). Bounded by what it resolves to,
 * written in chunks and numbered at the end (version-write.ts).
 */
export async function createVersion(
  ctx: AppContext,
  projectId: string,
  datasetId: string,
  label: string | null | undefined,
  cases: TestCaseInput[],
): Promise<AsyncGenerator<string>> {
  if (!isUuid(datasetId)) throw new NotFoundError(DATASET_NOT_FOUND);
  const exists = await ctx.pg.pool.query('SELECT 1 FROM datasets WHERE id = $1 AND project_id = $2', [
    datasetId,
    projectId,
  ]);
  if (exists.rows.length === 0) throw new NotFoundError(DATASET_NOT_FOUND);
  return writeVersion(ctx, projectId, datasetId, label, cases);
}
