import { NotFoundError } from '../errors.js';
import { isUuid } from '../ids.js';
import type { Queryable } from '../stores/postgres.js';
import { type SignalStatus } from './vocabulary.js';

/**
 * Signal reads (docs/signals.md, "Signals"). A signal
 * is one problem a detector found (one per detector and group key), with its status and counts.
 * Merged signals are still answered by the detail read, with `merged_into_id`; lists leave them out.
 */

export { SIGNAL_STATUSES, type SignalStatus } from './vocabulary.js';
export const RCA_STATES = ['none', 'pending', 'ready', 'failed'] as const;
export type RcaState = (typeof RCA_STATES)[number];

export const SIGNAL_NOT_FOUND = 'signal not found';

export type RcaHint = { attribute: string; value: string; signal_share: number; baseline_share: number; lift: number };
/** The root-cause answer on the detail (an addition to the spec's fields; issue 11). */
export type RcaAnswer = { generated_at: string; hints: RcaHint[]; error?: string };

export type SignalListItem = {
  signal_id: string;
  detector_id: string;
  detector_name: string;
  title: string;
  status: SignalStatus;
  created_at: string;
  first_seen_at: string;
  last_seen_at: string;
  hit_count: number;
  reopen_count: number;
  rca_state: RcaState;
};
export type SignalDetail = SignalListItem & {
  resolved_at: string | null;
  merged_into_id: string | null;
  rca: RcaAnswer | null;
};

export type SignalRow = {
  id: string;
  project_id: string;
  detector_id: string;
  detector_name: string;
  title: string;
  status: SignalStatus;
  created_at: Date;
  first_seen_at: Date;
  last_seen_at: Date;
  hit_count: string | number;
  reopen_count: number;
  rca_state: RcaState;
  resolved_at: Date | null;
  merged_into_id: string | null;
  rca: RcaAnswer | null;
};

export const SIGNAL_COLUMNS = `s.id, s.project_id, s.detector_id, d.name AS detector_name, s.title, s.status, s.created_at, s.first_seen_at,
  s.last_seen_at, s.hit_count, s.reopen_count, s.rca_state, s.resolved_at, s.merged_into_id, s.rca`;
export const SIGNAL_FROM = 'signals s JOIN detectors d ON d.id = s.detector_id';

export function listItemOf(row: SignalRow): SignalListItem {
  return {
    signal_id: row.id,
    detector_id: row.detector_id,
    detector_name: row.detector_name,
    title: row.title,
    status: row.status,
    created_at: row.created_at.toISOString(),
    first_seen_at: row.first_seen_at.toISOString(),
    last_seen_at: row.last_seen_at.toISOString(),
    hit_count: Number(row.hit_count),
    reopen_count: row.reopen_count,
    rca_state: row.rca_state,
  };
}

export function detailOf(row: SignalRow): SignalDetail {
  const ready = row.rca_state === 'ready' || row.rca_state === 'failed';
  return {
    ...listItemOf(row),
    resolved_at: row.resolved_at?.toISOString() ?? null,
    merged_into_id: row.merged_into_id,
    rca: ready ? row.rca : null,
  };
}

export type SignalListQuery = { limit: number; page: number; status?: SignalStatus; detector_id?: string };
export type Page<T> = { data: T[]; meta: { page: number; limit: number; total: number } };

/** Newest first (creation time, ties by id); merged signals left out. */
export async function listSignals(db: Queryable, projectId: string, q: SignalListQuery): Promise<Page<SignalListItem>> {
  const meta = { page: q.page, limit: q.limit, total: 0 };
  // An id that can't be a detector's matches nothing (not a 422: the spec types it as a string).
  if (q.detector_id !== undefined && !isUuid(q.detector_id)) return { data: [], meta };
  // $1 project, $2 status or null, $3 detector or null
  const where = `s.project_id = $1 AND s.merged_into_id IS NULL AND ($2::text IS NULL OR s.status = $2) AND ($3::uuid IS NULL OR s.detector_id = $3)`;
  const params = [projectId, q.status ?? null, q.detector_id ?? null];
  const { rows } = await db.query<SignalRow>(
    `SELECT ${SIGNAL_COLUMNS} FROM ${SIGNAL_FROM} WHERE ${where} ORDER BY s.created_at DESC, s.id DESC LIMIT $4 OFFSET $5`,
    [...params, q.limit, q.page * q.limit],
  );
  const counted = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM signals s WHERE ${where}`, params);
  return { data: rows.map(listItemOf), meta: { ...meta, total: counted.rows[0]!.n } };
}

/** One signal of the project, merged or not; 404 otherwise. `lock` takes its row lock (inside a transaction). */
export async function findSignal(db: Queryable, projectId: string, signalId: string, lock = false): Promise<SignalRow> {
  if (!isUuid(signalId)) throw new NotFoundError(SIGNAL_NOT_FOUND);
  const { rows } = await db.query<SignalRow>(
    `SELECT ${SIGNAL_COLUMNS} FROM ${SIGNAL_FROM} WHERE s.id = $1 AND s.project_id = $2${lock ? ' FOR UPDATE OF s' : ''}`,
    [signalId, projectId],
  );
  if (!rows[0]) throw new NotFoundError(SIGNAL_NOT_FOUND);
  return rows[0];
}

export async function getSignal(db: Queryable, projectId: string, signalId: string): Promise<SignalDetail> {
  return detailOf(await findSignal(db, projectId, signalId));
}

/**
 * The signals whose findings count for each given signal: itself and those merged into it (merges
 * never chain; see postgres/0004_signals.sql). Unknown ids, or another project's, map to themselves,
 * which match nothing in this project's findings. Used by the findings list and the `signal_id`
 * trace filter (docs/signals.md, "Merge": the filter on a merge target matches its sources' traces too).
 */
export async function signalMembers(
  db: Queryable,
  projectId: string,
  signalIds: readonly string[],
): Promise<Record<string, string[]>> {
  const members: Record<string, string[]> = Object.fromEntries(signalIds.map((id) => [id, [id]]));
  const ids = [...new Set(signalIds.filter(isUuid).map((id) => id.toLowerCase()))];
  if (ids.length === 0) return members;
  const { rows } = await db.query<{ id: string; merged_into_id: string }>(
    'SELECT id, merged_into_id FROM signals WHERE project_id = $1 AND merged_into_id = ANY($2::uuid[])',
    [projectId, ids],
  );
  for (const id of signalIds) {
    const key = id.toLowerCase();
    members[id] = [key, ...rows.filter((r) => r.merged_into_id === key).map((r) => r.id)];
  }
  return members;
}

/** The signal each stored finding's signal counts for now: its merge target, or itself. */
export async function effectiveSignals(db: Queryable, signalIds: readonly string[]): Promise<Map<string, string>> {
  const ids = [...new Set(signalIds.filter(isUuid))];
  const map = new Map(ids.map((id) => [id, id]));
  if (ids.length === 0) return map;
  const { rows } = await db.query<{ id: string; merged_into_id: string }>(
    'SELECT id, merged_into_id FROM signals WHERE id = ANY($1::uuid[]) AND merged_into_id IS NOT NULL',
    [ids],
  );
  for (const r of rows) map.set(r.id, r.merged_into_id);
  return map;
}
