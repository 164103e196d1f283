import { expect } from 'vitest';
import { call, PUBLIC, type Harness } from './harness.js';

/** Helpers of the dataset and evaluation tests: each call expects success and returns the answer. */

export async function createDataset(h: Harness, key: string, name = 'golden', description?: string) {
  const res = await call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/datasets`,
    token: key,
    payload: { name, ...(description === undefined ? {} : { description }) },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as {
    id: string;
    dataset_id: string;
    name: string;
    description: string;
    version_count: number;
    versions: unknown[];
  };
}

export type TestCase = {
  test_case_id: string;
  input: unknown;
  expected: unknown;
  metadata: unknown;
  source_trace_id: string | null;
  source_span_id: string | null;
};
export type Version = {
  dataset_id: string;
  dataset_version_id: string;
  version_number: number;
  label: string;
  items: TestCase[];
  next_cursor: string | null;
};

/** POST a version as raw JSON text (so tests can send numbers JSON.stringify can't write). */
export function postVersionText(h: Harness, key: string, datasetId: string, body: string) {
  return call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/datasets/${datasetId}/versions`,
    token: key,
    payload: body,
    headers: { 'content-type': 'application/json' },
  });
}

export async function createVersion(
  h: Harness,
  key: string,
  datasetId: string,
  testCases: unknown[],
  label?: string,
): Promise<Version> {
  const res = await call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/datasets/${datasetId}/versions`,
    token: key,
    payload: { test_cases: testCases, ...(label === undefined ? {} : { label }) },
  });
  expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
  return res.json() as Version;
}

export function getVersion(h: Harness, token: string, versionId: string, query: Record<string, string> = {}) {
  return call(h.api, { method: 'GET', url: `${PUBLIC}/dataset-versions/${versionId}`, token, query });
}

/** Simple cases: input {q: i}, expected "a<i>". */
export function simpleCases(n: number, from = 0) {
  return Array.from({ length: n }, (_, i) => ({
    input: { q: from + i },
    expected: `a${from + i}`,
    metadata: { i: from + i },
  }));
}

/** A dataset with one version of `n` simple cases. */
export async function datasetWithVersion(h: Harness, key: string, n = 3) {
  const dataset = await createDataset(h, key);
  const version = await createVersion(h, key, dataset.id, simpleCases(n));
  return { dataset, version };
}
