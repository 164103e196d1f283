import type { AppContext } from '../context.js';
import { compileMasking, MaskingSetting, type Masker } from './masking.js';
import { QuotasSetting } from './quota-setting.js';
import { SamplingSetting } from './sampling.js';

/**
 * A project's producer controls as the ingest path reads them (docs/producer-controls.md): its masker,
 * quotas and sampling, loaded from Postgres and kept per process for `TTL_MS`, so a `PUT` applies on every
 * API process within that time (at once on the process that took it). A project without a row
 * masks nothing, has no quota and keeps every trace (`sampling` null).
 */
export const TTL_MS = 10_000;
const MAX_PROJECTS = 10_000;

export type ProjectControls = {
  masker: Masker | null;
  quotas: QuotasSetting;
  /** Null when every trace is kept (no setting, or `rate` 1). */
  sampling: SamplingSetting | null;
};

const NONE: ProjectControls = { masker: null, quotas: {}, sampling: null };

type Row = { masking: unknown; quotas: unknown; sampling: unknown };

export class ControlsBook {
  private readonly cached = new Map<string, { controls: ProjectControls; loadedAt: number }>();
  private writes = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly now: () => number = Date.now,
  ) {}

  /** The keyed-hash key of a project's masking `hash` action: derived from the deployment's secrets key. */
  hashKey(projectId: string): Buffer {
    return this.ctx.secrets.derive(`masking-hash:${projectId}`);
  }

  async of(projectId: string): Promise<ProjectControls> {
    const found = this.cached.get(projectId);
    if (found && this.now() - found.loadedAt < TTL_MS) return found.controls;
    const writes = this.writes;
    const { rows } = await this.ctx.pg.pool.query<Row>(
      'SELECT masking, quotas, sampling FROM project_controls WHERE project_id = $1',
      [projectId],
    );
    const controls = rows[0] ? this.compile(projectId, rows[0]) : NONE;
    if (writes === this.writes) {
      this.cached.delete(projectId);
      if (this.cached.size >= MAX_PROJECTS) this.cached.delete(this.cached.keys().next().value!);
      this.cached.set(projectId, { controls, loadedAt: this.now() });
    }
    return controls;
  }

  private compile(projectId: string, row: Row): ProjectControls {
    // Stored settings were checked when written; one that no longer parses masks nothing rather than
    // refusing every span (and is answered as stored by GET, so the owner sees it).
    const masking = row.masking ? MaskingSetting.safeParse(row.masking) : null;
    const quotas = row.quotas ? QuotasSetting.safeParse(row.quotas) : null;
    const sampling = row.sampling ? SamplingSetting.safeParse(row.sampling) : null;
    return {
      masker: masking?.success ? compileMasking(masking.data, this.hashKey(projectId)) : null,
      quotas: quotas?.success ? quotas.data : {},
      sampling: sampling?.success && sampling.data.rate < 1 ? sampling.data : null,
    };
  }

  forget(projectId: string): void {
    this.writes++;
    this.cached.delete(projectId);
  }
}

const books = new WeakMap<AppContext, ControlsBook>();

/** The process's controls for one running context (ingest reads it; the settings routes invalidate it). */
export function controlsOf(ctx: AppContext): ControlsBook {
  let book = books.get(ctx);
  if (!book) books.set(ctx, (book = new ControlsBook(ctx)));
  return book;
}
