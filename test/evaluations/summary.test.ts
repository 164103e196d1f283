import { beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt } from '../support/expect.js';
import { datasetWithVersion, type Version } from '../support/datasets.js';
import { complete, createRun, postResults, summary, writeResults, type RunSummary } from '../support/evaluations.js';

/**
 * Every count and mean of the run summary against values computed by hand (src/evaluations/
 * result-input.ts says how each count is derived), through replacements, errors and completion.
 */

const h = useHarness();
let key: string;
let version: Version;
let other: Version;
const id = (i: number) => version.items[i]!.test_case_id;

beforeAll(async () => {
  key = (await projectWithKey(h())).key.key;
  version = (await datasetWithVersion(h(), key, 6)).version;
  other = (await datasetWithVersion(h(), key, 1)).version;
});

const counts = (s: RunSummary) => ({
  result_count: s.result_count,
  scored_count: s.scored_count,
  not_scored_count: s.not_scored_count,
  passed_count: s.passed_count,
  failed_count: s.failed_count,
  errored_count: s.errored_count,
  scorer_error_count: s.scorer_error_count,
  task_error_count: s.task_error_count,
});

describe('run summary', () => {
  it('counts and averages results, replacements and errors exactly', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    expect(counts(run)).toEqual({
      result_count: 0,
      scored_count: 0,
      not_scored_count: 0,
      passed_count: 0,
      failed_count: 0,
      errored_count: 0,
      scorer_error_count: 0,
      task_error_count: 0,
    });
    expect(run.scores).toEqual([]);
    expect(run.metrics).toEqual([]);

    await writeResults(h(), key, run.evaluation_run_id, [
      {
        test_case_id: id(0),
        output: 'Paris',
        scores: [
          { name: 'acc', value: 1, passed: true },
          { name: 'rel', value: 0.5 },
        ],
        metrics: [{ name: 'latency_ms', value: 100, unit: 'ms', direction: 'lower_is_better' }],
      },
      {
        test_case_id: id(1),
        output: { text: 'Lyon' },
        scores: [
          { name: 'acc', value: 0, passed: false },
          { name: 'rel', value: 0.25 },
        ],
        metrics: [{ name: 'latency_ms', value: 300 }],
      },
      { test_case_id: id(2), error: 'timeout', metrics: [{ name: 'latency_ms', value: 50 }] },
      {
        test_case_id: id(3),
        scores: [
          { name: 'acc', error: 'judge crashed', passed: false },
          { name: 'rel', value: 1, passed: true },
        ],
      },
      { test_case_id: id(4), scores: [{ name: 'acc', value: 0.5 }] },
    ]);
    // By hand: 5 results; scored 0, 1, 3, 4 (2 has none; 3 has rel); passed 0 and 3 (3's acc errored,
    // so its verdict is ignored); failed 1; errored 2 (task) and 3 (scorer).
    // acc: 1 + 0 + 0.5 over 3 observed (3 errored) = 0.5; rel: (0.5 + 0.25 + 1) / 3; latency: 450 / 3.
    let s = await summary(h(), key, run.evaluation_run_id);
    expect(counts(s)).toEqual({
      result_count: 5,
      scored_count: 4,
      not_scored_count: 1,
      passed_count: 2,
      failed_count: 1,
      errored_count: 2,
      scorer_error_count: 1,
      task_error_count: 1,
    });
    expect(s.scores).toEqual([
      { name: 'acc', direction: 'higher_is_better', value_type: 'numeric', observed_count: 3, value: 0.5 },
      {
        name: 'rel',
        direction: 'higher_is_better',
        value_type: 'numeric',
        observed_count: 3,
        value: expect.closeTo(1.75 / 3, 12),
      },
    ]);
    expect(s.metrics).toEqual([
      {
        name: 'latency_ms',
        direction: 'lower_is_better',
        value_type: 'numeric',
        observed_count: 3,
        unit: 'ms',
        value: 150,
      },
    ]);

    // Replacements (1 and 2), a new result (5, a boolean score), and case 4 twice in one request: the later wins.
    const res = await postResults(h(), key, run.evaluation_run_id, [
      {
        test_case_id: id(1),
        scores: [
          { name: 'acc', value: 1, passed: true },
          { name: 'rel', value: 0.75 },
        ],
      },
      {
        test_case_id: id(2),
        scores: [{ name: 'acc', value: 0.25, passed: false }],
        metrics: [{ name: 'latency_ms', value: 70 }],
      },
      { test_case_id: other.items[0]!.test_case_id, scores: [{ name: 'acc', value: 1 }] },
      { test_case_id: id(4), scores: [{ name: 'acc', value: 0 }] },
      { test_case_id: 'not-a-case', scores: [] },
      { test_case_id: id(5), scores: [{ name: 'exact', value: true, passed: true }] },
      { test_case_id: id(4), scores: [{ name: 'acc', value: 0.75 }] },
      { test_case_id: id(0), scores: 'many' },
      { scores: [] },
      {
        test_case_id: id(0),
        scores: [
          { name: 'acc', value: 1 },
          { name: 'acc', value: 0 },
        ],
      },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().accepted).toBe(5);
    expect(res.json().rejected).toEqual([
      {
        index: 2,
        test_case_id: other.items[0]!.test_case_id,
        errors: [expect.stringMatching(/^test_case_id: not a test case of the run's dataset version/)],
      },
      { index: 4, test_case_id: 'not-a-case', errors: [expect.stringMatching(/^test_case_id: not a test case/)] },
      { index: 7, test_case_id: id(0), errors: [expect.stringMatching(/^scores: /)] },
      { index: 8, test_case_id: null, errors: ['test_case_id: Field required'] },
      { index: 9, test_case_id: id(0), errors: [expect.stringMatching(/^scores\.1\.name: .*'acc' repeats/)] },
    ]);
    // By hand: 6 results, all scored; passed 0, 1, 3, 5; failed 2; errored only 3 (scorer).
    // acc: 0:1, 1:1, 2:0.25, 4:0.75 = 3 / 4; rel: 0.5, 0.75, 1 = 0.75; exact: true = 1 (boolean);
    // latency: 0:100 and 2:70 (1 no longer has one) = 85.
    s = await summary(h(), key, run.evaluation_run_id);
    expect(counts(s)).toEqual({
      result_count: 6,
      scored_count: 6,
      not_scored_count: 0,
      passed_count: 4,
      failed_count: 1,
      errored_count: 1,
      scorer_error_count: 1,
      task_error_count: 0,
    });
    expect(s.scores).toEqual([
      { name: 'acc', direction: 'higher_is_better', value_type: 'numeric', observed_count: 4, value: 0.75 },
      { name: 'exact', direction: 'higher_is_better', value_type: 'boolean', observed_count: 1, value: 1 },
      { name: 'rel', direction: 'higher_is_better', value_type: 'numeric', observed_count: 3, value: 0.75 },
    ]);
    expect(s.metrics).toEqual([
      {
        name: 'latency_ms',
        direction: 'lower_is_better',
        value_type: 'numeric',
        observed_count: 2,
        unit: 'ms',
        value: 85,
      },
    ]);

    // Replacing 5 with a result without scores drops `exact` entirely; 5 is no longer scored nor passed.
    await writeResults(h(), key, run.evaluation_run_id, [{ test_case_id: id(5), output: null }]);
    s = await summary(h(), key, run.evaluation_run_id);
    expect(counts(s)).toEqual({
      result_count: 6,
      scored_count: 5,
      not_scored_count: 1,
      passed_count: 3,
      failed_count: 1,
      errored_count: 1,
      scorer_error_count: 1,
      task_error_count: 0,
    });
    expect(s.scores.map((e) => e.name)).toEqual(['acc', 'rel']);

    // A score that is only ever errored is listed with nothing observed and no value.
    await writeResults(h(), key, run.evaluation_run_id, [
      { test_case_id: id(5), scores: [{ name: 'tone', error: 'no judge' }] },
    ]);
    s = await summary(h(), key, run.evaluation_run_id);
    expect(s.scores.find((e) => e.name === 'tone')).toEqual({
      name: 'tone',
      direction: 'higher_is_better',
      value_type: 'numeric',
      observed_count: 0,
    });
    expect(counts(s)).toMatchObject({ scored_count: 5, errored_count: 2, scorer_error_count: 2 });

    // Completion: a scorer errored, so completed_with_errors; results after it are refused.
    const done = await complete(h(), key, run.evaluation_run_id);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.json()).toMatchObject({
      status: 'completed_with_errors',
      completed_at: expect.any(String),
      result_count: 6,
    });
    expectDetail(
      await postResults(h(), key, run.evaluation_run_id, [{ test_case_id: id(0), scores: [] }]),
      409,
      'evaluation run is completed_with_errors; results can no longer be written',
    );
    expect(counts(await summary(h(), key, run.evaluation_run_id))).toEqual(counts(s));
  });

  it('keeps means exact over many decimal values (sums in numeric, one rounding)', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    const values = [0.1, 0.2, 0.3, 0.1, 0.2, 0.3];
    await writeResults(
      h(),
      key,
      run.evaluation_run_id,
      values.map((v, i) => ({
        test_case_id: id(i),
        scores: [{ name: 'x', value: v }],
        metrics: [{ name: 'big', value: 9007199254740993 * (i + 1) }],
      })),
    );
    // Replace every value many times over: the running sum must come back to exactly these.
    for (let round = 0; round < 5; round++) {
      await writeResults(
        h(),
        key,
        run.evaluation_run_id,
        values.map((v, i) => ({ test_case_id: id(i), scores: [{ name: 'x', value: v * 7 + round }] })),
      );
    }
    await writeResults(
      h(),
      key,
      run.evaluation_run_id,
      values.map((v, i) => ({ test_case_id: id(i), scores: [{ name: 'x', value: v }] })),
    );
    const s = await summary(h(), key, run.evaluation_run_id);
    expect(s.scores).toEqual([
      { name: 'x', direction: 'higher_is_better', value_type: 'numeric', observed_count: 6, value: 0.2 },
    ]);
    expect(s.metrics).toEqual([]);
  });

  it('stays exact under concurrent writes that replace the same results', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    // 8 requests at once, each writing every case with its own values, errors and verdicts.
    const batch = (k: number) =>
      version.items.map((c, i) => ({
        test_case_id: c.test_case_id,
        ...((i + k) % 4 === 0 ? { error: `e${k}` } : {}),
        scores: [
          { name: 'a', value: ((i * 3 + k) % 10) / 10, passed: (i + k) % 3 !== 0 },
          (i + k) % 5 === 0 ? { name: 'b', error: 'x' } : { name: 'b', value: k + i * 0.1 },
        ],
        metrics: k % 2 ? [{ name: 'm', value: k * 100 + i }] : [],
      }));
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, k) => postResults(h(), key, run.evaluation_run_id, batch(k))),
    );
    for (const res of answers) expect(res.statusCode, res.body).toBe(200);
    // Whatever order they landed in, the summary is what the stored results say.
    const { rows } = await h().ctx.pg.pool.query<{
      error: string | null;
      scores: { name: string; value?: number | null; passed?: boolean; error?: string }[];
      metrics: { name: string; value: number }[];
    }>('SELECT error, scores, metrics FROM evaluation_results WHERE run_id = $1', [run.evaluation_run_id]);
    const sound = (r: (typeof rows)[number]) => r.scores.filter((x) => x.error === undefined);
    const verdicts = (r: (typeof rows)[number]) =>
      sound(r)
        .filter((x) => x.passed !== undefined)
        .map((x) => x.passed);
    const mean = (xs: number[]) => xs.reduce((p, q) => p + q, 0) / xs.length;
    const values = (kind: 'scores' | 'metrics', name: string) =>
      rows.flatMap((r) =>
        (r[kind] as { name: string; value?: number | null; error?: string }[])
          .filter((x) => x.name === name && x.error === undefined && x.value != null)
          .map((x) => x.value!),
      );
    const s = await summary(h(), key, run.evaluation_run_id);
    expect(counts(s)).toEqual({
      result_count: 6,
      scored_count: rows.filter((r) => sound(r).some((x) => x.value != null)).length,
      not_scored_count: rows.filter((r) => !sound(r).some((x) => x.value != null)).length,
      passed_count: rows.filter((r) => verdicts(r).length > 0 && verdicts(r).every(Boolean)).length,
      failed_count: rows.filter((r) => verdicts(r).includes(false)).length,
      errored_count: rows.filter((r) => r.error !== null || sound(r).length < r.scores.length).length,
      scorer_error_count: rows.reduce((n, r) => n + r.scores.length - sound(r).length, 0),
      task_error_count: rows.filter((r) => r.error !== null).length,
    });
    for (const entry of s.scores) expect(entry.value, entry.name).toBeCloseTo(mean(values('scores', entry.name)), 10);
    expect(s.metrics.map((m) => m.name)).toEqual(values('metrics', 'm').length ? ['m'] : []);
    for (const entry of s.metrics) expect(entry.value).toBeCloseTo(mean(values('metrics', 'm')), 10);
  });

  it('answers counts as integers and the empty run as zeros', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    const s = await summary(h(), key, run.evaluation_run_id);
    for (const field of [
      'result_count',
      'scored_count',
      'not_scored_count',
      'passed_count',
      'failed_count',
      'errored_count',
      'scorer_error_count',
      'task_error_count',
    ]) {
      expect(Number.isInteger(s[field]), field).toBe(true);
      expect(s[field]).toBe(0);
    }
  });
});

describe('completion rules', () => {
  it('completed without errors; a repeat is answered again; another status is a 409', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    await writeResults(h(), key, run.evaluation_run_id, [
      { test_case_id: id(0), scores: [{ name: 'acc', value: 1, passed: true }] },
    ]);
    const done = await complete(h(), key, run.evaluation_run_id, {});
    expect(done.json().status).toBe('completed');
    const again = await complete(h(), key, run.evaluation_run_id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(done.json());
    expectDetail(
      await complete(h(), key, run.evaluation_run_id, { status: 'failed' }),
      409,
      'evaluation run is already completed; it cannot become failed',
    );
  });

  it('a task error makes completed_with_errors; an explicit status wins over it', async () => {
    const withError = await createRun(h(), key, version.dataset_version_id);
    await writeResults(h(), key, withError.evaluation_run_id, [{ test_case_id: id(0), error: 'boom' }]);
    expect((await complete(h(), key, withError.evaluation_run_id, { status: 'completed' })).json().status).toBe(
      'completed_with_errors',
    );
    for (const status of ['failed', 'cancelled', 'incomplete']) {
      const run = await createRun(h(), key, version.dataset_version_id);
      await writeResults(h(), key, run.evaluation_run_id, [{ test_case_id: id(0), error: 'boom' }]);
      const res = await complete(h(), key, run.evaluation_run_id, { status });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status, completed_at: expect.any(String) });
      expectDetail(
        await postResults(h(), key, run.evaluation_run_id, [{ test_case_id: id(1) }]),
        409,
        `evaluation run is ${status}; results can no longer be written`,
      );
    }
  });

  it('refuses statuses a caller may not set', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    for (const status of ['running', 'completed_with_errors', 'done', 5]) {
      expectValidationAt(await complete(h(), key, run.evaluation_run_id, { status }), ['body', 'status']);
    }
    expect((await summary(h(), key, run.evaluation_run_id)).status).toBe('running');
  });

  it('refuses more than 10,000 results per request with 413', async () => {
    const run = await createRun(h(), key, version.dataset_version_id);
    const res = await postResults(
      h(),
      key,
      run.evaluation_run_id,
      Array.from({ length: 10_001 }, () => ({ test_case_id: id(0) })),
    );
    expectDetail(res, 413, 'at most 10000 results per request; this request has 10001');
    expectValidationAt(await postResults(h(), key, run.evaluation_run_id, []), ['body', 'results']);
  });
});
