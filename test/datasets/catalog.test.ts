import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, publicGet, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { createDataset, createVersion, datasetWithVersion, getVersion, simpleCases } from '../support/datasets.js';
import { API_KEY_ONLY_DETAIL } from '../../src/auth/principal.js';
import { PROJECT_ID_MISMATCH_DETAIL, PROJECT_ID_REQUIRED_DETAIL } from '../../src/auth/access.js';

const h = useHarness();
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const get = publicGet(h);
const send = (method: 'POST' | 'PATCH', token: string, url: string, payload: unknown) =>
  call(h().api, { method, url: `${PUBLIC}${url}`, token, payload: payload as never });

describe('datasets', () => {
  it('creates, reads, lists newest first and edits a dataset', async () => {
    const { key } = await projectWithKey(h());
    const first = await createDataset(h(), key.key, 'qa', 'questions');
    expect(first).toMatchObject({
      id: first.dataset_id,
      name: 'qa',
      description: 'questions',
      version_count: 0,
      versions: [],
    });
    expect((first as unknown as { created_at: string }).created_at).toMatch(ISO);
    const second = await createDataset(h(), key.key, 'summaries');
    expect(second.description).toBe('');

    const list = await get(key.key, '/datasets');
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((d: { name: string }) => d.name)).toEqual(['summaries', 'qa']);
    expect(list.json().meta).toEqual({ page: 0, limit: 50, total: 2 });
    expect(
      (await get(key.key, '/datasets', { limit: '1', page: '1' })).json().data.map((d: { name: string }) => d.name),
    ).toEqual(['qa']);

    const patched = await send('PATCH', key.key, `/datasets/${first.id}`, { name: 'qa v2' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({ id: first.id, name: 'qa v2', description: 'questions' });
    const described = await send('PATCH', key.key, `/datasets/${first.id}`, { description: '' });
    expect(described.json()).toMatchObject({ name: 'qa v2', description: '' });
    expect((await get(key.key, `/datasets/${first.id}`)).json().name).toBe('qa v2');
  });

  it('lists its versions newest first', async () => {
    const { key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const v1 = await createVersion(h(), key.key, dataset.id, simpleCases(2), 'baseline');
    const v2 = await createVersion(h(), key.key, dataset.id, simpleCases(3));
    const detail = (await get(key.key, `/datasets/${dataset.id}`)).json();
    expect(detail.version_count).toBe(2);
    expect(detail.versions).toEqual([
      {
        id: v2.dataset_version_id,
        dataset_version_id: v2.dataset_version_id,
        version_number: 2,
        label: 'v2',
        test_case_count: 3,
        created_at: expect.stringMatching(ISO),
      },
      {
        id: v1.dataset_version_id,
        dataset_version_id: v1.dataset_version_id,
        version_number: 1,
        label: 'baseline',
        test_case_count: 2,
        created_at: expect.stringMatching(ISO),
      },
    ]);
  });

  it('validates names, descriptions and unknown ids', async () => {
    const { key } = await projectWithKey(h());
    expectValidationAt(await send('POST', key.key, '/datasets', {}), ['body', 'name']);
    expectValidationAt(await send('POST', key.key, '/datasets', { name: '   ' }), ['body', 'name']);
    expectValidationAt(await send('POST', key.key, '/datasets', { name: 'x'.repeat(201) }), ['body', 'name']);
    expectValidationAt(await send('POST', key.key, '/datasets', { name: 'nul\u0000' }), ['body', 'name']);
    expectValidationAt(await send('POST', key.key, '/datasets', { name: 'ok', description: 5 }), [
      'body',
      'description',
    ]);
    expectDetail(await get(key.key, `/datasets/${UNKNOWN_ID}`), 404, 'dataset not found');
    expectDetail(await get(key.key, '/datasets/not-a-uuid'), 404, 'dataset not found');
    expectDetail(await send('PATCH', key.key, `/datasets/${UNKNOWN_ID}`, { name: 'x' }), 404, 'dataset not found');
    expectDetail(
      await send('POST', key.key, `/datasets/${UNKNOWN_ID}/versions`, { test_cases: simpleCases(1) }),
      404,
      'dataset not found',
    );
    expectValidationAt(await get(key.key, '/datasets', { limit: '0' }), ['query', 'limit']);
    expectValidationAt(await get(key.key, '/datasets', { limit: '201' }), ['query', 'limit']);
  });
});

describe('credentials and isolation', () => {
  it('authoring takes an API key only: a user credential is 401', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const dataset = await createDataset(h(), key.key);
    const asUser = { project_id: project.id };
    for (const res of [
      await send('POST', owner.token, '/datasets', { name: 'x', ...asUser }),
      await send('PATCH', owner.token, `/datasets/${dataset.id}`, { name: 'x', ...asUser }),
      await send('POST', owner.token, `/datasets/${dataset.id}/versions`, { test_cases: simpleCases(1), ...asUser }),
    ]) {
      expectDetail(res, 401, API_KEY_ONLY_DETAIL);
    }
    expect((await send('POST', 'garbage', '/datasets', { name: 'x' })).statusCode).toBe(401);
    expect(
      (await call(h().api, { method: 'POST', url: `${PUBLIC}/datasets`, payload: { name: 'x' } })).statusCode,
    ).toBe(401);
  });

  it('reads take a user credential with project_id', async () => {
    const { owner, project, key } = await projectWithKey(h());
    const { dataset, version } = await datasetWithVersion(h(), key.key);
    expectDetail(await get(owner.token, '/datasets'), 400, PROJECT_ID_REQUIRED_DETAIL);
    expectDetail(await get(owner.token, `/datasets/${dataset.id}`), 400, PROJECT_ID_REQUIRED_DETAIL);
    expectDetail(await getVersion(h(), owner.token, version.dataset_version_id), 400, PROJECT_ID_REQUIRED_DETAIL);
    const q = { project_id: project.id };
    expect((await get(owner.token, '/datasets', q)).json().data.map((d: { id: string }) => d.id)).toEqual([dataset.id]);
    expect((await get(owner.token, `/datasets/${dataset.id}`, q)).json().versions).toHaveLength(1);
    const read = await getVersion(h(), owner.token, version.dataset_version_id, q);
    expect(read.statusCode).toBe(200);
    expect(read.json().items).toEqual(version.items);
  });

  it("another project's key or user never sees a dataset or version (404, or 403 for the project)", async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    const { dataset, version } = await datasetWithVersion(h(), a.key.key);
    expect((await get(b.key.key, '/datasets')).json().data).toEqual([]);
    expectDetail(await get(b.key.key, `/datasets/${dataset.id}`), 404, 'dataset not found');
    expectDetail(await send('PATCH', b.key.key, `/datasets/${dataset.id}`, { name: 'mine' }), 404, 'dataset not found');
    expectDetail(
      await send('POST', b.key.key, `/datasets/${dataset.id}/versions`, { test_cases: simpleCases(1) }),
      404,
      'dataset not found',
    );
    expectDetail(await getVersion(h(), b.key.key, version.dataset_version_id), 404, 'dataset version not found');
    expectDetail(
      await getVersion(h(), b.key.key, version.dataset_version_id, { limit: '1' }),
      404,
      'dataset version not found',
    );
    // B's key naming A's project is the project_id mismatch; B's user naming A's project has no access.
    expectDetail(
      await get(b.key.key, `/datasets/${dataset.id}`, { project_id: a.project.id }),
      400,
      PROJECT_ID_MISMATCH_DETAIL,
    );
    expect(
      (await getVersion(h(), b.owner.token, version.dataset_version_id, { project_id: a.project.id })).statusCode,
    ).toBe(403);
    // A's dataset is untouched.
    expect((await get(a.key.key, `/datasets/${dataset.id}`)).json().name).toBe('golden');
  });
});
