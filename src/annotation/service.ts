import crypto from 'node:crypto';
import type { AnswerOf } from '../answer-schemas.js';
import type { AppContext } from '../context.js';
import { ConflictError, NotFoundError, RequestValidationError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Queryable } from '../stores/postgres.js';
import type { ValidationIssue } from '../zod-issues.js';
import type { Predicate } from '../query/predicates.js';
import { configsFor } from '../scores/configs.js';
import { resolveScore, ScoreInput } from '../scores/input.js';
import { scoresOfTraces, writeScores, type Score } from '../scores/service.js';
import { getTrace, listTraceIds } from '../traces/service.js';
import { commentCount, createComment } from '../comments/service.js';
import { createVersion, getDataset } from '../datasets/service.js';
import { casesOfVersion, findVersion } from '../datasets/version-read.js';
import type { TestCaseInput } from '../datasets/test-case-input.js';
import { RawJson } from '../raw-json.js';
import type {
  AnnotationItemAnswer,
  AnnotationItemsAddAnswer,
  AnnotationQueueAnswer,
  ITEM_STATUSES,
} from './answers.js';

/**
 * Annotation queues (quality.md §3; docs/annotation.md): traces or spans for people to score with the
 * queue's score configs. Queues and items are Postgres rows (postgres/0015_annotation_queues.sql).
 *
 * Claims: `next` takes the oldest pending item that no one else holds in one atomic UPDATE whose
 * subquery locks the row it picks (`FOR UPDATE SKIP LOCKED`), so two reviewers asking at once get two
 * items. A hold lasts `ANNOTATION_HOLD_SECONDS` (600) and is renewed by the holder's writes to the
 * item (a `next` that finds it again, a comment on its trace); an expired hold is no hold.
 * Completing validates every score against the queue's configs before anything is written, then
 * writes the scores (ids derived from item and config, so a retry replaces them), then the comment,
 * then marks the item completed.
 */

export const MAX_QUEUE_CONFIGS = 20;
export const MAX_ITEMS_PER_REQUEST = 1_000;
export const MAX_ITEMS_PER_QUEUE = 100_000;
export const MAX_QUEUES_PER_PROJECT = 1_000;
export const DEFAULT_FILL_LIMIT = 100;

export type Queue = AnswerOf<typeof AnnotationQueueAnswer>;
export type Item = AnswerOf<typeof AnnotationItemAnswer>;
type Project = { projectId: string; traceTtlDays: number };

type QueueRow = {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  score_config_ids: string[];
  pending: number;
  completed: number;
  created_at: Date;
  updated_at: Date;
};

const QUEUE_SELECT = `SELECT q.id, q.project_id, q.name, q.description, q.score_config_ids::text[] AS score_config_ids,
    (SELECT count(*)::int FROM annotation_queue_items i WHERE i.queue_id = q.id AND i.status = 'pending') AS pending,
    (SELECT count(*)::int FROM annotation_queue_items i WHERE i.queue_id = q.id AND i.status = 'completed') AS completed,
    q.created_at, q.updated_at
  FROM annotation_queues q`;

const queueOf = (row: QueueRow): Queue => ({
  ...row,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
});

type ItemRow = {
  id: string;
  queue_id: string;
  trace_id: string;
  span_id: string;
  status: (typeof ITEM_STATUSES)[number];
  held_by: string | null;
  held_until: Date | null;
  completed_by: string | null;
  completed_at: Date | null;
  created_at: Date;
};

/** An item's columns, its hold only while live. */
const ITEM_COLUMNS = `id, queue_id, trace_id, span_id, status,
  CASE WHEN held_until > now() THEN held_by END AS held_by,
  CASE WHEN held_until > now() AND held_by IS NOT NULL THEN held_until END AS held_until,
  completed_by, completed_at, created_at`;

const itemOf = (row: ItemRow): Item => ({
  ...row,
  span_id: row.span_id === '' ? null : row.span_id,
  held_until: row.held_until?.toISOString() ?? null,
  completed_at: row.completed_at?.toISOString() ?? null,
  created_at: row.created_at.toISOString(),
});

const invalid = (loc: (string | number)[], msg: string, input?: unknown): ValidationIssue => ({
  loc,
  msg,
  type: 'value_error',
  ...(input === undefined ? {} : { input }),
});

/** The configs a queue names: distinct, of this project, not archived (422 otherwise). */
async function checkConfigs(db: Queryable, projectId: string, ids: readonly string[]): Promise<void> {
  const issues: ValidationIssue[] = [];
  const { byId } = await configsFor(db, projectId, ids, []);
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    const loc = ['body', 'score_config_ids', i];
    const config = byId.get(id);
    if (seen.has(id)) issues.push(invalid(loc, 'a score config is named once', id));
    else if (!config) issues.push(invalid(loc, `no score config '${id}' in this project`, id));
    else if (config.archived) issues.push(invalid(loc, `the score config '${config.name}' is archived`, id));
    seen.add(id);
  });
  if (issues.length) throw new RequestValidationError(issues);
}

function nameTaken(error: unknown, name: string): unknown {
  return (error as { code?: string }).code === '23505'
    ? new ConflictError(`the project already has an annotation queue named '${name}'`)
    : error;
}

export async function createQueue(
  db: Queryable,
  projectId: string,
  createdBy: string | null,
  input: { name: string; description?: string | null; score_config_ids: string[] },
): Promise<Queue> {
  await checkConfigs(db, projectId, input.score_config_ids);
  const { rows: counted } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM annotation_queues WHERE project_id = $1',
    [projectId],
  );
  if (counted[0]!.n >= MAX_QUEUES_PER_PROJECT)
    throw new ConflictError(`a project holds at most ${MAX_QUEUES_PER_PROJECT} annotation queues`);
  const id = crypto.randomUUID();
  try {
    await db.query(
      `INSERT INTO annotation_queues (id, project_id, name, description, score_config_ids, created_by)
       VALUES ($1, $2, $3, $4, $5::uuid[], $6)`,
      [id, projectId, input.name, input.description ?? null, input.score_config_ids, createdBy],
    );
  } catch (error) {
    throw nameTaken(error, input.name);
  }
  return getQueue(db, projectId, id);
}

export async function listQueues(db: Queryable, projectId: string, limit: number, page: number) {
  const { rows } = await db.query<QueueRow & { total: number }>(
    `${QUEUE_SELECT.replace('q.created_at, q.updated_at', 'q.created_at, q.updated_at, count(*) OVER ()::int AS total')}
      WHERE q.project_id = $1 ORDER BY q.created_at DESC, q.id LIMIT $2 OFFSET $3`,
    [projectId, limit, limit * page],
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 0) {
    const { rows: n } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM annotation_queues WHERE project_id = $1',
      [projectId],
    );
    total = n[0]!.n;
  }
  return { data: rows.map(({ total: _t, ...row }) => queueOf(row)), meta: { page, limit, total } };
}

export async function getQueue(db: Queryable, projectId: string, id: string): Promise<Queue> {
  const row = isUuid(id)
    ? (await db.query<QueueRow>(`${QUEUE_SELECT} WHERE q.project_id = $1 AND q.id = $2`, [projectId, id])).rows[0]
    : undefined;
  if (!row) throw new NotFoundError('annotation queue not found');
  return queueOf(row);
}

export async function patchQueue(
  db: Queryable,
  projectId: string,
  id: string,
  patch: { name?: string; description?: string | null; score_config_ids?: string[] },
): Promise<Queue> {
  await getQueue(db, projectId, id);
  if (patch.score_config_ids) await checkConfigs(db, projectId, patch.score_config_ids);
  try {
    await db.query(
      `UPDATE annotation_queues SET
         name = COALESCE($3, name),
         description = CASE WHEN $4 THEN $5 ELSE description END,
         score_config_ids = COALESCE($6::uuid[], score_config_ids),
         updated_at = now()
       WHERE project_id = $1 AND id = $2`,
      [
        projectId,
        id,
        patch.name ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.score_config_ids ?? null,
      ],
    );
  } catch (error) {
    throw nameTaken(error, patch.name ?? '');
  }
  return getQueue(db, projectId, id);
}

export async function deleteQueue(
  db: Queryable,
  projectId: string,
  id: string,
): Promise<{ deleted: true; id: string }> {
  await getQueue(db, projectId, id);
  await db.query('DELETE FROM annotation_queues WHERE project_id = $1 AND id = $2', [projectId, id]);
  return { deleted: true, id };
}

export type ItemsInput =
  | { items: { trace_id: string; span_id?: string | null }[] }
  | { filters: Predicate[]; startAfterMs?: number; startBeforeMs?: number; limit: number };

/**
 * Adds traces (or spans) to a queue: the given ones, or the traces the trace list gives for the
 * filters (its order, newest first, at most `limit`). Each is in a queue once: the answer says which
 * were added and which were there already.
 */
export async function addItems(
  ctx: AppContext,
  projectId: string,
  queueId: string,
  input: ItemsInput,
): Promise<AnswerOf<typeof AnnotationItemsAddAnswer>> {
  const db = ctx.pg.pool;
  await getQueue(db, projectId, queueId);
  const wanted =
    'items' in input
      ? input.items.map((i) => ({ trace_id: i.trace_id, span_id: i.span_id ?? '' }))
      : (
          await listTraceIds(ctx, {
            projectId,
            limit: input.limit,
            page: 0,
            startAfter: input.startAfterMs,
            endBefore: input.startBeforeMs,
            includeEvaluations: false,
            filters: input.filters,
          })
        ).map((trace_id) => ({ trace_id, span_id: '' }));
  const keyOf = (i: { trace_id: string; span_id: string }) => JSON.stringify([i.trace_id, i.span_id]);
  const unique = [...new Map(wanted.map((i) => [keyOf(i), i])).values()];
  if (unique.length === 0) return { added: [], existing: [] };
  const { rows: counted } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM annotation_queue_items WHERE queue_id = $1',
    [queueId],
  );
  if (counted[0]!.n + unique.length > MAX_ITEMS_PER_QUEUE)
    throw new ConflictError(`an annotation queue holds at most ${MAX_ITEMS_PER_QUEUE} items`);
  const { rows: added } = await db.query<{ id: string; trace_id: string; span_id: string }>(
    `INSERT INTO annotation_queue_items (id, queue_id, project_id, trace_id, span_id)
     SELECT id, $1, $2, trace_id, span_id
       FROM unnest($3::uuid[], $4::text[], $5::text[]) WITH ORDINALITY AS t(id, trace_id, span_id, ord)
      ORDER BY ord
     ON CONFLICT (queue_id, trace_id, span_id) DO NOTHING
     RETURNING id, trace_id, span_id`,
    [
      queueId,
      projectId,
      unique.map(() => crypto.randomUUID()),
      unique.map((i) => i.trace_id),
      unique.map((i) => i.span_id),
    ],
  );
  const addedKeys = new Set(added.map(keyOf));
  const rest = unique.filter((i) => !addedKeys.has(keyOf(i)));
  const { rows: there } = rest.length
    ? await db.query<{ id: string; trace_id: string; span_id: string }>(
        `SELECT i.id, i.trace_id, i.span_id FROM annotation_queue_items i
           JOIN unnest($2::text[], $3::text[]) AS t(trace_id, span_id)
             ON t.trace_id = i.trace_id AND t.span_id = i.span_id
          WHERE i.queue_id = $1`,
        [queueId, rest.map((i) => i.trace_id), rest.map((i) => i.span_id)],
      )
    : { rows: [] };
  const ref = (r: { id: string; trace_id: string; span_id: string }) => ({
    item_id: r.id,
    trace_id: r.trace_id,
    span_id: r.span_id === '' ? null : r.span_id,
  });
  const order = new Map(unique.map((i, n) => [keyOf(i), n]));
  const byOrder = (a: { trace_id: string; span_id: string }, b: { trace_id: string; span_id: string }) =>
    order.get(keyOf(a))! - order.get(keyOf(b))!;
  return { added: added.sort(byOrder).map(ref), existing: there.sort(byOrder).map(ref) };
}

export async function listItems(
  db: Queryable,
  projectId: string,
  queueId: string,
  status: (typeof ITEM_STATUSES)[number] | undefined,
  limit: number,
  page: number,
) {
  await getQueue(db, projectId, queueId);
  const params: unknown[] = [queueId, limit, limit * page];
  const where = status ? `queue_id = $1 AND status = $4` : 'queue_id = $1';
  if (status) params.push(status);
  const { rows } = await db.query<ItemRow & { total: number }>(
    `SELECT ${ITEM_COLUMNS}, count(*) OVER ()::int AS total FROM annotation_queue_items
      WHERE ${where} ORDER BY position LIMIT $2 OFFSET $3`,
    params,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 0) {
    const { rows: n } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM annotation_queue_items WHERE ${where.replace('$4', '$2')}`,
      status ? [queueId, status] : [queueId],
    );
    total = n[0]!.n;
  }
  return { data: rows.map(({ total: _t, ...row }) => itemOf(row)), meta: { page, limit, total } };
}

async function findItem(db: Queryable, queueId: string, itemId: string): Promise<Item> {
  const row = isUuid(itemId)
    ? (
        await db.query<ItemRow>(`SELECT ${ITEM_COLUMNS} FROM annotation_queue_items WHERE queue_id = $1 AND id = $2`, [
          queueId,
          itemId,
        ])
      ).rows[0]
    : undefined;
  if (!row) throw new NotFoundError('annotation queue item not found');
  return itemOf(row);
}

export async function getItem(db: Queryable, projectId: string, queueId: string, itemId: string): Promise<Item> {
  await getQueue(db, projectId, queueId);
  return findItem(db, queueId, itemId);
}

export async function deleteItem(db: Queryable, projectId: string, queueId: string, itemId: string): Promise<void> {
  await getItem(db, projectId, queueId, itemId);
  await db.query('DELETE FROM annotation_queue_items WHERE queue_id = $1 AND id = $2', [queueId, itemId]);
}

export const HELD_BY_ANOTHER_DETAIL = 'the item is held by another reviewer';
export const ALREADY_COMPLETED_DETAIL = 'the item is already completed';

/**
 * `next`: the oldest pending item no one else holds (the caller's own held item counts as free, so
 * asking again resumes it), claimed for the caller; `exclude` leaves out items the caller skipped.
 * Null when none is left.
 */
export async function claimNext(
  ctx: AppContext,
  projectId: string,
  queueId: string,
  userId: string,
  exclude: readonly string[],
): Promise<{ item: Item; trace: Awaited<ReturnType<typeof traceDetail>> } | null> {
  const db = ctx.pg.pool;
  await getQueue(db, projectId, queueId);
  const { rows } = await db.query<ItemRow>(
    `UPDATE annotation_queue_items SET held_by = $2, held_until = now() + make_interval(secs => $3)
      WHERE id = (
        SELECT id FROM annotation_queue_items
         WHERE queue_id = $1 AND status = 'pending'
           AND (held_by IS NULL OR held_until IS NULL OR held_until <= now() OR held_by = $2)
           AND NOT (id = ANY($4::uuid[]))
         ORDER BY position
         LIMIT 1
         FOR UPDATE SKIP LOCKED)
        AND status = 'pending'
      RETURNING ${ITEM_COLUMNS}`,
    [queueId, userId, ctx.config.annotationHoldSeconds, exclude.filter(isUuid)],
  );
  const row = rows[0];
  if (!row) return null;
  // A hold of 0 seconds (tests) has already ended; the answer still names who took the item.
  const item = { ...itemOf(row), held_by: userId };
  return { item, trace: await traceDetail(ctx, projectId, item.trace_id) };
}

/** The trace as `GET /traces/{trace_id}` answers it, or null when it is not (or no longer) stored. */
async function traceDetail(ctx: AppContext, projectId: string, traceId: string) {
  try {
    const trace = await getTrace(ctx, projectId, traceId);
    return {
      ...trace,
      scores: await scoresOfTraces(ctx, projectId, [traceId]),
      comment_count: await commentCount(ctx, projectId, traceId),
    };
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
}

/**
 * Takes the item for `userId` when it is pending and free (or already theirs): the hold renewed.
 * 404, or 409 when it is completed or another reviewer holds it.
 */
async function holdFor(ctx: AppContext, queueId: string, itemId: string, userId: string): Promise<Item> {
  const db = ctx.pg.pool;
  const current = await findItem(db, queueId, itemId);
  const { rows } = await db.query<ItemRow>(
    `UPDATE annotation_queue_items SET held_by = $3, held_until = now() + make_interval(secs => $4)
      WHERE queue_id = $1 AND id = $2 AND status = 'pending'
        AND (held_by IS NULL OR held_until IS NULL OR held_until <= now() OR held_by = $3)
      RETURNING ${ITEM_COLUMNS}`,
    [queueId, itemId, userId, ctx.config.annotationHoldSeconds],
  );
  if (rows[0]) return itemOf(rows[0]);
  throw new ConflictError(current.status === 'completed' ? ALREADY_COMPLETED_DETAIL : HELD_BY_ANOTHER_DETAIL);
}

export type CompleteInput = {
  scores: { config_id: string; value?: number; string_value?: string; comment?: string }[];
  comment?: string;
};

/**
 * Stores the reviewer's scores (source `annotation`, the reviewer as author) and comment, marks the
 * item completed and frees it. Every score is checked against the queue's configs first: one wrong
 * score is a 422 and nothing is written.
 */
export async function completeItem(
  ctx: AppContext,
  project: Project,
  queueId: string,
  itemId: string,
  userId: string,
  input: CompleteInput,
): Promise<{ item: Item; scores: Score[]; comment_id: string | null }> {
  const db = ctx.pg.pool;
  const queue = await getQueue(db, project.projectId, queueId);
  const item = await findItem(db, queueId, itemId);
  const configs = await configsFor(db, project.projectId, queue.score_config_ids, []);
  const issues: ValidationIssue[] = [];
  const raw: Record<string, unknown>[] = [];
  const named = new Set<string>();
  input.scores.forEach((s, i) => {
    const loc = ['body', 'scores', i];
    const config = configs.byId.get(s.config_id);
    if (!queue.score_config_ids.includes(s.config_id) || !config) {
      issues.push(invalid([...loc, 'config_id'], 'not a score config of this queue', s.config_id));
      return;
    }
    if (named.has(s.config_id)) {
      issues.push(invalid([...loc, 'config_id'], 'a score config is scored once per item', s.config_id));
      return;
    }
    named.add(s.config_id);
    const score = {
      score_id: `annotation-${item.id}-${config.id}`,
      trace_id: item.trace_id,
      ...(item.span_id ? { span_id: item.span_id } : {}),
      name: config.name,
      config_id: config.id,
      ...(s.value === undefined ? {} : { value: s.value }),
      ...(s.string_value === undefined ? {} : { string_value: s.string_value }),
      ...(s.comment === undefined ? {} : { comment: s.comment }),
    };
    const parsed = ScoreInput.safeParse(score);
    const resolved = parsed.success ? resolveScore(parsed.data, configs) : { errors: ['the score is not valid'] };
    if ('errors' in resolved) for (const msg of resolved.errors) issues.push(invalid(loc, msg));
    else raw.push(score);
  });
  if (issues.length) throw new RequestValidationError(issues);

  await holdFor(ctx, queueId, itemId, userId);
  const written = raw.length
    ? await writeScores(ctx, project, raw, { source: 'annotation', authorUserId: userId })
    : { accepted: 0, rejected: [], scores: [] };
  // Checked above against the same configs: a rejection here is a config changed in between.
  if (written.rejected.length)
    throw new RequestValidationError(
      written.rejected.flatMap((r) => r.errors.map((msg) => invalid(['body', 'scores', r.index], msg))),
    );
  const comment = input.comment
    ? await createComment(db, ctx.config.annotationHoldSeconds, project.projectId, userId, {
        trace_id: item.trace_id,
        span_id: item.span_id,
        text: input.comment,
      })
    : null;
  const { rows } = await db.query<ItemRow>(
    `UPDATE annotation_queue_items
        SET status = 'completed', completed_by = $3, completed_at = now(), held_by = NULL, held_until = NULL
      WHERE queue_id = $1 AND id = $2 AND status = 'pending'
        AND (held_by IS NULL OR held_until IS NULL OR held_until <= now() OR held_by = $3)
      RETURNING ${ITEM_COLUMNS}`,
    [queueId, itemId, userId],
  );
  if (!rows[0]) {
    const now = await findItem(db, queueId, itemId);
    throw new ConflictError(now.status === 'completed' ? ALREADY_COMPLETED_DETAIL : HELD_BY_ANOTHER_DETAIL);
  }
  return { item: itemOf(rows[0]), scores: written.scores, comment_id: comment?.id ?? null };
}

/** Frees the caller's hold; an item held by someone else is a 409, a completed one too. */
export async function releaseItem(
  db: Queryable,
  projectId: string,
  queueId: string,
  itemId: string,
  userId: string,
): Promise<Item> {
  await getQueue(db, projectId, queueId);
  const current = await findItem(db, queueId, itemId);
  if (current.status === 'completed') throw new ConflictError(ALREADY_COMPLETED_DETAIL);
  if (current.held_by !== null && current.held_by !== userId) throw new ConflictError(HELD_BY_ANOTHER_DETAIL);
  const { rows } = await db.query<ItemRow>(
    `UPDATE annotation_queue_items SET held_by = NULL, held_until = NULL
      WHERE queue_id = $1 AND id = $2 AND (held_by = $3 OR held_by IS NULL OR held_until <= now())
      RETURNING ${ITEM_COLUMNS}`,
    [queueId, itemId, userId],
  );
  if (!rows[0]) throw new ConflictError(HELD_BY_ANOTHER_DETAIL);
  return itemOf(rows[0]);
}

/**
 * "Add to dataset" of the review screen: a new version of the dataset holding its newest version's
 * cases and one more, the item's trace (or span): input copied from it, `expected` as the reviewer
 * edited it (else the copied output). A dataset version is immutable, so adding makes the next one.
 */
export async function addItemToDataset(
  ctx: AppContext,
  projectId: string,
  queueId: string,
  itemId: string,
  input: { dataset_id: string; label?: string | null; expected?: unknown; hasExpected: boolean },
): Promise<{ dataset_id: string; dataset_version_id: string; version_number: number; test_case_count: number }> {
  const db = ctx.pg.pool;
  const item = await getItem(db, projectId, queueId, itemId);
  const dataset = await getDataset(db, projectId, input.dataset_id);
  const cases: TestCaseInput[] = [];
  const newest = dataset.versions[0];
  if (newest) {
    const head = await findVersion(db, projectId, newest.dataset_version_id);
    for await (const rows of casesOfVersion(db, head))
      for (const row of rows)
        cases.push({
          input: new RawJson(row.input ?? 'null'),
          expected: new RawJson(row.expected ?? 'null'),
          ...(row.metadata === null ? {} : { metadata: new RawJson(row.metadata) }),
          source_trace_id: row.source_trace_id,
          source_span_id: row.source_span_id,
        });
  }
  cases.push({
    source_trace_id: item.trace_id,
    source_span_id: item.span_id,
    ...(input.hasExpected ? { expected: new RawJson(JSON.stringify(input.expected ?? null)) } : {}),
  });
  let text = '';
  for await (const part of await createVersion(ctx, projectId, dataset.id, input.label, cases)) text += part;
  const made = JSON.parse(text) as {
    dataset_id: string;
    dataset_version_id: string;
    version_number: number;
    test_case_count: number;
  };
  return {
    dataset_id: made.dataset_id,
    dataset_version_id: made.dataset_version_id,
    version_number: made.version_number,
    test_case_count: made.test_case_count,
  };
}
