import { describe, expect, it } from 'vitest';
import { call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { OTHER_TENANT_BOUND_MS, timed } from '../support/other-tenant.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { createDataset, getVersion } from '../support/datasets.js';
import { MAX_RESOLVED_VERSION_BYTES } from '../../src/datasets/version-write.js';

/**
 * Issue 20, finding 1: `POST /datasets/{id}/versions` naming one large trace 100 times (a ~3 KB body)
 * copied the trace's text into every case and inserted one giant jsonb while holding the embedded
 * store that every authentication needs. Scaled to the test machine: a 400 KB root input, 100 times.
 */
const h = useHarness();

/** Another tenant's requests while the big one runs must be answered within this (the behaviour under test). */

async function traceWithRootInput(key: string, traceId: string, bytes: number) {
  const input = { prompt: 'x'.repeat(bytes) };
  await ingestSpans(h(), key, [
    { trace_id: traceId, span_id: 'root', name: 'agent', start_time: iso(Date.now() - 60_000), input, output: 'done' },
  ]);
  return input;
}

function postVersion(key: string, datasetId: string, cases: unknown[]) {
  return call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/datasets/${datasetId}/versions`,
    token: key,
    payload: { test_cases: cases },
  });
}

/** Another tenant's requests, each timed: an API key whoami, a session read, a login-free health check. */
async function otherTenantRequests(other: Awaited<ReturnType<typeof projectWithKey>>) {
  return Promise.all([
    timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: other.key.key })),
    timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: other.owner.token })),
    timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/datasets`, token: other.key.key })),
    timed(() => call(h().api, { method: 'GET', url: '/healthz' })),
  ]);
}

describe('a version is bounded by what it resolves to', () => {
  it('one 400 KB trace named 100 times: stored once, answered in full, others answered meanwhile', async () => {
    const attacker = await projectWithKey(h(), 'amplify');
    const other = await projectWithKey(h(), 'bystander');
    const input = await traceWithRootInput(attacker.key.key, 'big-trace', 400_000);
    const dataset = await createDataset(h(), attacker.key.key);
    const cases = Array.from({ length: 100 }, () => ({ source_trace_id: 'big-trace' }));

    const big = postVersion(attacker.key.key, dataset.id, cases);
    const meanwhile = await otherTenantRequests(other);
    const res = await big;
    expect(res.statusCode, res.body.slice(0, 300)).toBe(201);
    for (const answer of meanwhile) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
    }

    // The answer and a later read spell every case out, exactly as before the sources were shared.
    const version = res.json();
    expect(version.items).toHaveLength(100);
    for (const item of version.items)
      expect(item).toMatchObject({ input, expected: 'done', source_trace_id: 'big-trace', source_span_id: 'root' });
    const read = await getVersion(h(), attacker.key.key, version.dataset_version_id);
    expect(read.statusCode).toBe(200);
    expect(read.json().items).toEqual(version.items);
    const page = await getVersion(h(), attacker.key.key, version.dataset_version_id, { limit: '7' });
    expect(page.json().items).toEqual(version.items.slice(0, 7));

    // Stored once: one source row, and no case holds a copy of it.
    const pool = h().ctx.pg.pool;
    const sources = await pool.query<{ n: number; bytes: number }>(
      'SELECT count(*)::int AS n, COALESCE(sum(octet_length(input::text)), 0)::int AS bytes FROM dataset_version_sources WHERE version_id = $1',
      [version.dataset_version_id],
    );
    expect(sources.rows[0]).toEqual({ n: 1, bytes: expect.any(Number) });
    expect(sources.rows[0]!.bytes).toBeGreaterThan(400_000);
    const copies = await pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dataset_test_cases WHERE version_id = $1 AND input IS NOT NULL',
      [version.dataset_version_id],
    );
    expect(copies.rows[0]!.n).toBe(0);
  });

  it(`past ${MAX_RESOLVED_VERSION_BYTES / 1024 / 1024} MiB resolved: 413 naming the size and the limit, before anything is written`, async () => {
    const attacker = await projectWithKey(h(), 'amplify');
    const other = await projectWithKey(h(), 'bystander');
    await traceWithRootInput(attacker.key.key, 'huge-trace', 700_000);
    const dataset = await createDataset(h(), attacker.key.key);
    const cases = Array.from({ length: 100 }, () => ({ source_trace_id: 'huge-trace' }));

    const big = postVersion(attacker.key.key, dataset.id, cases);
    const meanwhile = await otherTenantRequests(other);
    const res = await big;
    expect(res.statusCode, res.body).toBe(413);
    expect(Object.keys(res.json())).toEqual(['detail']);
    expect(res.json().detail).toMatch(
      /resolves to 6\d\.\d MiB \(\d+ bytes\).*at most 64\.0 MiB \(67108864 bytes\) per version/,
    );
    for (const answer of meanwhile) {
      expect(answer.status).toBe(200);
      expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
    }
    // Nothing of the refused version exists, pending or numbered.
    const rows = await h().ctx.pg.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM dataset_versions WHERE dataset_id = $1',
      [dataset.id],
    );
    expect(rows.rows[0]!.n).toBe(0);
    const detail = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/datasets/${dataset.id}`,
      token: attacker.key.key,
    });
    expect(detail.json()).toMatchObject({ version_count: 0, versions: [] });
    // Fewer references of the same trace fit, and number as the first version.
    const fits = await postVersion(attacker.key.key, dataset.id, cases.slice(0, 10));
    expect(fits.statusCode).toBe(201);
    expect(fits.json().version_number).toBe(1);
  });

  it('a version written in several chunks whose last chunk fails leaves nothing behind (422)', async () => {
    const owner = await projectWithKey(h(), 'chunks');
    const dataset = await createDataset(h(), owner.key.key);
    // ~3 MiB of cases: several chunks; the last case holds a number jsonb can't hold (past 16,383 decimals).
    const filler = 'f'.repeat(3000);
    const cases = Array.from(
      { length: 1000 },
      (_, i) => `{"input": {"i": ${i}, "text": "${filler}"}, "expected": ${i}}`,
    );
    cases.push(`{"input": 0.${'1'.repeat(17_000)}, "expected": null}`);
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/datasets/${dataset.id}/versions`,
      token: owner.key.key,
      payload: `{"test_cases": [${cases.join(',')}]}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
    expect(res.json().detail[0]).toMatchObject({
      loc: ['body', 'test_cases'],
      msg: expect.stringMatching(/cannot hold/),
    });
    const pool = h().ctx.pg.pool;
    const left = await pool.query<{ versions: number; cases: number }>(
      `SELECT (SELECT count(*)::int FROM dataset_versions WHERE dataset_id = $1) AS versions,
              (SELECT count(*)::int FROM dataset_test_cases c JOIN dataset_versions v ON v.id = c.version_id WHERE v.dataset_id = $1) AS cases`,
      [dataset.id],
    );
    expect(left.rows[0]).toEqual({ versions: 0, cases: 0 });
    const detail = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/datasets/${dataset.id}`,
      token: owner.key.key,
    });
    expect(detail.json()).toMatchObject({ version_count: 0, versions: [] });
  });

  it('a version still being written is invisible: not listed, not readable, not evaluable', async () => {
    const owner = await projectWithKey(h(), 'pending');
    const dataset = await createDataset(h(), owner.key.key);
    const pending = crypto.randomUUID();
    await h().ctx.pg.pool.query(
      `INSERT INTO dataset_versions (id, dataset_id, project_id, version_number, label, test_case_count) VALUES ($1, $2, $3, NULL, '', 0)`,
      [pending, dataset.id, owner.project.id],
    );
    expect((await getVersion(h(), owner.key.key, pending)).statusCode).toBe(404);
    const detail = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/datasets/${dataset.id}`,
      token: owner.key.key,
    });
    expect(detail.json().versions).toEqual([]);
    const run = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/evaluation-runs`,
      token: owner.key.key,
      payload: { evaluation_name: 'e', dataset_version_id: pending, candidate_version: 'c', environment: 'test' },
    });
    expect(run.statusCode).toBe(404);
    // Numbered, a version is immutable again.
    const created = await postVersion(owner.key.key, dataset.id, [{ input: 1, expected: 2 }]);
    await expect(
      h().ctx.pg.pool.query(`UPDATE dataset_versions SET label = 'changed' WHERE id = $1`, [
        created.json().dataset_version_id,
      ]),
    ).rejects.toThrow(/immutable/);
  });
});
