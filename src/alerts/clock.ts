import { WINDOWS, type AlertWindow } from './schema.js';

/**
 * When windows close. The scheduler ticks at second 30 of every minute (TICK_PATTERN); a tick
 * evaluates the windows ending at the last whole minute that is at least LATENESS_MS old. So spans
 * that arrive up to 30 s after their minute ends are counted, and a tick that runs late (a busy
 * worker, a restart) still evaluates the same window: the window end depends on the minute, not on
 * the exact moment the job runs. Spans later than that are stored but not seen by that evaluation.
 */
export const LATENESS_MS = 30_000;
export const MINUTE_MS = 60_000;
/** Six-field cron (seconds first): every minute at :30. */
export const TICK_PATTERN = '30 * * * * *';

/** The end of the newest window a tick at `nowMs` evaluates (epoch ms, a whole minute). */
export function closedWindowEnd(nowMs: number): number {
  return Math.floor((nowMs - LATENESS_MS) / MINUTE_MS) * MINUTE_MS;
}

export function windowStart(window: AlertWindow, endMs: number): number {
  return endMs - WINDOWS[window] * MINUTE_MS;
}
