import { expect } from 'vitest';
import { call, PUBLIC, type Harness } from './harness.js';

/** Helpers of the evaluation tests. */

export type RunSummary = Record<string, unknown> & {
  evaluation_run_id: string;
  evaluation_id: string;
  run_number: number;
  status: string;
  scores: {
    name: string;
    direction: string;
    value_type: string;
    observed_count: number;
    unit?: string;
    value?: number;
  }[];
  metrics: {
    name: string;
    direction: string;
    value_type: string;
    observed_count: number;
    unit?: string;
    value?: number;
  }[];
};

export function postRun(h: Harness, key: string, body: Record<string, unknown>) {
  return call(h.api, { method: 'POST', url: `${PUBLIC}/evaluation-runs`, token: key, payload: body });
}

export async function createRun(
  h: Harness,
  key: string,
  versionId: string,
  overrides: Record<string, unknown> = {},
): Promise<RunSummary> {
  const res = await postRun(h, key, {
    evaluation_name: 'nightly',
    dataset_version_id: versionId,
    candidate_version: 'v1.0',
    environment: 'ci',
    ...overrides,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as RunSummary;
}

export function postResults(h: Harness, key: string, runId: string, results: unknown[]) {
  return call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/evaluation-runs/${runId}/results`,
    token: key,
    payload: { results },
  });
}

/** Posts results expecting every one accepted. */
export async function writeResults(h: Harness, key: string, runId: string, results: unknown[]) {
  const res = await postResults(h, key, runId, results);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toEqual({ accepted: results.length, rejected: [] });
}

export function complete(h: Harness, key: string, runId: string, body?: Record<string, unknown>) {
  return call(h.api, {
    method: 'POST',
    url: `${PUBLIC}/evaluation-runs/${runId}/complete`,
    token: key,
    ...(body === undefined ? {} : { payload: body }),
  });
}

export async function summary(
  h: Harness,
  token: string,
  runId: string,
  query: Record<string, string> = {},
): Promise<RunSummary> {
  const res = await call(h.api, { method: 'GET', url: `${PUBLIC}/evaluation-runs/${runId}`, token, query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as RunSummary;
}
