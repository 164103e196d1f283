import type { AppContext } from '../context.js';
import { isUuid } from '../ids.js';
import { NotFoundError } from '../errors.js';
import { sliceClock } from '../event-loop-slices.js';
import type { Queryable } from '../stores/postgres.js';
import { cursorKey, invalidCursor, readCursor, signCursor } from './cursor.js';

/**
 * `GET /dataset-versions/{version_id}` (docs/datasets.md, "Reading a version"): the whole version in
 * one answer when neither `limit` nor `cursor` is given, else pages of `limit` with an opaque cursor.
 *
 * Answers are written as text: each case's JSON values are spliced from jsonb's own text (`::text`),
 * never parsed into JavaScript numbers, so 9007199254740993 keeps its last digit.
 *
 * The whole read streams: rows are fetched in slices by key (version, ordinal) and each slice is
 * written before the next is read, so memory holds one slice whatever the version's size, and no
 * Postgres connection waits on a slow reader between slices (embedded PGlite has one). The version is
 * immutable, so slices read at different moments still make one consistent snapshot.
 */

export const VERSION_NOT_FOUND = 'dataset version not found';
/** Rows per slice of the streamed whole read: 200 cases of a few KB stay well under a few MB. */
const STREAM_SLICE = 200;
export const DEFAULT_PAGE_LIMIT = 100;

export type VersionHead = {
  datasetId: string;
  versionId: string;
  versionNumber: number;
  label: string;
  testCaseCount: number;
  createdAt: Date;
};

export type CaseRow = {
  id: string;
  ordinal?: number;
  input: string | null;
  expected: string | null;
  metadata: string | null;
  source_trace_id: string | null;
  source_span_id: string | null;
};

const str = (s: string | null) => (s === null ? 'null' : JSON.stringify(s));

/** One test case as answer text; `input`/`expected`/`metadata` are JSON texts (SQL NULL reads as null). */
export function caseJson(row: CaseRow): string {
  return `{"test_case_id":${JSON.stringify(row.id)},"input":${row.input ?? 'null'},"expected":${row.expected ?? 'null'},"metadata":${row.metadata ?? 'null'},"source_trace_id":${str(row.source_trace_id)},"source_span_id":${str(row.source_span_id)}}`;
}

/** The answer's opening, up to and including `"items":[`. */
export function versionHeadJson(h: VersionHead): string {
  return `{"dataset_id":${JSON.stringify(h.datasetId)},"dataset_version_id":${JSON.stringify(h.versionId)},"version_number":${h.versionNumber},"label":${JSON.stringify(h.label)},"test_case_count":${h.testCaseCount},"created_at":${JSON.stringify(h.createdAt.toISOString())},"items":[`;
}

/** The version of the project, or 404 (another project's version is not confirmed to exist). */
export async function findVersion(db: Queryable, projectId: string, versionId: string): Promise<VersionHead> {
  if (!isUuid(versionId)) throw new NotFoundError(VERSION_NOT_FOUND);
  const { rows } = await db.query<{
    dataset_id: string;
    version_number: number;
    label: string;
    test_case_count: number;
    created_at: Date;
  }>(
    'SELECT dataset_id, version_number, label, test_case_count, created_at FROM dataset_versions WHERE id = $1 AND project_id = $2 AND version_number IS NOT NULL',
    [versionId, projectId],
  );
  const row = rows[0];
  if (!row) throw new NotFoundError(VERSION_NOT_FOUND);
  return {
    datasetId: row.dataset_id,
    versionId,
    versionNumber: row.version_number,
    label: row.label,
    testCaseCount: row.test_case_count,
    createdAt: row.created_at,
  };
}

/**
 * The `limit` cases after `ordinal`, in order. A version's ordinals are exactly 1..test_case_count
 * (written once, WITH ORDINALITY), so a slice is a key range: the plan reads those rows and no
 * others, whatever the table's statistics say (with `ORDER BY ... LIMIT` a stale estimate made the
 * planner read and convert every later case of the version, then sort).
 * $1 version, $2 first ordinal, $3 last ordinal.
 */
/** Every case of a version, slice by slice, copied values read in place (an annotation's "add to dataset" extends a version). */
export async function* casesOfVersion(db: Queryable, head: VersionHead): AsyncGenerator<CaseRow[]> {
  for (let after = 0; after < head.testCaseCount; after += STREAM_SLICE)
    yield (await slice(db, head.versionId, after, STREAM_SLICE)).rows;
}

async function slice(db: Queryable, versionId: string, after: number, limit: number): Promise<{ rows: CaseRow[] }> {
  const { rows } = await db.query<CaseRow & { ordinal: number; source_ordinal: number | null }>(
    `SELECT id, ordinal, input::text AS input, expected::text AS expected, metadata::text AS metadata, source_trace_id, source_span_id, source_ordinal
       FROM dataset_test_cases WHERE version_id = $1 AND ordinal BETWEEN $2 AND $3 ORDER BY ordinal`,
    [versionId, after + 1, after + limit],
  );
  // A value copied from a trace is stored once per version (dataset_version_sources, version-write.ts):
  // the case's own column is SQL NULL then, and the source's value reads in its place. Each source is
  // read once per slice, so the store sends what it holds, not a copy per case.
  const wanted = [
    ...new Set(
      rows
        .filter((r) => r.source_ordinal !== null && (r.input === null || r.expected === null))
        .map((r) => r.source_ordinal!),
    ),
  ];
  if (wanted.length === 0) return { rows };
  const sources = await db.query<{ ordinal: number; input: string | null; output: string | null }>(
    'SELECT ordinal, input::text AS input, output::text AS output FROM dataset_version_sources WHERE version_id = $1 AND ordinal = ANY($2::int[])',
    [versionId, wanted],
  );
  const byOrdinal = new Map(sources.rows.map((r) => [r.ordinal, r]));
  return {
    rows: rows.map((r) => {
      const source = r.source_ordinal === null ? undefined : byOrdinal.get(r.source_ordinal);
      return source ? { ...r, input: r.input ?? source.input, expected: r.expected ?? source.output } : r;
    }),
  };
}

/** The whole version as answer text, slice by slice (see the module comment). */
export async function* streamVersion(db: Queryable, head: VersionHead): AsyncGenerator<string> {
  yield versionHeadJson(head);
  // The stream's consumer writes each piece before asking for the next: without a pause, a version of
  // 60 MB goes out in one turn of the loop, and every other tenant's request waits for all of it.
  const pause = sliceClock();
  for (let after = 0; after < head.testCaseCount; after += STREAM_SLICE) {
    const { rows } = await slice(db, head.versionId, after, STREAM_SLICE);
    // Case by case: cases sharing a large source would make one slice's text large.
    for (let i = 0; i < rows.length; i++) {
      yield (after === 0 && i === 0 ? '' : ',') + caseJson(rows[i]!);
      await pause();
    }
  }
  yield '],"next_cursor":null}';
}

/**
 * One page: `limit` cases after the cursor's position; `next_cursor` only when more follow. The
 * cursor is bound to the version (cursor.ts): another version's or a changed one is a 422 at
 * `query.cursor`, so a caller can never page into cases that aren't this version's.
 */
export async function pageOfVersion(
  ctx: AppContext,
  head: VersionHead,
  limit: number,
  cursor: string | undefined,
): Promise<string> {
  const key = await cursorKey(ctx.pg);
  const scope = `version:${head.versionId}`;
  let after = 0;
  if (cursor !== undefined) {
    const position = readCursor(key, scope, cursor);
    if (position === null) throw invalidCursor(cursor);
    after = position;
  }
  const { rows } = await slice(ctx.pg.pool, head.versionId, after, limit);
  const next = after + limit < head.testCaseCount ? JSON.stringify(signCursor(key, scope, after + limit)) : 'null';
  return `${versionHeadJson(head)}${rows.map(caseJson).join(',')}],"next_cursor":${next}}`;
}
