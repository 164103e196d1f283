import type { AppContext } from '../context.js';
import { PROJECT_PARAM } from '../sql/contract.js';
import { projectLiteral } from '../sql/engine-scope.js';
import { guardSql } from '../sql/guard.js';
import { SqlRefused } from '../sql/lexer.js';
import { isStoreUnreachable } from '../errors.js';
import { queryFailure } from '../sql/service.js';

/**
 * What a sql detector's query must answer (docs/signals.md): a `trace_id` column, and optionally
 * `span_id` and `group_key`. Checked when the detector is written, from the columns the engine
 * describes for the guarded query (DESCRIBE reads no rows, so this costs nothing however heavy the
 * query is), and again on every run from the answer itself.
 */

export const REQUIRED_COLUMN = 'trace_id';
export const OPTIONAL_COLUMNS = ['span_id', 'group_key'] as const;

export type ColumnProblem = { message: string } | null;

/** The problem with a set of answer columns, or null when they serve a detector. */
export function columnProblem(columns: readonly string[]): ColumnProblem {
  if (!columns.includes(REQUIRED_COLUMN)) {
    return {
      message: `the query must return a ${REQUIRED_COLUMN} column (and may return ${OPTIONAL_COLUMNS.join(' and ')}); it returns ${columns.join(', ') || 'nothing'}`,
    };
  }
  return null;
}

/**
 * The columns of a guarded query's answer for a project, or a problem a caller can fix (refused,
 * unknown column, type error). An unreachable engine is thrown as is (503).
 */
export async function describeSqlColumns(
  ctx: AppContext,
  projectId: string,
  query: string,
): Promise<{ columns: string[] } | { problem: string }> {
  let guarded: string;
  try {
    guarded = guardSql(query, ctx.ch.database).sql;
  } catch (error) {
    if (error instanceof SqlRefused) return { problem: `query refused: ${error.detail}` };
    throw error;
  }
  const sql = guarded.replaceAll(`{${PROJECT_PARAM}:String}`, projectLiteral(projectId));
  try {
    const rows = await ctx.ch.rows<{ name: string }>({ query: `DESCRIBE TABLE (\n${sql}\n)` });
    return { columns: rows.map((r) => r.name) };
  } catch (error) {
    if (isStoreUnreachable(error)) throw error;
    // The engine's message, scrubbed of the rewritten query and internal names, as POST /sql words it.
    return { problem: queryFailure(error, ctx.ch.database) };
  }
}
