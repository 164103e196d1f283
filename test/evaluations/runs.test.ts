import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, publicGet, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { datasetWithVersion } from '../support/datasets.js';
import { complete, createRun, postResults, postRun, summary, writeResults } from '../support/evaluations.js';
import { API_KEY_ONLY_DETAIL } from '../../src/auth/principal.js';
import { PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';

const h = useHarness();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const get = publicGet(h);

describe('creating runs', () => {
  it('answers the run summary, status running, with its page in the web app', async () => {
    const { project, key } = await projectWithKey(h());
    const { dataset, version } = await datasetWithVersion(h(), key.key);
    const run = await createRun(h(), key.key, version.dataset_version_id, {
      evaluation_name: 'qa',
      candidate_version: 'abc123',
      environment: 'staging',
    });
    const path = `/projects/${project.id}/evaluations/${run.evaluation_id}/runs/${run.evaluation_run_id}`;
    expect(run).toEqual({
      evaluation_run_id: expect.any(String),
      evaluation_id: expect.any(String),
      evaluation_name: 'qa',
      dataset_id: dataset.id,
      dataset_version_id: version.dataset_version_id,
      candidate_version: 'abc123',
      environment: 'staging',
      run_number: 1,
      run_path: path,
      run_url: `http://web.test${path}`,
      started_at: expect.stringMatching(ISO),
      status: 'running',
      result_count: 0,
      scored_count: 0,
      not_scored_count: 0,
      passed_count: 0,
      failed_count: 0,
      errored_count: 0,
      scorer_error_count: 0,
      task_error_count: 0,
      scores: [],
      metrics: [],
    });
    expect(await summary(h(), key.key, run.evaluation_run_id)).toEqual(run);
  });

  it('finds the evaluation by key, else by name, else creates it; run_number counts per evaluation', async () => {
    const { key } = await projectWithKey(h());
    const { version } = await datasetWithVersion(h(), key.key);
    const v = version.dataset_version_id;
    const a1 = await createRun(h(), key.key, v, { evaluation_name: 'A', evaluation_key: 'k-a' });
    expect(a1).toMatchObject({ evaluation_name: 'A', evaluation_key: 'k-a', run_number: 1 });
    // Same key, another name: the keyed evaluation (its name stays).
    const a2 = await createRun(h(), key.key, v, { evaluation_name: 'renamed', evaluation_key: 'k-a' });
    expect(a2).toMatchObject({ evaluation_id: a1.evaluation_id, evaluation_name: 'A', run_number: 2 });
    // No key: by name.
    const a3 = await createRun(h(), key.key, v, { evaluation_name: 'A' });
    expect(a3).toMatchObject({ evaluation_id: a1.evaluation_id, run_number: 3 });
    // Another key with a name whose evaluation has a key of its own: a new evaluation.
    const b1 = await createRun(h(), key.key, v, { evaluation_name: 'A', evaluation_key: 'k-b' });
    expect(b1.evaluation_id).not.toBe(a1.evaluation_id);
    expect(b1).toMatchObject({ evaluation_key: 'k-b', run_number: 1 });
    // A keyless evaluation found by name adopts the key.
    const c1 = await createRun(h(), key.key, v, { evaluation_name: 'C' });
    expect(c1.evaluation_key).toBeUndefined();
    const c2 = await createRun(h(), key.key, v, { evaluation_name: 'C', evaluation_key: 'k-c' });
    expect(c2).toMatchObject({ evaluation_id: c1.evaluation_id, evaluation_key: 'k-c', run_number: 2 });
    const c3 = await createRun(h(), key.key, v, { evaluation_name: 'anything', evaluation_key: 'k-c' });
    expect(c3).toMatchObject({ evaluation_id: c1.evaluation_id, run_number: 3 });
  });

  it('numbers concurrent creates 1..N and makes one evaluation of a new name', async () => {
    const { key } = await projectWithKey(h());
    const { version } = await datasetWithVersion(h(), key.key);
    const made = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        postRun(h(), key.key, {
          evaluation_name: i % 2 ? 'race' : 'race-keyed',
          ...(i % 2 ? {} : { evaluation_key: 'race-key' }),
          dataset_version_id: version.dataset_version_id,
          candidate_version: `c${i}`,
          environment: 'ci',
        }),
      ),
    );
    for (const res of made) expect(res.statusCode, res.body).toBe(201);
    const runs = made.map((r) => r.json());
    for (const name of ['race', 'race-keyed']) {
      const mine = runs.filter((r) => r.evaluation_name === name);
      expect(new Set(mine.map((r) => r.evaluation_id)).size).toBe(1);
      expect(mine.map((r) => r.run_number).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    }
    const list = (await get(key.key, '/evaluations')).json();
    expect(list.data.map((e: { name: string; run_count: number }) => [e.name, e.run_count]).sort()).toEqual([
      ['race', 6],
      ['race-keyed', 6],
    ]);
  });

  it('validates the body and the dataset version', async () => {
    const { key } = await projectWithKey(h());
    const { version } = await datasetWithVersion(h(), key.key);
    const body = {
      evaluation_name: 'x',
      dataset_version_id: version.dataset_version_id,
      candidate_version: 'c',
      environment: 'e',
    };
    for (const field of ['evaluation_name', 'dataset_version_id', 'candidate_version', 'environment'] as const) {
      const { [field]: _, ...rest } = body;
      expectValidationAt(await postRun(h(), key.key, rest), ['body', field]);
    }
    expectValidationAt(await postRun(h(), key.key, { ...body, evaluation_name: ' ' }), ['body', 'evaluation_name']);
    expectValidationAt(await postRun(h(), key.key, { ...body, evaluation_key: 7 }), ['body', 'evaluation_key']);
    expectDetail(
      await postRun(h(), key.key, { ...body, dataset_version_id: UNKNOWN_ID }),
      404,
      'dataset version not found',
    );
    const other = await projectWithKey(h());
    expectDetail(await postRun(h(), other.key.key, body), 404, 'dataset version not found');
    expect((await get(other.key.key, '/evaluations')).json().data).toEqual([]);
  });
});

describe('evaluations', () => {
  it('lists evaluations and reads one with its runs, newest first', async () => {
    const { key } = await projectWithKey(h());
    const { version } = await datasetWithVersion(h(), key.key);
    const r1 = await createRun(h(), key.key, version.dataset_version_id, { evaluation_name: 'E', evaluation_key: 'e' });
    const r2 = await createRun(h(), key.key, version.dataset_version_id, { evaluation_name: 'E', evaluation_key: 'e' });
    await writeResults(h(), key.key, r1.evaluation_run_id, [
      { test_case_id: version.items[0]!.test_case_id, scores: [{ name: 's', value: 0.5 }] },
    ]);
    await createRun(h(), key.key, version.dataset_version_id, { evaluation_name: 'F' });
    const list = (await get(key.key, '/evaluations')).json();
    expect(list.meta).toEqual({ page: 0, limit: 50, total: 2 });
    expect(list.data.map((e: { name: string }) => e.name)).toEqual(['F', 'E']);
    expect(list.data[1]).toEqual({
      id: r1.evaluation_id,
      evaluation_id: r1.evaluation_id,
      name: 'E',
      evaluation_key: 'e',
      run_count: 2,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const detail = (await get(key.key, `/evaluations/${r1.evaluation_id}`)).json();
    expect(detail.runs.map((r: { evaluation_run_id: string }) => r.evaluation_run_id)).toEqual([
      r2.evaluation_run_id,
      r1.evaluation_run_id,
    ]);
    expect(detail.runs[1]).toEqual(await summary(h(), key.key, r1.evaluation_run_id));
    expect(
      (await get(key.key, `/evaluations/${r1.evaluation_id}`, { limit: '1', page: '1' }))
        .json()
        .runs.map((r: { run_number: number }) => r.run_number),
    ).toEqual([1]);
    expectDetail(await get(key.key, `/evaluations/${UNKNOWN_ID}`), 404, 'evaluation not found');
    expectDetail(await get(key.key, `/evaluation-runs/${UNKNOWN_ID}`), 404, 'evaluation run not found');
    expectDetail(await get(key.key, '/evaluation-runs/bad'), 404, 'evaluation run not found');
  });
});

describe('credentials and isolation', () => {
  it('run writes take an API key only; reads take a user with project_id', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const { version } = await datasetWithVersion(h(), key.key);
    const run = await createRun(h(), key.key, version.dataset_version_id);
    const p = { project_id: project.id };
    expectDetail(
      await postRun(h(), owner.token, {
        evaluation_name: 'x',
        dataset_version_id: version.dataset_version_id,
        candidate_version: 'c',
        environment: 'e',
        ...p,
      }),
      401,
      API_KEY_ONLY_DETAIL,
    );
    expectDetail(
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/results`,
        token: owner.token,
        payload: { results: [], ...p },
      }),
      401,
      API_KEY_ONLY_DETAIL,
    );
    expectDetail(
      await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/complete`,
        token: owner.token,
        payload: p,
      }),
      401,
      API_KEY_ONLY_DETAIL,
    );
    expectDetail(await get(owner.token, `/evaluation-runs/${run.evaluation_run_id}`), 400, PROJECT_ID_REQUIRED_DETAIL);
    expectDetail(await get(owner.token, '/evaluations'), 400, PROJECT_ID_REQUIRED_DETAIL);
    expect(await summary(h(), owner.token, run.evaluation_run_id, p)).toEqual(
      await summary(h(), key.key, run.evaluation_run_id),
    );
    expect((await get(owner.token, '/evaluations', p)).json().data).toHaveLength(1);
    expect((await get(owner.token, `/evaluations/${run.evaluation_id}`, p)).json().runs).toHaveLength(1);
  });

  it("another project's key never sees or writes an evaluation or run (404)", async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    const { version } = await datasetWithVersion(h(), a.key.key);
    const run = await createRun(h(), a.key.key, version.dataset_version_id);
    const caseId = version.items[0]!.test_case_id;
    expectDetail(await get(b.key.key, `/evaluation-runs/${run.evaluation_run_id}`), 404, 'evaluation run not found');
    expectDetail(await get(b.key.key, `/evaluations/${run.evaluation_id}`), 404, 'evaluation not found');
    expectDetail(
      await postResults(h(), b.key.key, run.evaluation_run_id, [{ test_case_id: caseId }]),
      404,
      'evaluation run not found',
    );
    expectDetail(await complete(h(), b.key.key, run.evaluation_run_id), 404, 'evaluation run not found');
    expectDetail(
      await get(b.key.key, `/evaluation-runs/${run.evaluation_run_id}/compare`, { other: run.evaluation_run_id }),
      404,
      'evaluation run not found',
    );
    expect((await get(b.key.key, '/evaluations')).json().data).toEqual([]);
    // B's run on its own version can't take A's test cases.
    const bVersion = (await datasetWithVersion(h(), b.key.key)).version;
    const bRun = await createRun(h(), b.key.key, bVersion.dataset_version_id);
    const res = await postResults(h(), b.key.key, bRun.evaluation_run_id, [{ test_case_id: caseId }]);
    expect(res.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0, test_case_id: caseId }] });
    expect((await summary(h(), a.key.key, run.evaluation_run_id)).status).toBe('running');
  });
});
