/**
 * Whether this process's event loop was blocked (docs/operations.md, "A stuck process"). A timer
 * meant to fire every TICK_MS notes how late it fired: a late tick is a loop that served nobody
 * meanwhile. `/healthz` answers 503 while a block past `maxBlockMs` ended less than FAIL_FOR_MS ago,
 * so an orchestrator's liveness probe (which timed out during the block itself) restarts the process
 * rather than finding it healthy again the moment the loop frees. The timer is unref'd: it never
 * keeps a process alive.
 */

export const TICK_MS = 250;
/** How long /healthz keeps failing after a block past the bound ended. */
export const FAIL_FOR_MS = 60_000;

export type LoopBlock = { ms: number; endedAt: number };

export class LoopWatch {
  private timer: NodeJS.Timeout | null = null;
  private expected = 0;
  private lastBlock: LoopBlock | null = null;

  constructor(
    readonly maxBlockMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  start(): this {
    this.expected = this.now() + TICK_MS;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The last block past the bound that still fails liveness, or null. */
  failing(): LoopBlock | null {
    const block = this.lastBlock;
    return block && this.now() - block.endedAt < FAIL_FOR_MS ? block : null;
  }

  private tick(): void {
    const now = this.now();
    const late = now - this.expected;
    if (late >= this.maxBlockMs) this.lastBlock = { ms: Math.round(late + TICK_MS), endedAt: now };
    this.expected = now + TICK_MS;
  }
}
