import type { AppContext } from '../context.js';
import { isUuid } from '../ids.js';
import { requireProjectRole } from '../auth/access.js';
import type { UserPrincipal } from '../auth/principal.js';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import {
  detailOf,
  findSignal,
  SIGNAL_NOT_FOUND,
  type SignalDetail,
  type SignalRow,
  type SignalStatus,
} from './service.js';

/**
 * Status changes of signals (docs/signals.md "Signal status", its table and rules 1-4).
 * Each change is one transaction that locks the signal's row first (docs/design.md, decision 6), so two
 * callers sending the same `expected_status` at once are served one after the other: the first
 * changes the status, the second finds it changed and gets the 409 (rule 2), and nothing it sent is
 * written. Roles: MEMBER or higher, checked inside the same transaction.
 *
 * `resolved_at` is set when a signal is resolved and cleared when it is reopened (an open signal is
 * not resolved); every reopen, by a person or by the detector, counts in `reopen_count`.
 */

export const RESOLVE_REASONS = ['fixed_elsewhere', 'fixed_by_pr', 'already_fixed_before', 'other'] as const;
export type ResolveReason = (typeof RESOLVE_REASONS)[number];
export const MAX_NOTE_LENGTH = 4000;

export type StatusChangeInput = {
  project_id: string;
  status: 'resolved' | 'open';
  reason?: ResolveReason;
  note?: string;
  expected_status?: SignalStatus;
};

/** The signal part of "Signal status change result": exactly these fields. */
export type StatusChangeSignal = {
  detector_id: string;
  project_id: string;
  reopen_count: number;
  resolved_at: string | null;
  signal_id: string;
  status: SignalStatus;
  title: string;
};
export type StatusChangeResult = { signal: StatusChangeSignal; updated: boolean; changed: string[] };

export const DISMISSED_DETAIL = 'a dismissed signal cannot be resolved or reopened through the API';

function resultSignal(row: SignalRow): StatusChangeSignal {
  return {
    detector_id: row.detector_id,
    project_id: row.project_id,
    reopen_count: row.reopen_count,
    resolved_at: row.resolved_at?.toISOString() ?? null,
    signal_id: row.id,
    status: row.status,
    title: row.title,
  };
}

export function expectedStatusConflict(expected: SignalStatus, current: SignalStatus): ConflictError {
  return new ConflictError(`expected_status is '${expected}' but the signal is '${current}'; nothing was changed`);
}

function mergedConflict(row: SignalRow): ConflictError {
  return new ConflictError(`the signal was merged into ${row.merged_into_id}; change that signal instead`);
}

/** `PATCH /signals/{signal_id}/status`. */
export async function changeSignalStatus(
  ctx: AppContext,
  user: UserPrincipal,
  signalId: string,
  input: StatusChangeInput,
): Promise<StatusChangeResult> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, input.project_id, 'MEMBER');
    const row = await findSignal(tx, input.project_id, signalId, true);
    // Rule 2 comes first: a caller whose view is stale learns that, whatever it asked for.
    if (input.expected_status !== undefined && input.expected_status !== row.status)
      throw expectedStatusConflict(input.expected_status, row.status);
    // Rule 1: the status it already has changes nothing (reason and note included).
    if (row.status === input.status) return { signal: resultSignal(row), updated: false, changed: [] };
    // Rule 4: no way out of dismissed through this API.
    if (row.status === 'dismissed') throw new BadRequestError(DISMISSED_DETAIL);
    if (row.merged_into_id) throw mergedConflict(row);
    if (input.status === 'resolved') {
      await tx.query(
        `UPDATE signals SET status = 'resolved', resolved_at = now(), resolution_reason = $2, resolution_note = $3,
                status_changed_at = now(), status_changed_by = $4, update_time = now()
          WHERE id = $1`,
        [row.id, input.reason!, input.note ?? null, user.userId],
      );
      return {
        signal: resultSignal(await findSignal(tx, input.project_id, row.id)),
        updated: true,
        changed: ['status', 'resolved_at'],
      };
    }
    await reopen(tx, row.id, user.userId);
    return {
      signal: resultSignal(await findSignal(tx, input.project_id, row.id)),
      updated: true,
      changed: ['status', 'resolved_at', 'reopen_count'],
    };
  });
}

/** resolved → open: by a person (`userId`) or by the detector (null). The caller holds the row lock. */
export async function reopen(tx: Queryable, signalId: string, userId: string | null): Promise<void> {
  await tx.query(
    `UPDATE signals SET status = 'open', resolved_at = NULL, reopen_count = reopen_count + 1,
            status_changed_at = now(), status_changed_by = $2, update_time = now()
      WHERE id = $1`,
    [signalId, userId],
  );
}

/** `POST {web_url}/api/projects/{project_id}/signals/{signal_id}/dismiss`: open or resolved → dismissed. */
export async function dismissSignal(
  ctx: AppContext,
  user: UserPrincipal,
  projectId: string,
  signalId: string,
): Promise<StatusChangeResult> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    const row = await findSignal(tx, projectId, signalId, true);
    if (row.status === 'dismissed') return { signal: resultSignal(row), updated: false, changed: [] };
    if (row.merged_into_id) throw mergedConflict(row);
    await tx.query(
      `UPDATE signals SET status = 'dismissed', status_changed_at = now(), status_changed_by = $2, update_time = now() WHERE id = $1`,
      [row.id, user.userId],
    );
    return { signal: resultSignal(await findSignal(tx, projectId, row.id)), updated: true, changed: ['status'] };
  });
}

export type MergeResult = { signal: SignalDetail; merged_into: SignalDetail };

/**
 * `POST {web_url}/api/projects/{project_id}/signals/{signal_id}/merge {into_signal_id}`. The source's
 * findings count for the target from now on: its hits join the target's, new findings of its group
 * go to the target, and signals merged into the source follow it (merges never chain). The source
 * keeps its own fields and answers GET with `merged_into_id`; lists leave it out. 409 when merging
 * into itself, into a merged or dismissed signal, or a signal that was merged already. The target's
 * root-cause hints are asked for again (the next detection tick answers them): its traces changed.
 */
export async function mergeSignal(
  ctx: AppContext,
  user: UserPrincipal,
  projectId: string,
  signalId: string,
  intoId: string,
): Promise<MergeResult> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    await requireProjectRole(tx, user, projectId, 'MEMBER');
    if (signalId.toLowerCase() === intoId.toLowerCase())
      throw new ConflictError('a signal cannot be merged into itself');
    // Both rows locked in id order, so two merges of the same pair can't deadlock.
    const ids = [signalId, intoId].filter(isUuid);
    await tx.query('SELECT 1 FROM signals WHERE id = ANY($1::uuid[]) AND project_id = $2 ORDER BY id FOR UPDATE', [
      ids,
      projectId,
    ]);
    const source = await findSignal(tx, projectId, signalId);
    const target = await findSignal(tx, projectId, intoId).catch((error: unknown) => {
      throw error instanceof NotFoundError ? new NotFoundError(`into_signal_id: ${SIGNAL_NOT_FOUND}`) : error;
    });
    if (source.merged_into_id) throw new ConflictError(`the signal was already merged into ${source.merged_into_id}`);
    if (target.merged_into_id)
      throw new ConflictError(`cannot merge into a signal that was merged into ${target.merged_into_id}`);
    if (target.status === 'dismissed') throw new ConflictError('cannot merge into a dismissed signal');
    await tx.query(`UPDATE signals SET merged_into_id = $2, merged_at = now(), update_time = now() WHERE id = $1`, [
      source.id,
      target.id,
    ]);
    await tx.query(`UPDATE signals SET merged_into_id = $2, update_time = now() WHERE merged_into_id = $1`, [
      source.id,
      target.id,
    ]);
    await tx.query(
      `UPDATE signals SET hit_count = hit_count + $2, first_seen_at = LEAST(first_seen_at, $3), last_seen_at = GREATEST(last_seen_at, $4),
              rca_state = 'pending', rca_requested_at = now(), update_time = now()
        WHERE id = $1`,
      [target.id, source.hit_count, source.first_seen_at, source.last_seen_at],
    );
    return {
      signal: detailOf(await findSignal(tx, projectId, source.id)),
      merged_into: detailOf(await findSignal(tx, projectId, target.id)),
    };
  });
}
