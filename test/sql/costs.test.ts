import { describe, expect, it } from 'vitest';
import { ALLOWED_FUNCTIONS } from '../../src/sql/functions.js';
import { guardSql } from '../../src/sql/guard.js';
import { SqlRefused } from '../../src/sql/lexer.js';

/** The guard's per-row cost rules (src/sql/costs.ts): refusals name the rule; bounded forms pass. */

const refusal = (q: string): string => {
  try {
    guardSql(q, 'default');
  } catch (error) {
    if (error instanceof SqlRefused) return error.detail;
    throw error;
  }
  return 'accepted';
};

describe('per-row cost rules', () => {
  it('refuse string distances, whose cost is the product of their inputs', () => {
    for (const f of [
      'editDistance',
      'levenshteinDistance',
      'damerauLevenshteinDistance',
      'jaroWinklerSimilarity',
      'jaroSimilarity',
      'stringJaccardIndex',
      'editDistanceUTF8',
    ]) {
      expect(refusal(`SELECT ${f}(name, 'x') AS d FROM spans`), f).toMatch(
        new RegExp(`^function ${f} is not allowed: its cost grows with the product`),
      );
    }
    expect(refusal("SELECT ngramDistance(name, 'agent') AS d FROM spans")).toBe('accepted');
  });

  it('need string literal needles and patterns', () => {
    for (const q of [
      'SELECT position(input, output) AS p FROM spans',
      "SELECT countSubstrings(input, concat(name, 'x')) AS p FROM spans",
      "SELECT replaceAll(input, name, '') AS p FROM spans",
      'SELECT multiSearchAny(input, array(name)) AS p FROM spans',
      'SELECT count() FROM spans WHERE input LIKE output',
      "SELECT count() FROM spans WHERE input NOT ILIKE concat('%', name, '%')",
      "SELECT count() FROM spans WHERE ilike(input, concat('%', name))",
    ])
      expect(refusal(q), q).toMatch(/must be (a string literal|array\('…', '…'\) of string literals)/);
    expect(refusal('SELECT locate(input, output) AS p FROM spans')).toMatch(/^function locate is not allowed/);
    for (const q of [
      "SELECT position(input, 'refund') AS p FROM spans",
      "SELECT countSubstrings(input, 'a') AS p, replaceAll(name, '-', '_') AS n FROM spans",
      "SELECT multiSearchAny(input, array('a', 'b')) AS p FROM spans",
      "SELECT count() FROM spans WHERE name LIKE 'agent%' OR name ILIKE '%llm%' OR name NOT LIKE ('x%')",
      "SELECT match(input, concat('^', name)) AS m FROM spans",
    ])
      expect(refusal(q), q).toBe('accepted');
  });

  it('need literal needles for every allowlisted substring search, its UTF8 and case-insensitive forms too', () => {
    const searches = [...ALLOWED_FUNCTIONS].filter((f) => /^(position|countsubstrings|multisearch)/.test(f));
    // The text-search forms docs/sql.md names are among them.
    expect(searches).toEqual(
      expect.arrayContaining([
        'positioncaseinsensitiveutf8',
        'multisearchanycaseinsensitiveutf8',
        'multisearchanyutf8',
      ]),
    );
    for (const f of searches) {
      const multi = f.startsWith('multisearch');
      expect(refusal(`SELECT ${f}(input, ${multi ? 'array(output)' : 'output'}) AS p FROM spans`), f).toMatch(
        /must be (a string literal|array\('…', '…'\) of string literals)/,
      );
      if (multi)
        expect(refusal(`SELECT ${f}(input, splitByChar(' ', output)) AS p FROM spans`), f).toMatch(
          /must be array\('…', '…'\) of string literals/,
        );
      expect(refusal(`SELECT ${f}(input, ${multi ? "array('заказ', '天气')" : "'заказ'"}) AS p FROM spans`), f).toBe(
        'accepted',
      );
    }
  });

  it('cap amplifiers by a number literal', () => {
    for (const q of [
      "SELECT repeat('x', 1000001) AS s",
      "SELECT repeat('x', toUInt64(cost)) AS s FROM spans",
      "SELECT leftPad('', 2000000000, 'x') AS s",
      'SELECT arrayResize(array(1), span_count) AS a FROM traces',
      'SELECT arrayShingles(model_names, 5000) AS a FROM traces',
      "SELECT rightPad(name, 1.5, ' ') AS s FROM spans",
    ])
      expect(refusal(q), q).toMatch(/^the size argument of \w+ must be a whole number literal of at most/);
    for (const q of [
      "SELECT repeat('x', 1000000) AS s",
      "SELECT leftPad(toString(span_count), 10, '0') AS s FROM traces",
      'SELECT arrayResize(model_names, 3) AS a FROM traces',
    ]) {
      expect(refusal(q), q).toBe('accepted');
    }
  });
});
