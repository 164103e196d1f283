import { describe, expect, it } from 'vitest';
import { csvCell, toCsv } from '../../web/src/csv.js';
import { guardSql } from '../../src/sql/guard.js';
import { useHarness } from '../support/harness.js';
import { sql, useWorld } from './hostile-fixture.js';

/**
 * Issue 20, smaller findings of public SQL: `SELECT -9007199254740993` answered `-9007199254740992`
 * (docs/sql.md promises no lost digits), and the console's CSV download let a cell starting with
 * = + - @ run as a formula in a spreadsheet.
 */

const h = useHarness();
const w = useWorld(h);

describe('negative 64-bit integers beyond 2^53', () => {
  it('answer their exact digits', async () => {
    for (const [q, want] of [
      ['SELECT -9007199254740993 AS n', '-9007199254740993'],
      ['SELECT -9223372036854775808 AS n', '-9223372036854775808'],
      ['SELECT 1-9007199254740993 AS n', '-9007199254740992'],
      ['SELECT 9007199254740993 AS n', '9007199254740993'],
    ] as const) {
      const res = await sql(h(), w().a.key.key, q);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rows, q).toEqual([[want]]);
    }
    const small = await sql(h(), w().a.key.key, 'SELECT -42 AS n, 1e-5 AS f');
    expect(small.json().rows).toEqual([[-42, 0.00001]]);
  });

  it('are rewritten only outside strings, and the rewrite reads back to itself', () => {
    expect(guardSql("SELECT '-9007199254740993' AS s", 'default').sql).toContain("'-9007199254740993'");
    expect(guardSql('SELECT -9007199254740993 AS n', 'default').sql).toContain('-(9007199254740993)');
  });
});

describe('CSV download', () => {
  it('neutralises cells a spreadsheet would read as a formula, and leaves numbers alone', () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    for (const cell of ['+1+2', '-2+3', '@SUM(A1)', '\tx', '\r=1'])
      expect(csvCell(cell).replace(/^"/, '').startsWith("'"), cell).toBe(true);
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('-9007199254740993')).toBe('-9007199254740993');
    expect(csvCell('+1.5e3')).toBe('+1.5e3');
    expect(csvCell('plain, text')).toBe('"plain, text"');
    expect(toCsv({ columns: [{ name: '=name' }], rows: [['@x'], [null]] })).toBe("'=name\r\n'@x\r\n\r\n");
  });
});
