import type { AppContext } from '../context.js';
import type { DetectorType, ErrorConfig, SqlConfig, ThresholdConfig } from '../detectors/config.js';

/** A detector as the detection worker reads it: its definition and its pass state (postgres/0004_signals.sql). */
export type DetectorState = {
  id: string;
  project_id: string;
  name: string;
  type: DetectorType;
  config: ErrorConfig | ThresholdConfig | SqlConfig;
  enabled: boolean;
  scan_from: Date;
  watermark_ms: string | null;
  pass_seq: string;
  last_run_at: Date | null;
};

/** Test hooks standing for a worker that stops mid-pass (restart tests); never set in production. */
export type PassFaults = { afterQuery?: () => void; afterCommit?: () => void };

/**
 * How far a pass re-reads below its watermark. A span's `ingested_at` is stamped when its insert
 * starts, and the insert is visible when it ends; an insert that takes longer than this could be
 * missed. Group commits take well under a second here (bench); 30 s leaves a wide margin, and the
 * re-read costs little (the overlap's spans are skipped by the findings check).
 */
export const LATENESS_OVERLAP_MS = 30_000;

const COLUMNS =
  'd.id, d.project_id, d.name, d.type, d.config, d.enabled, d.scan_from, d.watermark_ms, d.pass_seq, d.last_run_at';

/** Enabled detectors of live projects (all, or of `projectIds`), and disabled ones with outbox rows to flush. */
export async function detectorStates(ctx: AppContext, projectIds?: string[]): Promise<DetectorState[]> {
  const { rows } = await ctx.pg.pool.query<DetectorState>(
    `SELECT ${COLUMNS} FROM detectors d JOIN projects p ON p.id = d.project_id AND p.deleted_at IS NULL
      WHERE (d.enabled OR EXISTS (SELECT 1 FROM finding_outbox o WHERE o.detector_id = d.id))
        AND ($1::uuid[] IS NULL OR d.project_id = ANY($1::uuid[]))
      ORDER BY d.project_id, d.created_at, d.id`,
    [projectIds ?? null],
  );
  return rows;
}

export async function detectorState(ctx: AppContext, detectorId: string): Promise<DetectorState> {
  const { rows } = await ctx.pg.pool.query<DetectorState>(`SELECT ${COLUMNS} FROM detectors d WHERE d.id = $1`, [
    detectorId,
  ]);
  if (!rows[0]) throw new Error(`detector ${detectorId} not found`);
  return rows[0];
}

/**
 * The exclusive lower bound of an incremental pass on `ingested_at`, epoch ms: the watermark minus
 * the overlap; before a first pass, the moment the detector was created or re-enabled (what was
 * stored before that is not its business).
 */
export function passFrom(d: Pick<DetectorState, 'scan_from' | 'watermark_ms'>): number {
  return d.watermark_ms === null ? d.scan_from.getTime() : Number(d.watermark_ms) - LATENESS_OVERLAP_MS;
}

/**
 * Whether an incremental detector has anything to look at, given the newest `ingested_at` of its
 * project's spans: something stored above its watermark, or its watermark is recent enough that a
 * span stamped just below it may still become visible (the overlap's tail).
 */
export function incrementalDue(
  d: Pick<DetectorState, 'scan_from' | 'watermark_ms'>,
  latestMs: number | undefined,
  nowMs: number,
): boolean {
  if (d.watermark_ms === null) return (latestMs ?? 0) > passFrom(d);
  const watermark = Number(d.watermark_ms);
  return (latestMs ?? 0) > watermark || nowMs - watermark < LATENESS_OVERLAP_MS;
}

/** Whether a sql detector's interval has passed since its last run. */
export function sqlDue(d: Pick<DetectorState, 'config' | 'last_run_at'>, nowMs: number): boolean {
  const minutes = (d.config as SqlConfig).interval_minutes;
  return d.last_run_at === null || nowMs - d.last_run_at.getTime() >= minutes * 60_000;
}
