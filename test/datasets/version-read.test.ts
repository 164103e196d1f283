import { beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, useHarness } from '../support/harness.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import {
  createDataset,
  createVersion,
  getVersion,
  simpleCases,
  type TestCase,
  type Version,
} from '../support/datasets.js';

const h = useHarness();
let key: string;
let version: Version;
let other: Version;

beforeAll(async () => {
  key = (await projectWithKey(h())).key.key;
  const dataset = await createDataset(h(), key);
  version = await createVersion(h(), key, dataset.id, simpleCases(2_345));
  other = await createVersion(h(), key, dataset.id, simpleCases(30, 5_000));
});

/** Follows next_cursor from the first page; returns the pages. */
async function allPages(id: string, limit: string) {
  const pages: Version[] = [];
  let cursor: string | null = null;
  do {
    const res = await getVersion(h(), key, id, cursor === null ? { limit } : { limit, cursor });
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as Version;
    pages.push(page);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return pages;
}

describe('reading a version', () => {
  it('answers the whole version in one response when neither limit nor cursor is given', async () => {
    const res = await getVersion(h(), key, version.dataset_version_id);
    expect(res.statusCode).toBe(200);
    const whole = res.json() as Version & { test_case_count: number };
    expect(whole).toMatchObject({
      dataset_id: version.dataset_id,
      dataset_version_id: version.dataset_version_id,
      version_number: 1,
      label: 'v1',
      test_case_count: 2_345,
      next_cursor: null,
    });
    expect(whole.items).toEqual(version.items);
  });

  it('pages give the same cases, in the same order, as the whole read', async () => {
    const pages = await allPages(version.dataset_version_id, '1000');
    expect(pages.map((p) => p.items.length)).toEqual([1000, 1000, 345]);
    expect(pages.flatMap((p) => p.items)).toEqual(version.items);
    for (const p of pages)
      expect(p).toMatchObject({
        dataset_id: version.dataset_id,
        dataset_version_id: version.dataset_version_id,
        version_number: 1,
        label: 'v1',
      });
    const small = await allPages(other.dataset_version_id, '7');
    expect(small.map((p) => p.items.length)).toEqual([7, 7, 7, 7, 2]);
    expect(small.flatMap((p) => p.items)).toEqual(other.items);
  });

  it('ends without a cursor when the last page is exactly full', async () => {
    const pages = await allPages(other.dataset_version_id, '15');
    expect(pages.map((p) => p.items.length)).toEqual([15, 15]);
    expect(pages[1]!.next_cursor).toBeNull();
    const one = await allPages(other.dataset_version_id, '1000');
    expect(one).toHaveLength(1);
  });

  it('keeps a cursor valid and stable: the same cursor gives the same page again', async () => {
    const first = (await getVersion(h(), key, version.dataset_version_id, { limit: '10' })).json() as Version;
    expect(first.next_cursor!.length).toBeGreaterThanOrEqual(1);
    expect(first.next_cursor!.length).toBeLessThanOrEqual(64);
    const a = (
      await getVersion(h(), key, version.dataset_version_id, { limit: '10', cursor: first.next_cursor! })
    ).json() as Version;
    const b = (
      await getVersion(h(), key, version.dataset_version_id, { limit: '10', cursor: first.next_cursor! })
    ).json() as Version;
    expect(a).toEqual(b);
    expect(a.items).toEqual(version.items.slice(10, 20));
    // The page size may change between pages; a cursor alone pages with the default size.
    const wider = (
      await getVersion(h(), key, version.dataset_version_id, { limit: '25', cursor: first.next_cursor! })
    ).json() as Version;
    expect(wider.items).toEqual(version.items.slice(10, 35));
    const byDefault = (
      await getVersion(h(), key, version.dataset_version_id, { cursor: first.next_cursor! })
    ).json() as Version;
    expect(byDefault.items).toEqual(version.items.slice(10, 110));
  });

  it('checks limit and cursor bounds', async () => {
    const id = version.dataset_version_id;
    expectValidationAt(await getVersion(h(), key, id, { limit: '0' }), ['query', 'limit']);
    expectValidationAt(await getVersion(h(), key, id, { limit: '1001' }), ['query', 'limit']);
    expectValidationAt(await getVersion(h(), key, id, { limit: 'ten' }), ['query', 'limit']);
    expectValidationAt(await getVersion(h(), key, id, { limit: '10', cursor: '' }), ['query', 'cursor']);
    expectValidationAt(await getVersion(h(), key, id, { limit: '10', cursor: 'x'.repeat(65) }), ['query', 'cursor']);
    expect((await getVersion(h(), key, id, { limit: '1' })).json().items).toHaveLength(1);
    expect((await getVersion(h(), key, id, { limit: '1000' })).json().items).toHaveLength(1000);
  });

  it("refuses a tampered or another version's cursor with 422, never another version's cases", async () => {
    const page = (await getVersion(h(), key, version.dataset_version_id, { limit: '10' })).json() as Version;
    const cursor = page.next_cursor!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    const tampered = [
      flip(cursor, 0),
      flip(cursor, cursor.length - 1),
      `${cursor}x`,
      'zzzz.AAAAAAAAAAAAAAAAAAAAAA',
      '1',
      "' OR 1=1 --",
      '..',
      '%00',
    ];
    for (const bad of tampered) {
      const res = await getVersion(h(), key, version.dataset_version_id, { limit: '10', cursor: bad });
      expect(res.statusCode, `${bad}: ${res.body}`).toBe(422);
      expect(res.json().detail[0].loc).toEqual(['query', 'cursor']);
    }
    // A valid cursor of one version used on another.
    const foreign = await getVersion(h(), key, other.dataset_version_id, { limit: '10', cursor });
    expectValidationAt(foreign, ['query', 'cursor']);
  });

  it('answers 404 for unknown versions', async () => {
    expectDetail(await getVersion(h(), key, UNKNOWN_ID), 404, 'dataset version not found');
    expectDetail(await getVersion(h(), key, 'nope'), 404, 'dataset version not found');
  });

  it('streams large versions intact (10,000 cases of about 2 KB)', async () => {
    const dataset = await createDataset(h(), key, 'large');
    const text = 'lorem ipsum dolor sit amet '.repeat(40);
    const cases = Array.from({ length: 10_000 }, (_, i) => ({
      input: { i, text },
      expected: { i, answer: text.slice(0, 200) },
      metadata: { n: i },
    }));
    const created = await createVersion(h(), key, dataset.id, cases);
    const res = await getVersion(h(), key, created.dataset_version_id);
    expect(res.statusCode).toBe(200);
    const items = (res.json() as Version).items;
    expect(items).toHaveLength(10_000);
    expect(items.map((c: TestCase) => (c.input as { i: number }).i)).toEqual(cases.map((c) => c.input.i));
    expect(items[9_999]).toEqual(created.items[9_999]);
  });
});
