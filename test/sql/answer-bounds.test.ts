import { describe, expect, it } from 'vitest';
import { SQL_LIMITS } from '../../src/sql/service.js';
import { useHarness } from '../support/harness.js';
import { sql, useWorld } from './hostile-fixture.js';

/** Public SQL bounds the bytes of its answer, not only its rows (docs/sql.md: at most 10,000 rows). */

const h = useHarness();
const w = useWorld(h);

describe('public SQL answer size', () => {
  it('10,000 rows of 1 MB strings are refused with a 400 naming the limit, and the process lives on', async () => {
    const res = await sql(
      h(),
      w().a.key.key,
      "SELECT repeat('x', 1000000) AS s FROM spans AS a, spans AS b LIMIT 10000",
    );
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.json().detail).toMatch(/larger than 32 MiB|memory limit/);
    const after = await sql(h(), w().a.key.key, 'SELECT count() FROM spans');
    expect(after.statusCode).toBe(200);
  });

  it('10,000 rows of 10 KB strings (100 MB) stop at the answer byte limit', async () => {
    const res = await sql(h(), w().a.key.key, "SELECT repeat('x', 10000) AS s FROM spans AS a, spans AS b LIMIT 10000");
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
    expect(res.json().detail).toMatch(
      /^query answer is larger than (32|64) MiB; select fewer columns or rows, or aggregate more$/,
    );
  });

  it('an answer under the byte limit is whole', async () => {
    const res = await sql(h(), w().a.key.key, "SELECT repeat('y', 1000) AS s FROM spans AS a, spans AS b LIMIT 2000");
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json().row_count).toBe(2000);
    expect(SQL_LIMITS.maxResultBytes).toBe(32 * 1024 * 1024);
  });
});
