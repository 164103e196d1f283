import { beforeAll, describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { datasetWithVersion, type Version } from '../support/datasets.js';
import { createRun, writeResults, type RunSummary } from '../support/evaluations.js';

/** Comparing two runs of one version, on planted regressions and improvements. */

const h = useHarness();
let key: string;
let version: Version;
let base: RunSummary;
let cand: RunSummary;
const id = (i: number) => version.items[i]!.test_case_id;

const acc = (value: number, passed?: boolean) => ({ name: 'acc', value, ...(passed === undefined ? {} : { passed }) });
const cost = (value: number) => ({ name: 'cost', value, direction: 'lower_is_better' });
const tone = (value: number) => ({ name: 'tone', value, direction: 'neutral' });

beforeAll(async () => {
  key = (await projectWithKey(h())).key.key;
  version = (await datasetWithVersion(h(), key, 6)).version;
  base = await createRun(h(), key, version.dataset_version_id, { candidate_version: 'old' });
  cand = await createRun(h(), key, version.dataset_version_id, { candidate_version: 'new' });
  await writeResults(h(), key, base.evaluation_run_id, [
    { test_case_id: id(0), scores: [acc(1, true), tone(0)] },
    { test_case_id: id(1), scores: [acc(0, false)] },
    { test_case_id: id(2), scores: [acc(0.5)] },
    { test_case_id: id(3), scores: [cost(1)] },
    { test_case_id: id(4), scores: [acc(0.2), cost(3)], metrics: [{ name: 'latency', value: 100 }] },
    { test_case_id: id(5), scores: [acc(1)] },
  ]);
  await writeResults(h(), key, cand.evaluation_run_id, [
    { test_case_id: id(0), scores: [acc(0, false), tone(1)] }, // passed → failed, acc −1; tone has no direction
    { test_case_id: id(1), scores: [acc(1, true)] }, // failed → passed
    { test_case_id: id(2), scores: [acc(0.45)] }, // −0.05
    { test_case_id: id(3), scores: [cost(2)] }, // lower is better: +1 is worse
    { test_case_id: id(4), scores: [acc(0.9), cost(1)], metrics: [{ name: 'latency', value: 80 }] }, // both better
  ]);
});

const compare = (query: Record<string, string>, run = base.evaluation_run_id, token = key) =>
  call(h().api, { method: 'GET', url: `${PUBLIC}/evaluation-runs/${run}/compare`, token, query });

describe('comparing two runs', () => {
  it('answers both means and the delta per score and metric, and the cases that moved', async () => {
    const res = await compare({ other: cand.evaluation_run_id });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.run).toMatchObject({
      evaluation_run_id: base.evaluation_run_id,
      run_number: 1,
      candidate_version: 'old',
    });
    expect(body.other).toMatchObject({
      evaluation_run_id: cand.evaluation_run_id,
      run_number: 2,
      candidate_version: 'new',
    });
    expect(body.threshold).toBe(0);
    // acc: (1 + 0 + 0.5 + 0.2 + 1) / 5 = 0.54 → (0 + 1 + 0.45 + 0.9) / 4 = 0.5875; cost: 2 → 1.5; tone 0 → 1.
    expect(body.scores).toEqual([
      {
        name: 'acc',
        direction: 'higher_is_better',
        run_value: 0.54,
        other_value: 0.5875,
        delta: expect.closeTo(0.0475, 12),
        run_observed_count: 5,
        other_observed_count: 4,
      },
      {
        name: 'cost',
        direction: 'lower_is_better',
        run_value: 2,
        other_value: 1.5,
        delta: -0.5,
        run_observed_count: 2,
        other_observed_count: 2,
      },
      {
        name: 'tone',
        direction: 'neutral',
        run_value: 0,
        other_value: 1,
        delta: 1,
        run_observed_count: 1,
        other_observed_count: 1,
      },
    ]);
    expect(body.metrics).toEqual([
      {
        name: 'latency',
        direction: 'higher_is_better',
        run_value: 100,
        other_value: 80,
        delta: -20,
        run_observed_count: 1,
        other_observed_count: 1,
      },
    ]);
    expect(body.regressions).toEqual([
      {
        test_case_id: id(0),
        run_passed: true,
        other_passed: false,
        scores: [{ name: 'acc', run_value: 1, other_value: 0, delta: -1 }],
      },
      {
        test_case_id: id(2),
        run_passed: null,
        other_passed: null,
        scores: [{ name: 'acc', run_value: 0.5, other_value: 0.45, delta: -0.05 }],
      },
      {
        test_case_id: id(3),
        run_passed: null,
        other_passed: null,
        scores: [{ name: 'cost', run_value: 1, other_value: 2, delta: 1 }],
      },
    ]);
    expect(body.improvements).toEqual([
      {
        test_case_id: id(1),
        run_passed: false,
        other_passed: true,
        scores: [{ name: 'acc', run_value: 0, other_value: 1, delta: 1 }],
      },
      {
        test_case_id: id(4),
        run_passed: null,
        other_passed: null,
        scores: [
          { name: 'acc', run_value: 0.2, other_value: 0.9, delta: 0.7 },
          { name: 'cost', run_value: 3, other_value: 1, delta: -2 },
        ],
      },
    ]);
    expect(body.next_cursor).toBeNull();
  });

  it('lists only score moves larger than the threshold', async () => {
    const body = (await compare({ other: cand.evaluation_run_id, threshold: '0.1' })).json();
    expect(body.regressions.map((c: { test_case_id: string }) => c.test_case_id)).toEqual([id(0), id(3)]);
    expect(body.improvements.map((c: { test_case_id: string }) => c.test_case_id)).toEqual([id(1), id(4)]);
    // Exactly 0.05 is not more than 0.05; a flip of passed counts whatever the threshold.
    const exact = (await compare({ other: cand.evaluation_run_id, threshold: '0.05' })).json();
    expect(exact.regressions.map((c: { test_case_id: string }) => c.test_case_id)).toEqual([id(0), id(3)]);
    const huge = (await compare({ other: cand.evaluation_run_id, threshold: '100' })).json();
    expect(huge.regressions).toEqual([{ test_case_id: id(0), run_passed: true, other_passed: false, scores: [] }]);
    expect(huge.improvements).toEqual([{ test_case_id: id(1), run_passed: false, other_passed: true, scores: [] }]);
  });

  it('pages the changed cases with a cursor bound to the two runs and the threshold', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const pages: {
      regressions: { test_case_id: string }[];
      improvements: { test_case_id: string }[];
      next_cursor: string | null;
    }[] = [];
    do {
      const res = await compare({ other: cand.evaluation_run_id, limit: '2', ...(cursor ? { cursor } : {}) });
      expect(res.statusCode, res.body).toBe(200);
      const page = res.json();
      pages.push(page);
      cursor = page.next_cursor;
    } while (cursor);
    for (const p of pages) seen.push(...new Set([...p.regressions, ...p.improvements].map((c) => c.test_case_id)));
    expect(pages).toHaveLength(3);
    expect(seen.sort()).toEqual([id(0), id(1), id(2), id(3), id(4)].sort());
    expect(pages[0]!.regressions.map((c) => c.test_case_id)).toEqual([id(0)]);
    expect(pages[0]!.improvements.map((c) => c.test_case_id)).toEqual([id(1)]);
    const first = (await compare({ other: cand.evaluation_run_id, limit: '2' })).json();
    expectValidationAt(
      await compare({ other: cand.evaluation_run_id, limit: '2', threshold: '0.1', cursor: first.next_cursor }),
      ['query', 'cursor'],
    );
    expectValidationAt(
      await compare({ other: base.evaluation_run_id, limit: '2', cursor: first.next_cursor }, cand.evaluation_run_id),
      ['query', 'cursor'],
    );
    expectValidationAt(await compare({ other: cand.evaluation_run_id, cursor: `${first.next_cursor}x` }), [
      'query',
      'cursor',
    ]);
  });

  it('refuses runs of different versions, unknown runs and bad parameters', async () => {
    const otherVersion = (await datasetWithVersion(h(), key, 1)).version;
    const elsewhere = await createRun(h(), key, otherVersion.dataset_version_id);
    expectDetail(
      await compare({ other: elsewhere.evaluation_run_id }),
      400,
      'the two runs are of different dataset versions; compare runs of the same dataset version',
    );
    expectDetail(await compare({ other: UNKNOWN_ID }), 404, 'evaluation run not found');
    expectValidationAt(await compare({}), ['query', 'other']);
    expectValidationAt(await compare({ other: cand.evaluation_run_id, threshold: '-1' }), ['query', 'threshold']);
    expectValidationAt(await compare({ other: cand.evaluation_run_id, limit: '0' }), ['query', 'limit']);
    expectValidationAt(await compare({ other: cand.evaluation_run_id, limit: '1001' }), ['query', 'limit']);
    const stranger = await projectWithKey(h());
    expectDetail(
      await compare({ other: cand.evaluation_run_id }, base.evaluation_run_id, stranger.key.key),
      404,
      'evaluation run not found',
    );
  });

  it('compares a run with itself as no change', async () => {
    const body = (await compare({ other: base.evaluation_run_id })).json();
    expect(body.regressions).toEqual([]);
    expect(body.improvements).toEqual([]);
    expect(body.scores.every((s: { delta: number }) => s.delta === 0)).toBe(true);
  });
});
