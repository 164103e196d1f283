import crypto from 'node:crypto';
import type { AnswerOf } from '../answer-schemas.js';
import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Queryable } from '../stores/postgres.js';
import type { CommentAnswer } from './answers.js';

/**
 * Comments on traces and spans (quality.md §3; docs/annotation.md): Postgres rows, written by users.
 * A comment on a trace renews its author's live holds on that trace's queue items (a write to it).
 */

export const MAX_COMMENT_TEXT = 4_096;
export type Comment = AnswerOf<typeof CommentAnswer>;

type CommentRow = {
  id: string;
  project_id: string;
  trace_id: string;
  span_id: string | null;
  text: string;
  author_user_id: string | null;
  author_name: string | null;
  created_at: Date;
};

const select = (extra = '') =>
  `SELECT c.id, c.project_id, c.trace_id, c.span_id, c.text, c.author_user_id, u.name AS author_name, c.created_at${extra}
     FROM comments c LEFT JOIN users u ON u.id = c.author_user_id`;

const answerOf = (row: CommentRow): Comment => ({ ...row, created_at: row.created_at.toISOString() });

export async function createComment(
  db: Queryable,
  holdSeconds: number,
  projectId: string,
  authorUserId: string,
  input: { trace_id: string; span_id?: string | null; text: string },
): Promise<Comment> {
  const id = crypto.randomUUID();
  await db.query(
    'INSERT INTO comments (id, project_id, trace_id, span_id, text, author_user_id) VALUES ($1, $2, $3, $4, $5, $6)',
    [id, projectId, input.trace_id, input.span_id ?? null, input.text, authorUserId],
  );
  await db.query(
    `UPDATE annotation_queue_items SET held_until = now() + make_interval(secs => $4)
      WHERE project_id = $1 AND trace_id = $2 AND held_by = $3 AND status = 'pending' AND held_until > now()`,
    [projectId, input.trace_id, authorUserId, holdSeconds],
  );
  return getComment(db, projectId, id);
}

export async function getComment(db: Queryable, projectId: string, id: string): Promise<Comment> {
  const row = isUuid(id)
    ? (await db.query<CommentRow>(`${select()} WHERE c.project_id = $1 AND c.id = $2`, [projectId, id])).rows[0]
    : undefined;
  if (!row) throw new NotFoundError('comment not found');
  return answerOf(row);
}

/** A trace's comments (or one span's), oldest first. */
export async function listComments(
  db: Queryable,
  projectId: string,
  where: { traceId: string; spanId?: string },
  limit: number,
  page: number,
) {
  const params: unknown[] = [projectId, where.traceId];
  let clause = 'c.project_id = $1 AND c.trace_id = $2';
  if (where.spanId !== undefined) {
    params.push(where.spanId);
    clause += ` AND c.span_id = $${params.length}`;
  }
  const { rows } = await db.query<CommentRow & { total: number }>(
    `${select(', count(*) OVER ()::int AS total')} WHERE ${clause}
      ORDER BY c.created_at, c.id LIMIT ${limit} OFFSET ${limit * page}`,
    params,
  );
  let total = rows[0]?.total ?? 0;
  if (rows.length === 0 && page > 0) {
    const { rows: n } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM comments c WHERE ${clause}`,
      params,
    );
    total = n[0]!.n;
  }
  return { data: rows.map(({ total: _t, ...row }) => answerOf(row)), meta: { page, limit, total } };
}

/**
 * The author deletes their comment; anyone else must pass `requireAdmin` (a 403 when not an ADMIN).
 */
export async function deleteComment(
  db: Queryable,
  projectId: string,
  id: string,
  userId: string,
  requireAdmin: () => Promise<unknown>,
): Promise<void> {
  const comment = await getComment(db, projectId, id);
  if (comment.author_user_id !== userId) await requireAdmin();
  await db.query('DELETE FROM comments WHERE project_id = $1 AND id = $2', [projectId, id]);
}

/** `comment_count` of `GET /traces/{trace_id}`. */
export async function commentCount(ctx: AppContext, projectId: string, traceId: string): Promise<number> {
  const { rows } = await ctx.pg.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM comments WHERE project_id = $1 AND trace_id = $2',
    [projectId, traceId],
  );
  return rows[0]!.n;
}
