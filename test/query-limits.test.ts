import { describe, expect, it } from 'vitest';
import { useHarness } from './support/harness.js';
import { createServer } from '../src/http.js';
import { QueryLimitError } from '../src/errors.js';
import { settingsClause, withinLimits, type QueryLimits } from '../src/query/limits.js';

/**
 * A ClickHouse query stopped by one of the limits in its SETTINGS is the caller's 400 naming the
 * limit, never a 500 (issue 9): through `withinLimits` with a route's advice, and through the one
 * error map for any limit error a route let through. Real queries on the embedded engine.
 */

const h = useHarness();
const LIMITS: QueryLimits = {
  maxExecutionSeconds: 10,
  maxMemoryBytes: 100_000_000,
  maxResultRows: 10,
  maxResultBytes: 1_000_000,
};

function run(sql: string) {
  return async () => {
    const result = await h().ctx.ch.client.query({ query: `${sql}\n${settingsClause(LIMITS)}`, format: 'JSONEachRow' });
    return result.json();
  };
}

describe('withinLimits', () => {
  it('names the memory limit', async () => {
    const error = await withinLimits(
      LIMITS,
      'narrow it',
      run('SELECT groupArray(repeat(toString(number), 1000)) FROM numbers(1000000)'),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryLimitError);
    expect((error as QueryLimitError).detail).toBe('the query needed more than its memory limit of 95 MiB; narrow it');
  });

  it('names the answer limits, for rows and for bytes', async () => {
    for (const sql of ['SELECT number FROM numbers(100)', 'SELECT repeat(toString(number), 300000) FROM numbers(5)']) {
      const error = await withinLimits(LIMITS, 'narrow it', run(sql)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueryLimitError);
      expect((error as QueryLimitError).detail).toBe(
        'the answer would exceed its limit of 10 rows and 1 MiB; narrow it',
      );
    }
  });

  it('passes an answer within the limits, and other errors as they are; the settings do not stick to the session', async () => {
    expect(await withinLimits(LIMITS, 'narrow it', run('SELECT number FROM numbers(3)'))).toEqual([
      { number: 0 },
      { number: 1 },
      { number: 2 },
    ]);
    const error = await withinLimits(LIMITS, 'narrow it', run('SELECT no_such_column FROM numbers(3)')).catch(
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(QueryLimitError);
    const after = await h().ctx.ch.client.query({
      query: "SELECT getSetting('max_result_rows') AS rows, count() AS n FROM numbers(100)",
      format: 'JSONEachRow',
    });
    const [row] = await after.json<{ rows: unknown; n: unknown }>();
    expect([Number(row!.rows), Number(row!.n)]).toEqual([0, 100]);
  });
});

describe('the error map', () => {
  it('answers a limit error no route translated with 400 {detail}, not 500', async () => {
    const app = createServer({ logLevel: 'silent' });
    app.get('/big', async () => run('SELECT number FROM numbers(100)')());
    const res = await app.inject({ method: 'GET', url: '/big' });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json())).toEqual(['detail']);
    await app.close();
  });
});
