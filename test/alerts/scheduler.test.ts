import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { ALERTS_QUEUE, scheduleTicks, TICK_SCHEDULER_ID } from '../../src/alerts/evaluation.js';
import { closedWindowEnd, LATENESS_MS, TICK_PATTERN } from '../../src/alerts/clock.js';

/** The evaluation tick: one job scheduler per deployment, every minute at :30, windows by whole minutes. */

// Its own queue prefix, and no worker in this file: the scheduled tick is looked at, never run.
const h = useHarness({ QUEUE_PREFIX: `alerts-scheduler-${crypto.randomBytes(4).toString('hex')}` });

describe('the evaluation tick', () => {
  it('is one job scheduler, every minute at second 30; upserting it again (another worker process) changes nothing', async () => {
    const queue = h().ctx.queue.queue(ALERTS_QUEUE);
    try {
      await scheduleTicks(h().ctx);
      await scheduleTicks(h().ctx);
      const schedulers = await queue.getJobSchedulers();
      expect(schedulers.map((s) => [s.key, s.pattern])).toEqual([[TICK_SCHEDULER_ID, TICK_PATTERN]]);
      // Delayed until its second 30, or already waiting if that second came during the test (no worker here).
      const next = (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((j) => j.name === 'tick');
      expect(next).toHaveLength(1);
      expect(new Date(next[0]!.timestamp + (next[0]!.opts.delay ?? 0)).getUTCSeconds()).toBe(30);
    } finally {
      await queue.removeJobScheduler(TICK_SCHEDULER_ID);
    }
    expect(await queue.getJobSchedulers()).toEqual([]);
    expect(await queue.getDelayed()).toEqual([]);
  });

  it('evaluates the last whole minute that is at least 30 s old', () => {
    const at = (iso: string) => new Date(closedWindowEnd(Date.parse(iso))).toISOString();
    expect(LATENESS_MS).toBe(30_000);
    expect(at('2026-11-22T10:05:30.000Z')).toBe('2026-11-22T10:05:00.000Z');
    expect(at('2026-11-22T10:05:31.500Z')).toBe('2026-11-22T10:05:00.000Z');
    // A tick that runs late still evaluates the window of its minute.
    expect(at('2026-11-22T10:06:29.999Z')).toBe('2026-11-22T10:05:00.000Z');
    expect(at('2026-11-22T10:06:30.000Z')).toBe('2026-11-22T10:06:00.000Z');
  });
});
