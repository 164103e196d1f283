import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { bearer, call, projectWithKey, PUBLIC, useHarness } from '../support/harness.js';
import { listening } from '../support/raw-http.js';
import { OTHER_TENANT_BOUND_MS, timed } from '../support/other-tenant.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { createDataset, createVersion, getVersion, simpleCases } from '../support/datasets.js';
import { createRun, summary } from '../support/evaluations.js';
import { RESULT_CHUNK_BYTES } from '../../src/evaluations/result-writer.js';
import { keyHash } from '../../src/idempotency/seal.js';

/**
 * Long creates with an Idempotency-Key (docs/idempotency.md, "Long creates"; src/idempotency/deferred.ts):
 * a keyed dataset version or results request is written in chunks like an unkeyed one, so it never
 * holds the store that authentication needs (issue 20), and its key is recorded by its own final
 * transaction, so a retry still creates nothing (issue 24). Before, a keyed create ran whole inside
 * one idempotency transaction: another tenant waited for all of it.
 */
const h = useHarness();

/** As test/datasets/bounded-versions.test.ts: another tenant's requests are answered within this. */
const newKey = () => crypto.randomUUID();

function keyed(options: InjectOptions & { token: string }, key: string): Promise<LightMyRequestResponse> {
  return call(h().api, {
    ...options,
    headers: { ...(options.headers as Record<string, string> | undefined), 'idempotency-key': key },
  });
}

/**
 * A keyed request over a real socket, its answer hashed as it arrives. `inject` joins and decodes a
 * whole answer in one turn of the loop it shares with the server (half a second for 60 MB, seconds on
 * a loaded machine): test-only work that another tenant's timing would count against the server.
 */
async function keyedOverSocket(options: { method: 'POST'; url: string; token: string; payload: unknown }, key: string) {
  const port = await listening(h().api);
  const res = await fetch(`http://127.0.0.1:${port}${options.url}`, {
    method: options.method,
    headers: { ...bearer(options.token), 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(options.payload),
  });
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  for await (const chunk of res.body!) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  return { status: res.status, headers: res.headers, bytes, sha256: hash.digest('hex') };
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const { rows } = await h().ctx.pg.pool.query<{ n: number }>(sql, params);
  return rows[0]!.n;
}

/** Another tenant's requests, each timed: an API key whoami, a session read, a health check. */
async function otherTenantRequests(other: Awaited<ReturnType<typeof projectWithKey>>) {
  return Promise.all([
    timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/whoami`, token: other.key.key })),
    timed(() => call(h().api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: other.owner.token })),
    timed(() => call(h().api, { method: 'GET', url: '/healthz' })),
  ]);
}

function expectAnsweredMeanwhile(answers: { status: number; ms: number }[]) {
  for (const answer of answers) {
    expect(answer.status).toBe(200);
    expect(answer.ms).toBeLessThan(OTHER_TENANT_BOUND_MS);
  }
}

describe('a keyed dataset version', () => {
  it('of 150 cases naming a 400 KB trace (a 60 MB answer): others answered meanwhile, the retry replays it byte for byte', async () => {
    const owner = await projectWithKey(h(), 'long');
    const other = await projectWithKey(h(), 'bystander');
    const input = { prompt: 'x'.repeat(400_000) };
    await ingestSpans(h(), owner.key.key, [
      {
        trace_id: 'big-trace',
        span_id: 'root',
        name: 'agent',
        start_time: iso(Date.now() - 60_000),
        input,
        output: 'done',
      },
    ]);
    const dataset = await createDataset(h(), owner.key.key);
    const request = {
      method: 'POST' as const,
      url: `${PUBLIC}/datasets/${dataset.id}/versions`,
      token: owner.key.key,
      payload: {
        test_cases: Array.from({ length: 150 }, (_, i) => ({ source_trace_id: 'big-trace', metadata: { i } })),
      },
    };
    const idem = newKey();

    const big = keyed(request, idem);
    const meanwhile = await otherTenantRequests(other);
    const first = await big;
    expect(first.statusCode, first.body.slice(0, 300)).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expectAnsweredMeanwhile(meanwhile);
    const version = first.json();
    expect(version.items).toHaveLength(150);
    expect(version.items[149]).toMatchObject({
      input,
      expected: 'done',
      metadata: { i: 149 },
      source_trace_id: 'big-trace',
    });
    // The keyed answer is the version as stored: what any later read answers.
    expect(first.body).toBe((await getVersion(h(), owner.key.key, version.dataset_version_id)).body);

    // The key was recorded as a reference, not as the 60 MB answer.
    const { rows } = await h().ctx.pg.pool.query<{ bytes: number }>(
      'SELECT octet_length(answer) AS bytes FROM idempotency_keys WHERE key_hash = $1',
      [keyHash(idem)],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.bytes).toBeLessThan(1_000);

    const retry = keyedOverSocket(request, idem);
    const duringReplay = await otherTenantRequests(other);
    const again = await retry;
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers['content-type']);
    expect(again.bytes).toBe(Buffer.byteLength(first.body));
    expect(again.sha256).toBe(crypto.createHash('sha256').update(first.body).digest('hex'));
    expectAnsweredMeanwhile(duringReplay);
    expect(await count('SELECT count(*)::int AS n FROM dataset_versions WHERE dataset_id = $1', [dataset.id])).toBe(1);
  });

  it('sent twice at once: both answer the one version created, the other attempt leaves nothing behind', async () => {
    const owner = await projectWithKey(h(), 'twice');
    const dataset = await createDataset(h(), owner.key.key);
    const request = {
      method: 'POST' as const,
      url: `${PUBLIC}/datasets/${dataset.id}/versions`,
      token: owner.key.key,
      payload: { test_cases: simpleCases(2000) },
    };
    const idem = newKey();
    const answers = await Promise.all([keyed(request, idem), keyed(request, idem)]);
    expect(answers.map((a) => a.statusCode)).toEqual([201, 201]);
    expect(answers[0]!.body === answers[1]!.body).toBe(true);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(1);
    expect(answers[0]!.json().version_number).toBe(1);
    // One version, numbered 1; the other attempt's unnumbered rows and number were rolled back.
    expect(await count('SELECT count(*)::int AS n FROM dataset_versions WHERE dataset_id = $1', [dataset.id])).toBe(1);
    expect(
      await count(
        'SELECT count(*)::int AS n FROM dataset_test_cases c JOIN dataset_versions v ON v.id = c.version_id WHERE v.dataset_id = $1',
        [dataset.id],
      ),
    ).toBe(2000);
    expect(await count('SELECT version_count AS n FROM datasets WHERE id = $1', [dataset.id])).toBe(1);
  });

  it('that fails at its last chunk keeps no key: the corrected request with the same key creates, once', async () => {
    const owner = await projectWithKey(h(), 'fails');
    const dataset = await createDataset(h(), owner.key.key);
    const idem = newKey();
    const post = (body: string) =>
      keyed(
        {
          method: 'POST',
          url: `${PUBLIC}/datasets/${dataset.id}/versions`,
          token: owner.key.key,
          payload: body,
          headers: { 'content-type': 'application/json' },
        },
        idem,
      );
    const filler = 'f'.repeat(3000);
    const cases = Array.from(
      { length: 700 },
      (_, i) => `{"input": {"i": ${i}, "text": "${filler}"}, "expected": ${i}}`,
    );
    const refused = await post(
      `{"test_cases": [${[...cases, `{"input": 0.${'1'.repeat(17_000)}, "expected": null}`].join(',')}]}`,
    );
    expect(refused.statusCode, refused.body.slice(0, 300)).toBe(422);
    expect(await count('SELECT count(*)::int AS n FROM idempotency_keys WHERE key_hash = $1', [keyHash(idem)])).toBe(0);
    const corrected = `{"test_cases": [${cases.join(',')}]}`;
    const created = await post(corrected);
    expect(created.statusCode).toBe(201);
    expect((await post(corrected)).body === created.body).toBe(true);
    expect(await count('SELECT count(*)::int AS n FROM dataset_versions WHERE dataset_id = $1', [dataset.id])).toBe(1);
  });
});

describe('keyed evaluation results', () => {
  async function runOf(n: number) {
    const owner = await projectWithKey(h(), 'results');
    const dataset = await createDataset(h(), owner.key.key);
    const version = await createVersion(h(), owner.key.key, dataset.id, simpleCases(n));
    const run = await createRun(h(), owner.key.key, version.dataset_version_id);
    return { owner, version, run, url: `${PUBLIC}/evaluation-runs/${run.evaluation_run_id}/results` };
  }

  /** Postgres revisions summed and the ClickHouse copy's rows before merges: any write adds to both. */
  async function writes(runId: string) {
    const revisions = await count(
      'SELECT COALESCE(sum(revision), 0)::int AS n FROM evaluation_results WHERE run_id = $1',
      [runId],
    );
    const copied = await h().ctx.ch.client.query({
      query: 'SELECT count() AS n FROM evaluation_results WHERE evaluation_run_id = {run:String}',
      query_params: { run: runId },
      format: 'JSONEachRow',
    });
    const [{ n }] = await copied.json<{ n: string }>();
    return { revisions, copies: Number(n) };
  }

  it('in several chunks: another tenant answered meanwhile; the retry replays the answer and writes nothing', async () => {
    const { owner, version, run, url } = await runOf(40);
    const other = await projectWithKey(h(), 'bystander');
    const results = version.items.map((c, i) => ({
      test_case_id: c.test_case_id,
      output: { text: 'y'.repeat(200_000) },
      scores: [{ name: 'accuracy', value: i % 2 }],
    }));
    const payload = { results: [...results, { test_case_id: 'not-a-case', output: 1 }] };
    expect(JSON.stringify(payload).length).toBeGreaterThan(4 * RESULT_CHUNK_BYTES);
    const idem = newKey();

    const big = keyed({ method: 'POST', url, token: owner.key.key, payload }, idem);
    const meanwhile = await otherTenantRequests(other);
    const first = await big;
    expect(first.statusCode, first.body.slice(0, 300)).toBe(200);
    expect(first.json()).toMatchObject({ accepted: 40, rejected: [{ index: 40, test_case_id: 'not-a-case' }] });
    expectAnsweredMeanwhile(meanwhile);
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 40, copies: 40 });

    const again = await keyed({ method: 'POST', url, token: owner.key.key, payload }, idem);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 40, copies: 40 });
    expect(await summary(h(), owner.key.key, run.evaluation_run_id)).toMatchObject({ result_count: 40 });
  });

  it('that write nothing (every result rejected) still keep their key and answer', async () => {
    const { owner, run, url } = await runOf(2);
    const payload = { results: [{ test_case_id: crypto.randomUUID(), output: 'x' }] };
    const idem = newKey();
    const first = await keyed({ method: 'POST', url, token: owner.key.key, payload }, idem);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ accepted: 0, rejected: [{ index: 0 }] });
    const again = await keyed({ method: 'POST', url, token: owner.key.key, payload }, idem);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    const other = await keyed({ method: 'POST', url, token: owner.key.key, payload: { results: [] } }, idem);
    expect(other.statusCode).toBe(409);
    expect(await writes(run.evaluation_run_id)).toEqual({ revisions: 0, copies: 0 });
  });
});
