import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { OTHER_TENANT_BOUND_MS, timed } from '../support/other-tenant.js';
import { createDataset, createVersion, simpleCases } from '../support/datasets.js';
import { createRun, postResults, summary } from '../support/evaluations.js';
import { RESULT_CHUNK_BYTES } from '../../src/evaluations/result-writer.js';

/**
 * Issue 20, finding 1 for evaluation results: a results request of many MiB was one statement in one
 * transaction, holding the embedded store meanwhile. It is now written in chunks of RESULT_CHUNK_BYTES,
 * one transaction each: the counts stay exact, and another tenant is answered while it runs.
 */
const h = useHarness();

describe('results are written in chunks', () => {
  it('a request of several chunks: every result counted once, another tenant answered meanwhile, a resend converges', async () => {
    const owner = await projectWithKey(h(), 'results');
    const other = await projectWithKey(h(), 'bystander');
    const dataset = await createDataset(h(), owner.key.key);
    const version = await createVersion(h(), owner.key.key, dataset.id, simpleCases(40));
    const run = await createRun(h(), owner.key.key, version.dataset_version_id);
    // 40 results of ~200 KB: about 8 chunks.
    const results = version.items.map((c, i) => ({
      test_case_id: c.test_case_id,
      output: { text: 'y'.repeat(200_000) },
      scores: [{ name: 'accuracy', value: i % 2, direction: 'higher_is_better' }],
    }));
    expect(JSON.stringify(results).length).toBeGreaterThan(4 * RESULT_CHUNK_BYTES);

    const big = postResults(h(), owner.key.key, run.evaluation_run_id, results);
    const meanwhile = await Promise.all([
      timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: other.key.key })),
      timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: other.owner.token })),
    ]);
    const res = await big;
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.json()).toEqual({ accepted: 40, rejected: [] });
    for (const answer of meanwhile) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
    }
    const first = await summary(h(), owner.key.key, run.evaluation_run_id);
    expect(first).toMatchObject({ result_count: 40, scored_count: 40 });
    expect(first.scores).toEqual([expect.objectContaining({ name: 'accuracy', observed_count: 40, value: 0.5 })]);

    // Sending the same request again replaces every result: the counts don't move.
    const again = await postResults(h(), owner.key.key, run.evaluation_run_id, results);
    expect(again.json()).toEqual({ accepted: 40, rejected: [] });
    const second = await summary(h(), owner.key.key, run.evaluation_run_id);
    expect(second).toMatchObject({ result_count: 40, scored_count: 40 });
    expect(second.scores).toEqual(first.scores);
  });
});
