import type { AppContext } from '../context.js';
import { isUuid } from '../auth/principal.js';
import { newId } from '../auth/secrets.js';
import { NotFoundError, RequestValidationError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { copyFromTraces, type TraceRef } from './trace-source.js';
import type { ResolvedCase, TestCaseInput } from './test-case-input.js';
import { caseJson, versionHeadJson, type VersionHead } from './version-read.js';

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
export type VersionListItem = { id: string; dataset_version_id: string; version_number: number; label: string; test_case_count: number; created_at: string };
export type DatasetDetail = DatasetRecord & { versions: VersionListItem[] };

type DatasetRow = { id: string; name: string; description: string; version_count: number; created_at: Date; updated_at: Date };

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
    db.query<DatasetRow>(`SELECT ${DATASET_COLUMNS} FROM datasets WHERE project_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, [projectId, limit, limit * page]),
    db.query<{ n: number }>('SELECT count(*)::int AS n FROM datasets WHERE project_id = $1', [projectId]),
  ]);
  return { data: items.rows.map(datasetRecord), meta: { page, limit, total: total.rows[0]!.n } };
}

/** One dataset with all its versions, newest first (a version row is small: no cases here). */
export async function getDataset(db: Queryable, projectId: string, datasetId: string): Promise<DatasetDetail> {
  if (!isUuid(datasetId)) throw new NotFoundError(DATASET_NOT_FOUND);
  const { rows } = await db.query<DatasetRow>(`SELECT ${DATASET_COLUMNS} FROM datasets WHERE id = $1 AND project_id = $2`, [datasetId, projectId]);
  if (!rows[0]) throw new NotFoundError(DATASET_NOT_FOUND);
  const versions = await db.query<{ id: string; version_number: number; label: string; test_case_count: number; created_at: Date }>(
    'SELECT id, version_number, label, test_case_count, created_at FROM dataset_versions WHERE dataset_id = $1 ORDER BY version_number DESC',
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

export async function createDataset(ctx: AppContext, projectId: string, input: { name: string; description?: string | null }): Promise<DatasetDetail> {
  const id = newId();
  await ctx.pg.pool.query('INSERT INTO datasets (id, project_id, name, description) VALUES ($1, $2, $3, $4)', [id, projectId, input.name, input.description ?? '']);
  return getDataset(ctx.pg.pool, projectId, id);
}

/** Name and description only: versions are immutable, and this route can't touch them. */
export async function updateDataset(ctx: AppContext, projectId: string, datasetId: string, input: { name?: string; description?: string | null }): Promise<DatasetDetail> {
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
 * Creates the next version of a dataset from validated cases and answers it whole (the dataset
 * version shape, every case with its new `test_case_id`). Trace copies are read before the
 * transaction (ClickHouse; no Postgres lock held while waiting). In the transaction the dataset row's
 * UPDATE hands out the number and holds the row lock until commit, so concurrent creates get 1..N.
 */
export async function createVersion(ctx: AppContext, projectId: string, datasetId: string, label: string | null | undefined, cases: TestCaseInput[]): Promise<string> {
  if (!isUuid(datasetId)) throw new NotFoundError(DATASET_NOT_FOUND);
  const exists = await ctx.pg.pool.query('SELECT 1 FROM datasets WHERE id = $1 AND project_id = $2', [datasetId, projectId]);
  if (exists.rows.length === 0) throw new NotFoundError(DATASET_NOT_FOUND);

  const resolved = await resolveCases(ctx, projectId, cases);
  const ids = resolved.map(() => newId());
  const versionId = newId();
  // One jsonb array parameter: the values travel as the caller's text, spliced, never re-serialised.
  const items = resolved.map((c, i) => caseJson({ id: ids[i]!, input: c.input.text, expected: c.expected.text, metadata: c.metadata?.text ?? null, source_trace_id: c.sourceTraceId, source_span_id: c.sourceSpanId }));

  const head = await withTransaction(ctx.pg.pool, async (tx) => {
    const bumped = await tx.query<{ version_count: number }>(
      'UPDATE datasets SET version_count = version_count + 1, updated_at = now() WHERE id = $1 AND project_id = $2 RETURNING version_count',
      [datasetId, projectId],
    );
    if (!bumped.rows[0]) throw new NotFoundError(DATASET_NOT_FOUND);
    const number = bumped.rows[0].version_count;
    const inserted = await tx.query<{ created_at: Date; label: string }>(
      `INSERT INTO dataset_versions (id, dataset_id, project_id, version_number, label, test_case_count)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at, label`,
      [versionId, datasetId, projectId, number, label ?? `v${number}`, resolved.length],
    );
    // $1 version id, $2 jsonb array of cases in order (absent metadata stays SQL NULL: `->` of a missing key)
    await storingJson(() =>
      tx.query(
        `INSERT INTO dataset_test_cases (version_id, ordinal, id, input, expected, metadata, source_trace_id, source_span_id)
         SELECT $1, c.ord, (c.item->>'test_case_id')::uuid, c.item->'input', c.item->'expected',
                CASE WHEN jsonb_typeof(c.item->'metadata') = 'null' THEN NULL ELSE c.item->'metadata' END,
                c.item->>'source_trace_id', c.item->>'source_span_id'
           FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS c(item, ord)`,
        [versionId, `[${items.join(',')}]`],
      ),
    );
    const row = inserted.rows[0]!;
    return { datasetId, versionId, versionNumber: number, label: row.label, testCaseCount: resolved.length, createdAt: row.created_at } satisfies VersionHead;
  });
  return `${versionHeadJson(head)}${items.join(',')}],"next_cursor":null}`;
}

/**
 * What the store refuses of the values (malformed numbers past jsonb's range, which the body's
 * checks let through) is the caller's: 422, without a place since one statement stored them all.
 */
async function storingJson<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('22')) {
      throw new RequestValidationError([{ loc: ['body', 'test_cases'], msg: 'a test case holds a JSON value the store cannot hold (a number out of range?)', type: 'value_error' }]);
    }
    throw error;
  }
}

/** Given values as they are; trace references copied (404 for a trace the project doesn't have). */
async function resolveCases(ctx: AppContext, projectId: string, cases: TestCaseInput[]): Promise<ResolvedCase[]> {
  const refs: TraceRef[] = [];
  cases.forEach((c, index) => {
    if (c.input === undefined) refs.push({ index, traceId: c.source_trace_id!, spanId: c.source_span_id ?? null });
  });
  const copied = await copyFromTraces(ctx, projectId, refs);
  return cases.map((c, index) => {
    const copy = copied.get(index);
    return {
      input: c.input ?? copy!.input,
      expected: c.expected ?? copy?.expected ?? (undefined as never),
      metadata: c.metadata ?? null,
      sourceTraceId: c.source_trace_id ?? null,
      sourceSpanId: c.source_span_id ?? copy?.spanId ?? null,
    };
  });
}
