import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { NotFoundError, PayloadTooLargeError, RequestValidationError } from '../errors.js';
import { sliceClock } from '../event-loop-slices.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import { MIB } from '../query/limits.js';
import { measureSources, readSources, type CopiedText, type SourceSpan, type TraceRef } from './trace-source.js';
import type { TestCaseInput } from './test-case-input.js';
import { caseJson, findVersion, streamVersion, versionHeadJson, type VersionHead } from './version-read.js';
import { keyedCreate, recordKey } from '../idempotency/deferred.js';
import type { RawJson } from '../raw-json.js';

/**
 * Writing a version, bounded by what it costs (issue 20; docs/datasets.md, "Size of a version").
 *
 * 1. Measure: the references are resolved to the spans they name and the size of those spans' text,
 *    before any text is read. The version's resolved size (every case as the answer will spell it,
 *    a copied text counted once per case that shows it) past MAX_RESOLVED_VERSION_BYTES is a 413,
 *    answered before the version touches Postgres.
 * 2. Store each distinct copied span once per version (`dataset_version_sources`); cases point to it.
 * 3. Write in chunks of at most CHUNK_BYTES, each its own statement outside any transaction, so other
 *    callers' statements (authentication first of all) run between them: embedded PGlite is one
 *    session, and a transaction there holds it until commit. The version row is written first without
 *    a number (invisible to every read and run) and numbered in one short transaction at the end; a
 *    failure deletes it with its rows, so a refused request leaves nothing behind.
 * 4. With an Idempotency-Key (the route is a deferred create, src/idempotency/deferred.ts), that short
 *    transaction also records the key, with a reference to the version instead of its answer (up to
 *    64 MiB): the answer, first and replayed alike, is the stored version read back (`answerOfReference`).
 *    A duplicate that recorded the key first makes this create's numbering roll back and its
 *    unnumbered version go, as any failure's.
 */

/** A version's size as answered: the cases with every copied text spelled out. Same bound as a body. */
export const MAX_RESOLVED_VERSION_BYTES = 64 * MIB;
/** Text per write statement: a few tens of milliseconds of the embedded store. */
export const CHUNK_BYTES = 1 * MIB;
const CHUNK_ROWS = 500;
/** What a case adds to the answer besides its values (ids, keys, punctuation). */
const CASE_OVERHEAD_BYTES = 200;
/** A pending version older than this was left by a process that died mid-write. */
const ABANDONED_AFTER = '1 hour';

type Case = {
  id: string;
  input: RawJson | null;
  expected: RawJson | null;
  metadata: RawJson | null;
  sourceTraceId: string | null;
  sourceSpanId: string | null;
  source: SourceSpan | null;
};

const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** Creates the version and answers it as a stream of text (the same text the one-piece answer had). */
export async function writeVersion(
  ctx: AppContext,
  projectId: string,
  datasetId: string,
  label: string | null | undefined,
  input: TestCaseInput[],
) {
  const refs: TraceRef[] = [];
  input.forEach((c, index) => {
    if (c.input === undefined) refs.push({ index, traceId: c.source_trace_id!, spanId: c.source_span_id ?? null });
  });
  const { sources, sourceOf } = await measureSources(ctx, projectId, refs);
  const cases: Case[] = input.map((c, index) => {
    const source = sourceOf.get(index) ?? null;
    return {
      id: newId(),
      input: c.input ?? null,
      expected: c.expected ?? null,
      metadata: c.metadata ?? null,
      sourceTraceId: c.source_trace_id ?? null,
      sourceSpanId: c.source_span_id ?? source?.spanId ?? null,
      source,
    };
  });
  const resolved = cases.reduce((sum, c) => sum + CASE_OVERHEAD_BYTES + textBytes(c) + (c.source?.bytes ?? 0), 0);
  if (resolved > MAX_RESOLVED_VERSION_BYTES) {
    throw new PayloadTooLargeError(
      `the version resolves to ${mib(resolved)} (${resolved} bytes) with its source traces copied into every case that names them; ` +
        `at most ${mib(MAX_RESOLVED_VERSION_BYTES)} (${MAX_RESOLVED_VERSION_BYTES} bytes) per version: split it into smaller versions`,
    );
  }
  const texts = await readSources(ctx, projectId, sources);
  const head = await store(ctx, projectId, datasetId, label, cases, sources, texts);
  // Keyed, the answer is the one a replay rebuilds: the same bytes (values as stored, not as sent).
  if (keyedCreate()) return answerOfReference(ctx, versionReference(projectId, head.versionId));
  return answerText(head, cases, texts);
}

/** What a keyed version create records instead of its answer (sealed with it: docs/idempotency.md). */
function versionReference(projectId: string, versionId: string): string {
  return JSON.stringify({ project_id: projectId, dataset_version_id: versionId });
}

/** The answer a version reference stands for: the version read back whole (immutable once numbered). */
export async function answerOfReference(ctx: AppContext, reference: string): Promise<AsyncGenerator<string>> {
  const { project_id: projectId, dataset_version_id: versionId } = JSON.parse(reference) as {
    project_id: string;
    dataset_version_id: string;
  };
  return streamVersion(ctx.pg.pool, await findVersion(ctx.pg.pool, projectId, versionId));
}

/** UTF-8 bytes of a case's own values, the unit the engine measures copied text in. */
function textBytes(c: Case): number {
  const bytes = (v: RawJson | null) => (v ? Buffer.byteLength(v.text, 'utf8') : 0);
  return bytes(c.input) + bytes(c.expected) + bytes(c.metadata);
}

async function store(
  ctx: AppContext,
  projectId: string,
  datasetId: string,
  label: string | null | undefined,
  cases: Case[],
  sources: SourceSpan[],
  texts: Map<string, CopiedText>,
): Promise<VersionHead> {
  const db = ctx.pg.pool;
  await db.query(
    `DELETE FROM dataset_versions WHERE dataset_id = $1 AND version_number IS NULL AND created_at < now() - interval '${ABANDONED_AFTER}'`,
    [datasetId],
  );
  const versionId = newId();
  const pending = await db.query(
    `INSERT INTO dataset_versions (id, dataset_id, project_id, version_number, label, test_case_count)
     SELECT $1, $2, $3, NULL, '', $4 WHERE EXISTS (SELECT 1 FROM datasets WHERE id = $2 AND project_id = $3)`,
    [versionId, datasetId, projectId, cases.length],
  );
  if (pending.rowCount === 0) throw new NotFoundError('dataset not found');
  try {
    const ordinalOf = new Map(sources.map((s, i) => [s.key, i + 1]));
    const sourceItems = sources.map((s, i) => {
      const t = texts.get(s.key)!;
      return `{"ordinal":${i + 1},"input":${t.input.text},"output":${t.output.text}}`;
    });
    for (const chunk of chunks(sourceItems)) await storingJson(() => insertSources(db, versionId, chunk));
    const caseItems = cases.map((c, i) => caseItem(c, i + 1, c.source ? ordinalOf.get(c.source.key)! : null));
    for (const chunk of chunks(caseItems)) await storingJson(() => insertCases(db, versionId, chunk));
    return await number(ctx, projectId, datasetId, versionId, label, cases.length);
  } catch (error) {
    // The cases and sources go with the row (ON DELETE CASCADE); the row was never visible.
    await db
      .query('DELETE FROM dataset_versions WHERE id = $1 AND version_number IS NULL', [versionId])
      .catch(() => {});
    throw error;
  }
}

/** One case as a jsonb array element: its own values spliced as the caller's text, never re-serialised. */
function caseItem(c: Case, ordinal: number, sourceOrdinal: number | null): string {
  const ids = JSON.stringify({
    ordinal,
    test_case_id: c.id,
    source_trace_id: c.sourceTraceId,
    source_span_id: c.sourceSpanId,
    source_ordinal: sourceOrdinal,
  });
  const own = (name: string, value: RawJson | null) =>
    `"${name}":${value?.text ?? 'null'},"has_${name}":${value !== null}`;
  return `${ids.slice(0, -1)},${own('input', c.input)},${own('expected', c.expected)},"metadata":${c.metadata?.text ?? 'null'}}`;
}

/** The UPDATE of the dataset row hands out the number and holds its lock until commit: concurrent creates get 1..N. */
async function number(
  ctx: AppContext,
  projectId: string,
  datasetId: string,
  versionId: string,
  label: string | null | undefined,
  count: number,
): Promise<VersionHead> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    const bumped = await tx.query<{ version_count: number }>(
      'UPDATE datasets SET version_count = version_count + 1, updated_at = now() WHERE id = $1 AND project_id = $2 RETURNING version_count',
      [datasetId, projectId],
    );
    if (!bumped.rows[0]) throw new NotFoundError('dataset not found');
    const n = bumped.rows[0].version_count;
    const { rows } = await tx.query<{ created_at: Date; label: string }>(
      `UPDATE dataset_versions SET version_number = $2, label = $3, created_at = now() WHERE id = $1 AND version_number IS NULL RETURNING created_at, label`,
      [versionId, n, label ?? `v${n}`],
    );
    if (!rows[0]) throw new NotFoundError('dataset not found');
    // The key commits with the number; a duplicate's key committed first rolls the number back (deferred.ts).
    await recordKey(tx, { status: 201, reference: versionReference(projectId, versionId) });
    return {
      datasetId,
      versionId,
      versionNumber: n,
      label: rows[0].label,
      testCaseCount: count,
      createdAt: rows[0].created_at,
    };
  });
}

/** Items grouped so each group's text stays within CHUNK_BYTES (a single larger item goes alone). */
export function* chunks(items: string[], maxBytes = CHUNK_BYTES, maxRows = CHUNK_ROWS): Generator<string[]> {
  let chunk: string[] = [];
  let bytes = 0;
  for (const item of items) {
    if (chunk.length > 0 && (bytes + item.length > maxBytes || chunk.length >= maxRows)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(item);
    bytes += item.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** $1 version id, $2 jsonb array of `{ordinal, input, output}`. */
function insertSources(db: Queryable, versionId: string, items: string[]) {
  return db.query(
    `INSERT INTO dataset_version_sources (version_id, ordinal, input, output)
     SELECT $1, (s->>'ordinal')::int, s->'input', s->'output' FROM jsonb_array_elements($2::jsonb) AS s`,
    [versionId, `[${items.join(',')}]`],
  );
}

/**
 * $1 version id, $2 jsonb array of cases. A value taken from a source stays SQL NULL here (reads take
 * the source's); absent metadata stays SQL NULL too (reads answer null).
 */
function insertCases(db: Queryable, versionId: string, items: string[]) {
  return db.query(
    `INSERT INTO dataset_test_cases (version_id, ordinal, id, input, expected, metadata, source_trace_id, source_span_id, source_ordinal)
     SELECT $1, (c->>'ordinal')::int, (c->>'test_case_id')::uuid,
            CASE WHEN (c->>'has_input')::boolean THEN c->'input' END,
            CASE WHEN (c->>'has_expected')::boolean THEN c->'expected' END,
            CASE WHEN jsonb_typeof(c->'metadata') = 'null' THEN NULL ELSE c->'metadata' END,
            c->>'source_trace_id', c->>'source_span_id', (c->>'source_ordinal')::int
       FROM jsonb_array_elements($2::jsonb) AS c`,
    [versionId, `[${items.join(',')}]`],
  );
}

/**
 * What the store refuses of the values (malformed numbers past jsonb's range, which the body's
 * checks let through) is the caller's: 422, without a place since one statement stored many.
 */
async function storingJson<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('22')) {
      throw new RequestValidationError([
        {
          loc: ['body', 'test_cases'],
          msg: 'a test case holds a JSON value the store cannot hold (a number out of range?)',
          type: 'value_error',
        },
      ]);
    }
    throw error;
  }
}

/**
 * The created version as answer text, case by case: values given as the caller wrote them, copied
 * ones from the one text read per source. Memory holds the sources once, never a copy per case.
 */
async function* answerText(head: VersionHead, cases: Case[], texts: Map<string, CopiedText>): AsyncGenerator<string> {
  yield versionHeadJson(head);
  const pause = sliceClock();
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    const copied = c.source ? texts.get(c.source.key)! : null;
    const text = caseJson({
      id: c.id,
      input: c.input?.text ?? copied?.input.text ?? 'null',
      expected: c.expected?.text ?? copied?.output.text ?? 'null',
      metadata: c.metadata?.text ?? null,
      source_trace_id: c.sourceTraceId,
      source_span_id: c.sourceSpanId,
    });
    yield i === 0 ? text : `,${text}`;
    await pause();
  }
  yield '],"next_cursor":null}';
}
