import { describe, expect, it } from 'vitest';
import { useHarness } from '../support/harness.js';
import { paramBuilder } from '../../src/query/params.js';
import { recentIngest } from '../../src/signals/detection.js';

/**
 * Times reach ClickHouse as parameters in epoch seconds. The engine reads a bare number as a date
 * only when it does not look like a year or a short date: `0`, `1`, `3600` were refused,
 * so a window or detector pass starting at the epoch failed with a 500.
 */
describe('time parameters near the epoch', () => {
  const h = useHarness();

  it.each([0, 0.001, 1, 3600, 86_400, 1_764_000_000.123])('DateTime64 and DateTime take %s seconds', async (s) => {
    const b = paramBuilder();
    const rows = await h().ctx.ch.rows<{ ms: string | number; sec: string | number }>({
      query: `SELECT toUnixTimestamp64Milli(${b.param("DateTime64(3, 'UTC')", s)}) AS ms, toUnixTimestamp(${b.param("DateTime('UTC')", s)}) AS sec`,
      query_params: b.params,
    });
    expect(Number(rows[0]!.ms)).toBe(Math.round(s * 1000));
    expect(Number(rows[0]!.sec)).toBe(Math.floor(s));
  });

  it('the detection tick reads ingest since the epoch', async () => {
    const latest = await recentIngest(h().ctx, 0, ['no-such-project']);
    expect(latest.size).toBe(0);
  });
});
