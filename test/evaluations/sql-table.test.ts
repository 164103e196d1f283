import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { ingestSpans } from '../support/ingest.js';
import { datasetWithVersion } from '../support/datasets.js';
import { createRun, writeResults } from '../support/evaluations.js';

/** Public SQL's `evaluation_results`: the latest result of each test case, joinable with traces. */

const h = useHarness();
const sql = (token: string, query: string) =>
  call(h().api, { method: 'POST', url: `${PUBLIC}/sql`, token, payload: { query } });

describe('evaluation_results in public SQL', () => {
  it('holds each test case latest result, and joins with the traces of the run', async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    const { version } = await datasetWithVersion(h(), a.key.key, 3);
    const run = await createRun(h(), a.key.key, version.dataset_version_id);
    const runId = run.evaluation_run_id;
    const [c0, c1, c2] = version.items.map((c) => c.test_case_id);
    const t = Date.now() - 60_000;
    await ingestSpans(h(), a.key.key, [
      {
        trace_id: 'eval-t0',
        span_id: 'r',
        name: 'task',
        start_time: new Date(t).toISOString(),
        evaluation_run_id: runId,
        cost: 0.5,
      },
      {
        trace_id: 'eval-t1',
        span_id: 'r',
        name: 'task',
        start_time: new Date(t + 1).toISOString(),
        evaluation_run_id: runId,
        cost: 0.25,
      },
    ]);
    await writeResults(h(), a.key.key, runId, [
      {
        test_case_id: c0,
        trace_id: 'eval-t0',
        output: { answer: 9007199254740993n.toString() },
        scores: [{ name: 'acc', value: 0.25, passed: false }],
      },
      {
        test_case_id: c1,
        trace_id: 'eval-t1',
        output: 'x',
        scores: [
          { name: 'acc', value: true, passed: true },
          { name: 'judge', error: 'down' },
        ],
        metrics: [{ name: 'ms', value: 12 }],
      },
      { test_case_id: c2, error: 'timeout' },
    ]);
    // c0 replaced twice: only the last one shows.
    await writeResults(h(), a.key.key, runId, [
      { test_case_id: c0, trace_id: 'eval-t0', scores: [{ name: 'acc', value: 0.5 }] },
    ]);
    await writeResults(h(), a.key.key, runId, [
      { test_case_id: c0, trace_id: 'eval-t0', scores: [{ name: 'acc', value: 0.75, passed: true }] },
    ]);

    const res = await sql(
      a.key.key,
      `SELECT test_case_id, trace_id, scores['acc'] AS acc, metrics, passed, error, output FROM evaluation_results WHERE evaluation_run_id = '${runId}' ORDER BY acc`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json().rows as unknown[][];
    const byCase = new Map(rows.map((r) => [r[0], r.slice(1)]));
    expect(rows).toHaveLength(3);
    expect(byCase.get(c0)).toEqual(['eval-t0', 0.75, {}, 1, null, null]);
    expect(byCase.get(c1)).toEqual(['eval-t1', 1, { ms: 12 }, 1, null, '"x"']);
    expect(byCase.get(c2)).toEqual([null, 0, {}, null, 'timeout', null]);

    const joined = await sql(
      a.key.key,
      `SELECT r.test_case_id, t.total_cost FROM evaluation_results AS r JOIN traces AS t ON t.trace_id = r.trace_id ORDER BY t.total_cost`,
    );
    expect(joined.json().rows).toEqual([
      [c1, 0.25],
      [c0, 0.5],
    ]);
    const bySpans = await sql(
      a.key.key,
      `SELECT count() FROM evaluation_results AS r JOIN spans AS s ON s.evaluation_run_id = r.evaluation_run_id AND s.trace_id = r.trace_id`,
    );
    expect(bySpans.json().rows).toEqual([[2]]);
    const mean = await sql(
      a.key.key,
      `SELECT avg(scores['acc']) FROM evaluation_results WHERE mapContains(scores, 'acc')`,
    );
    expect(mean.json().rows[0][0]).toBeCloseTo((0.75 + 1) / 2, 12);

    // Output keeps the caller's JSON text (numbers with every digit).
    const raw = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/evaluation-runs/${runId}/results`,
      token: a.key.key,
      headers: { 'content-type': 'application/json' },
      payload: `{"results": [{"test_case_id": "${c2}", "output": {"n": 9007199254740993, "x": 0.30000000000000004}}]}`,
    });
    expect(raw.json()).toEqual({ accepted: 1, rejected: [] });
    const output = await sql(a.key.key, `SELECT output FROM evaluation_results WHERE test_case_id = '${c2}'`);
    expect(output.json().rows[0][0]).toBe('{"n": 9007199254740993, "x": 0.30000000000000004}');
    const stored = await h().ctx.pg.pool.query<{ output: string }>(
      'SELECT output::text AS output FROM evaluation_results WHERE test_case_id = $1',
      [c2],
    );
    expect(stored.rows[0]!.output).toBe('{"n": 9007199254740993, "x": 0.30000000000000004}');

    // Another project sees none of it.
    expect((await sql(b.key.key, 'SELECT count() FROM evaluation_results')).json().rows).toEqual([[0]]);
    const schema = await call(h().api, { method: 'GET', url: `${PUBLIC}/sql/schema`, token: a.key.key });
    expect(schema.json().tables.map((x: { name: string }) => x.name)).toContain('evaluation_results');
  });
});
