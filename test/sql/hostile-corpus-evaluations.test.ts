import { describe, expect, it } from 'vitest';
import { CONTRACT_TABLES } from '../../src/sql/contract.js';
import { useHarness } from '../support/harness.js';
import { corpus, integrity, MA, MB, useWorld, type Answer } from './hostile-fixture.js';

/**
 * Hostile public SQL against `evaluation_results` (issue 12), the contract table added after parts 1
 * and 2: the same attack classes (physical spellings, hidden columns, membership and error oracles,
 * settings, shadowing), aimed at it. Verdicts: hostile-fixture.ts.
 */

const h = useHarness();
const w = useWorld(h);

const names = CONTRACT_TABLES.get('evaluation_results')!.columns.map((c) => c.name);
const col = (b: Answer, name: string) => b.rows.map((r) => r[b.columns.findIndex((c) => c.name === name)]);
const onlyA = (name: string) => (b: Answer) => {
  for (const v of col(b, name)) expect(String(v).startsWith(MA), `${name} ${String(v)} is not A's`).toBe(true);
};
const counted = (n: (x: ReturnType<typeof w>) => number) => (b: Answer, x: ReturnType<typeof w>) =>
  expect(Number(b.rows[0]![0])).toBe(n(x));

describe('evaluation_results: positive controls', () => {
  corpus(h, w, [
    { q: 'SELECT count() FROM evaluation_results', ok: true, check: counted((x) => x.aResults) },
    {
      q: 'SELECT * FROM evaluation_results',
      ok: true,
      check: (b, x) => {
        expect(b.columns.map((c) => c.name)).toEqual(names);
        expect(b.row_count).toBe(x.aResults);
        for (const c of [
          'test_case_id',
          'evaluation_run_id',
          'evaluation_id',
          'dataset_version_id',
          'trace_id',
          'output',
        ])
          onlyA(c)(b);
      },
    },
    {
      q: `SELECT test_case_id FROM evaluation_results WHERE test_case_id = '${MB}-case1'`,
      ok: true,
      check: (b) => expect(b.rows).toEqual([]),
    },
    {
      q: "SELECT count() FROM evaluation_results WHERE evaluation_run_id LIKE 'Bmk%' OR has(mapKeys(scores), 'Bmk')",
      ok: true,
      check: counted(() => 0),
    },
    {
      q: 'SELECT r.test_case_id, t.name FROM evaluation_results AS r JOIN traces AS t ON t.trace_id = r.trace_id',
      ok: true,
      check: (b, x) => {
        expect(b.row_count).toBe(x.aResults);
        onlyA('test_case_id')(b);
      },
    },
    {
      q: 'SELECT count() FROM traces CROSS JOIN evaluation_results',
      ok: true,
      check: counted((x) => x.aTraces * x.aResults),
    },
    { q: 'SELECT k FROM evaluation_results ARRAY JOIN mapKeys(scores) AS k', ok: true, check: onlyA('k') },
    {
      q: 'WITH r AS (SELECT * FROM evaluation_results) SELECT count() FROM r WHERE 1 = 1 OR 1 = 1',
      ok: true,
      check: counted((x) => x.aResults),
    },
    { q: 'SELECT count() FROM spans WHERE trace_id IN (SELECT trace_id FROM evaluation_results)', ok: true },
  ]);
});

describe('evaluation_results: physical table, hidden columns, settings and shadowing', () => {
  corpus(h, w, [
    { q: 'SELECT * FROM default.evaluation_results' },
    { q: 'SELECT * FROM "default"."evaluation_results"' },
    { q: 'SELECT project_id FROM evaluation_results' },
    { q: 'SELECT revision FROM evaluation_results' },
    { q: 'SELECT p_test_case_id FROM evaluation_results' },
    { q: 'SELECT _part, _table FROM evaluation_results' },
    { q: 'SELECT trace_id FROM traces WHERE trace_id IN (SELECT trace_id FROM default.evaluation_results)' },
    { q: 'SELECT (SELECT count() FROM default.evaluation_results) AS n' },
    { q: 'SELECT test_case_id FROM evaluation_results UNION ALL SELECT test_case_id FROM default.evaluation_results' },
    { q: "SELECT * FROM evaluation_results SETTINGS additional_table_filters = {'evaluation_results': '1'}" },
    { q: "SELECT * FROM merge('default', '^evaluation')" },
    { q: 'WITH evaluation_results AS (SELECT * FROM system.tables) SELECT * FROM evaluation_results' },
    { q: `SELECT in('${MB}-case1', evaluation_results) AS v` },
    { q: `SELECT '${MB}-case1' IN (evaluation_results) AS v` },
    { q: 'SELECT count() FROM spans WHERE in(trace_id, evaluation_results)' },
    { q: 'ALTER TABLE evaluation_results DELETE WHERE 1 = 1' },
    { q: "INSERT INTO evaluation_results (test_case_id) VALUES ('x')" },
    { q: 'OPTIMIZE TABLE evaluation_results FINAL' },
  ]);
});

describe('evaluation_results: error oracles', () => {
  // Evaluated on A's rows alone each query answers 200; a 400 would prove B's rows were evaluated.
  corpus(h, w, [
    {
      q: "SELECT count() FROM evaluation_results WHERE intDiv(1, if(test_case_id LIKE 'Bmk%', 0, 1)) = 1",
      oracle: (x) => x.aResults,
    },
    {
      q: `SELECT count() FROM evaluation_results WHERE intDiv(1, toInt64(mapContains(scores, '${MB}-acc') = 0)) = 1`,
      oracle: (x) => x.aResults,
    },
    {
      q: "SELECT count() FROM evaluation_results AS r JOIN traces AS t ON r.trace_id = t.trace_id WHERE intDiv(1, if(r.evaluation_run_id LIKE 'Bmk%', 0, 1)) = 1",
      oracle: (x) => x.aResults,
    },
    {
      q: "SELECT count() FROM (SELECT * FROM evaluation_results) AS r WHERE toDate(if(r.output LIKE 'Bmk%', 'x', '2020-01-01')) > toDate('2000-01-01')",
      oracle: (x) => x.aResults,
    },
  ]);
});

describe('after the evaluation_results corpus', () => {
  it('left both projects, the tables and the file system untouched', async () => {
    await integrity(h(), w());
  });
});
