import type { AppContext } from '../context.js';
import { newId } from '../ids.js';
import { withTransaction, type Queryable } from '../stores/postgres.js';
import type { Group } from './groups.js';

/**
 * The Postgres side of a detection pass: one transaction that counts the pass's new findings into
 * their signals and moves the detector's watermark, then the findings go to ClickHouse through an
 * outbox (postgres/0004_signals.sql, `finding_outbox`). Why this order:
 * - The transaction commits only if the detector's `pass_seq` is still the one the pass started
 *   from (compare-and-set under the detector's row lock), so two workers running the same detector
 *   count its findings once: the later commit finds the token moved and drops its pass.
 * - ClickHouse gets the findings after the commit, from the outbox, and every pass first flushes
 *   what a stopped worker left there; the pass's query leaves out findings ClickHouse holds. So a
 *   finding is counted in Postgres exactly when it is (or is about to be) in ClickHouse, and a
 *   restarted worker neither misses nor repeats one (the insert itself is idempotent: same rows,
 *   same ReplacingMergeTree key).
 */

export type NewFinding = {
  finding_id: string;
  trace_id: string;
  span_id: string;
  group: Group;
  summary: string;
  /** When the problem happened (the span's start, or the trace's for a sql row), epoch ms. */
  occurred_ms: number;
  /** The trace's start, epoch ms: the reopen rule compares it with `resolved_at`. */
  trace_start_ms: number;
};

export type PassCommit = {
  detectorId: string;
  projectId: string;
  /** The `pass_seq` the pass read; the commit happens only if it is still current. */
  passSeq: number;
  findings: NewFinding[];
  /** The next watermark (epoch ms of `ingested_at`), or null to keep it (sql detectors). */
  watermarkMs: number | null;
  foundAtMs: number;
};

export type CommitOutcome = { committed: boolean; created: string[]; reopened: string[]; hits: number };

type Aggregate = { n: number; min_ms: number; max_ms: number; max_trace_ms: number };

function add(into: Map<string, Aggregate>, key: string, f: NewFinding): void {
  const a = into.get(key);
  if (!a) into.set(key, { n: 1, min_ms: f.occurred_ms, max_ms: f.occurred_ms, max_trace_ms: f.trace_start_ms });
  else {
    a.n++;
    a.min_ms = Math.min(a.min_ms, f.occurred_ms);
    a.max_ms = Math.max(a.max_ms, f.occurred_ms);
    a.max_trace_ms = Math.max(a.max_trace_ms, f.trace_start_ms);
  }
}

export async function commitPass(ctx: AppContext, pass: PassCommit): Promise<CommitOutcome> {
  return withTransaction(ctx.pg.pool, async (tx) => {
    const { rows } = await tx.query<{ pass_seq: string }>('SELECT pass_seq FROM detectors WHERE id = $1 FOR UPDATE', [
      pass.detectorId,
    ]);
    if (!rows[0] || Number(rows[0].pass_seq) !== pass.passSeq)
      return { committed: false, created: [], reopened: [], hits: 0 };
    const outcome: CommitOutcome = { committed: true, created: [], reopened: [], hits: pass.findings.length };
    if (pass.findings.length > 0) {
      const signalOf = await countFindings(tx, pass, outcome);
      const values = pass.findings.map((f) => ({
        project_id: pass.projectId,
        signal_id: signalOf.get(f.group.key)!,
        detector_id: pass.detectorId,
        finding_id: f.finding_id,
        trace_id: f.trace_id,
        span_id: f.span_id,
        trace_start_time: f.trace_start_ms,
        found_at: pass.foundAtMs,
        summary: f.summary,
      }));
      // $1 detector, $2 the pass's sequence number, $3 project, $4 the ClickHouse rows
      await tx.query(
        'INSERT INTO finding_outbox (detector_id, pass_seq, project_id, rows) VALUES ($1, $2, $3, $4::jsonb)',
        [pass.detectorId, pass.passSeq + 1, pass.projectId, JSON.stringify(values)],
      );
    }
    await tx.query(
      `UPDATE detectors SET pass_seq = pass_seq + 1, watermark_ms = GREATEST($2::bigint, watermark_ms),
              last_run_at = now(), last_error = NULL, last_error_at = NULL
        WHERE id = $1`,
      [pass.detectorId, pass.watermarkMs],
    );
    return outcome;
  });
}

/**
 * Creates the signals of new groups, then adds each finding to the signal its group counts for (the
 * group's own, or the one it was merged into) and reopens resolved ones whose new findings come from
 * traces that started after the resolve. Returns the group's own signal id by group key: the id its
 * findings are stored under.
 */
async function countFindings(tx: Queryable, pass: PassCommit, outcome: CommitOutcome): Promise<Map<string, string>> {
  const byGroup = new Map<string, Aggregate>();
  const groups = new Map<string, Group>();
  for (const f of pass.findings) {
    add(byGroup, f.group.key, f);
    groups.set(f.group.key, f.group);
  }
  const fresh = [...groups.values()].map((g) => ({
    id: newId(),
    key: g.key,
    fields: g.fields,
    title: g.title,
    min_ms: byGroup.get(g.key)!.min_ms,
    max_ms: byGroup.get(g.key)!.max_ms,
  }));
  // New groups get their signal, open, with root-cause hints asked for (src/signals/rca.ts).
  // $1 project, $2 detector, $3 [{id, key, fields, title, min_ms, max_ms}]
  const inserted = await tx.query<{ id: string }>(
    `INSERT INTO signals (id, project_id, detector_id, group_key, group_fields, title, first_seen_at, last_seen_at, rca_state, rca_requested_at)
     SELECT g.id, $1, $2, g.key, g.fields, g.title, to_timestamp(g.min_ms / 1000.0), to_timestamp(g.max_ms / 1000.0), 'pending', now()
       FROM jsonb_to_recordset($3::jsonb) AS g(id uuid, key text, fields jsonb, title text, min_ms double precision, max_ms double precision)
     ON CONFLICT (detector_id, group_key) DO NOTHING
     RETURNING id`,
    [pass.projectId, pass.detectorId, JSON.stringify(fresh)],
  );
  outcome.created = inserted.rows.map((r) => r.id);
  // Row locks in id order (as every other signal write takes them), the group's own signals first.
  const bases = await tx.query<{ id: string; group_key: string; merged_into_id: string | null }>(
    'SELECT id, group_key, merged_into_id FROM signals WHERE detector_id = $1 AND group_key = ANY($2::text[]) ORDER BY id FOR UPDATE',
    [pass.detectorId, [...groups.keys()]],
  );
  const signalOf = new Map(bases.rows.map((r) => [r.group_key, r.id]));
  const countsFor = new Map(bases.rows.map((r) => [r.group_key, r.merged_into_id ?? r.id]));
  const bySignal = new Map<string, Aggregate>();
  for (const f of pass.findings) add(bySignal, countsFor.get(f.group.key)!, f);
  const targets = await tx.query<{ id: string; status: string; resolved_at: Date | null }>(
    'SELECT id, status, resolved_at FROM signals WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE',
    [[...bySignal.keys()]],
  );
  // The automatic reopen (docs/signals.md, "Signal status"): resolved, and the finding's trace started
  // after the resolve. A late finding from an older trace leaves it resolved; dismissed never reopens.
  const reopen = new Set(
    targets.rows
      .filter(
        (t) => t.status === 'resolved' && t.resolved_at && bySignal.get(t.id)!.max_trace_ms > t.resolved_at.getTime(),
      )
      .map((t) => t.id),
  );
  outcome.reopened = [...reopen];
  const updates = [...bySignal.entries()].map(([id, a]) => ({ id, ...a, reopen: reopen.has(id) }));
  // $1 [{id, n, min_ms, max_ms, reopen}]
  await tx.query(
    `UPDATE signals s SET
        hit_count = s.hit_count + u.n,
        first_seen_at = LEAST(s.first_seen_at, to_timestamp(u.min_ms / 1000.0)),
        last_seen_at = GREATEST(s.last_seen_at, to_timestamp(u.max_ms / 1000.0)),
        status = CASE WHEN u.reopen THEN 'open' ELSE s.status END,
        resolved_at = CASE WHEN u.reopen THEN NULL ELSE s.resolved_at END,
        reopen_count = s.reopen_count + CASE WHEN u.reopen THEN 1 ELSE 0 END,
        status_changed_at = CASE WHEN u.reopen THEN now() ELSE s.status_changed_at END,
        status_changed_by = CASE WHEN u.reopen THEN NULL ELSE s.status_changed_by END,
        rca_state = CASE WHEN u.reopen THEN 'pending' ELSE s.rca_state END,
        rca_requested_at = CASE WHEN u.reopen THEN now() ELSE s.rca_requested_at END,
        update_time = now()
       FROM jsonb_to_recordset($1::jsonb) AS u(id uuid, n bigint, min_ms double precision, max_ms double precision, reopen boolean)
      WHERE s.id = u.id`,
    [JSON.stringify(updates)],
  );
  return signalOf;
}

/** Inserts what committed passes of a detector left in the outbox into ClickHouse, then clears it. */
export async function flushOutbox(ctx: AppContext, detectorId: string): Promise<number> {
  const { rows } = await ctx.pg.pool.query<{ pass_seq: string; rows: Record<string, unknown>[] }>(
    'SELECT pass_seq, rows FROM finding_outbox WHERE detector_id = $1 ORDER BY pass_seq',
    [detectorId],
  );
  let inserted = 0;
  for (const entry of rows) {
    await ctx.ch.client.insert({ table: 'findings', values: entry.rows, format: 'JSONEachRow' });
    await ctx.pg.pool.query('DELETE FROM finding_outbox WHERE detector_id = $1 AND pass_seq = $2', [
      detectorId,
      entry.pass_seq,
    ]);
    inserted += entry.rows.length;
  }
  return inserted;
}
