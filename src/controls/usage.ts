import type { AppContext } from '../context.js';

/**
 * Ingest usage per project and UTC day (docs/producer-controls.md, "Usage"): each API process adds
 * what it accepted (spans, request bytes, requests), masked and sampled out into memory, and writes the sums to
 * Postgres (`usage_daily`) every `FLUSH_MS` and when it stops. The daily span quota reads the day's
 * stored total (kept `TOTAL_TTL_MS`) plus what this process has not written yet, so every process
 * enforces it within a few seconds of the others.
 */
const FLUSH_MS = 5_000;
const TOTAL_TTL_MS = 5_000;

export type UsageCounts = { spans: number; bytes: number; requests: number; masked: number; sampledOut: number };

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class UsageMeter {
  private pending = new Map<string, UsageCounts>();
  private readonly totals = new Map<string, { spans: number; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: AppContext,
    private readonly now: () => number = Date.now,
  ) {}

  add(projectId: string, counts: Partial<UsageCounts>): void {
    const key = `${projectId}|${utcDay(this.now())}`;
    const c = this.pending.get(key) ?? { spans: 0, bytes: 0, requests: 0, masked: 0, sampledOut: 0 };
    c.spans += counts.spans ?? 0;
    c.bytes += counts.bytes ?? 0;
    c.requests += counts.requests ?? 0;
    c.masked += counts.masked ?? 0;
    c.sampledOut += counts.sampledOut ?? 0;
    this.pending.set(key, c);
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_MS);
      this.timer.unref();
    }
  }

  /** Spans accepted today: the stored total (cached briefly) and this process's unwritten ones. */
  async spansToday(projectId: string): Promise<number> {
    const day = utcDay(this.now());
    const key = `${projectId}|${day}`;
    let total = this.totals.get(key);
    if (!total || this.now() - total.at >= TOTAL_TTL_MS) {
      const { rows } = await this.ctx.pg.pool.query<{ spans: string }>(
        'SELECT spans FROM usage_daily WHERE project_id = $1 AND day = $2',
        [projectId, day],
      );
      total = { spans: Number(rows[0]?.spans ?? 0), at: this.now() };
      this.totals.set(key, total);
      if (this.totals.size > 10_000) this.totals.delete(this.totals.keys().next().value!);
    }
    return total.spans + (this.pending.get(key)?.spans ?? 0);
  }

  /** Writes the sums counted so far (one statement per project and day); a failure keeps them for the next try. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      const batch = this.pending;
      if (batch.size === 0) return;
      this.pending = new Map();
      for (const [key, c] of batch) {
        const [projectId, day] = key.split('|') as [string, string];
        try {
          await this.ctx.pg.pool.query(
            `INSERT INTO usage_daily (project_id, day, spans, bytes, requests, masked_values, sampled_out_spans)
             SELECT $1, $2, $3, $4, $5, $6, $7 WHERE EXISTS (SELECT 1 FROM projects WHERE id = $1)
             ON CONFLICT (project_id, day) DO UPDATE SET spans = usage_daily.spans + excluded.spans,
               bytes = usage_daily.bytes + excluded.bytes, requests = usage_daily.requests + excluded.requests,
               masked_values = usage_daily.masked_values + excluded.masked_values,
               sampled_out_spans = usage_daily.sampled_out_spans + excluded.sampled_out_spans`,
            [projectId, day, c.spans, c.bytes, c.requests, c.masked, c.sampledOut],
          );
          // The stored total moved: read it again at the next quota check.
          this.totals.delete(key);
        } catch {
          const again = this.pending.get(key) ?? { spans: 0, bytes: 0, requests: 0, masked: 0, sampledOut: 0 };
          this.pending.set(key, {
            spans: again.spans + c.spans,
            bytes: again.bytes + c.bytes,
            requests: again.requests + c.requests,
            masked: again.masked + c.masked,
            sampledOut: again.sampledOut + c.sampledOut,
          });
        }
      }
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

const meters = new WeakMap<AppContext, UsageMeter>();

export function usageMeterOf(ctx: AppContext): UsageMeter {
  let meter = meters.get(ctx);
  if (!meter) meters.set(ctx, (meter = new UsageMeter(ctx)));
  return meter;
}
