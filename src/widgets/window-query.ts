import { z } from 'zod';
import { IsoDateTime, isoToEpochMs } from '../edge-schemas.js';
import { RANGES } from './data.js';

/**
 * The answer window a widget read names (docs/dashboards.md, "The window"): a named `range` or
 * `start_time`/`end_time`. Shared by the dashboard data read and the ad-hoc widget query.
 */
export const WindowFields = {
  range: z.enum(Object.keys(RANGES) as [string, ...string[]]).optional(),
  start_time: IsoDateTime.optional(),
  end_time: IsoDateTime.optional(),
};

/** A time without an offset is UTC (as everywhere in the API). */
export function utc(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ms = isoToEpochMs(value);
  // An impossible date stays as sent: resolveWindow answers it with a 422.
  return Number.isNaN(ms) ? value : new Date(ms).toISOString();
}
