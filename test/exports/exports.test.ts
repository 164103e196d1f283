import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  createApiKey,
  createProject,
  PUBLIC,
  signUp,
  tempDataDir,
  useHarness,
  type SignedUp,
} from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { memberWithRole } from '../support/accounts.js';
import { expectDetail, expectValidationAt, UNKNOWN_ID } from '../support/expect.js';
import { startLocalS3, type LocalS3 } from '../support/s3-server.js';
import { runExport, sweepExports } from '../../src/exports/runner.js';
import { runDueSchedules } from '../../src/exports/schedules.js';
import { startExportWorkers } from '../../workers/exports.js';
import { partName, planChunks } from '../../src/exports/plan.js';

// Parts of 3 rows: the 8 spans below are written in several parts.
const h = useHarness({ EXPORT_ALLOW_PRIVATE: 'true', EXPORT_PART_ROWS: '3', EXPORT_CONCURRENT_PER_PROJECT: '50' });

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Yesterday (UTC) at 10:00: recent enough for the project's retention, a whole day for the schedule.
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const T0 = TODAY - DAY + 10 * HOUR;
let s3: LocalS3;
let owner: SignedUp;
let projectId: string;
let key: string;

function span(trace: string, id: string, offsetMs: number, extra: Record<string, unknown> = {}) {
  return {
    trace_id: trace,
    span_id: id,
    name: 'chat',
    kind: 'llm',
    start_time: iso(T0 + offsetMs),
    end_time: iso(T0 + offsetMs + 50),
    input: `question ${id}, "quoted", with a comma`,
    output: `answer ${id}`,
    environment: trace === 't-prod' ? 'prod' : 'dev',
    metadata: { tenant: 'acme' },
    ...extra,
  };
}

// 3 traces over 3 hours, 8 spans; the prod trace's 3 spans are in the first hour.
const SPANS = [
  span('t-prod', 'p1', 0),
  span('t-prod', 'p2', 1000, { parent_span_id: 'p1' }),
  span('t-prod', 'p3', 2000, { parent_span_id: 'p1' }),
  span('t-dev', 'd1', HOUR),
  span('t-dev', 'd2', HOUR + 1000, { parent_span_id: 'd1' }),
  span('t-late', 'l1', 2 * HOUR),
  span('t-late', 'l2', 2 * HOUR + 1, { parent_span_id: 'l1' }),
  span('t-late', 'l3', 2 * HOUR + 2, { parent_span_id: 'l1' }),
];
const WINDOW = { start_time: iso(T0 - HOUR), end_time: iso(T0 + 3 * HOUR) };

beforeAll(async () => {
  s3 = await startLocalS3();
  owner = await signUp(h(), 'exports');
  projectId = (await createProject(h(), owner.token, owner.workspace.id)).id;
  key = (await createApiKey(h(), owner.token, projectId)).key;
  await ingestSpans(h(), key, SPANS);
  const scores = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/scores`,
    token: key,
    payload: {
      scores: [
        { score_id: 'sc-1', trace_id: 't-prod', name: 'quality', value: 0.9 },
        { score_id: 'sc-2', trace_id: 't-dev', name: 'quality', value: 0.1 },
      ],
    },
  });
  expect(scores.statusCode, scores.body).toBe(200);
});
afterAll(() => s3?.close());

function post(token: string, url: string, payload: Record<string, unknown>) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}${url}`, token, payload });
}
function get(token: string, url: string, query: Record<string, string> = {}) {
  return call(h().api, { method: 'GET', url: `${PUBLIC}${url}`, token, query });
}

/** Starts an export with the API key and runs it in this process (the worker's own function). */
async function exported(body: Record<string, unknown>) {
  const res = await post(key, '/exports', { ...WINDOW, ...body });
  expect(res.statusCode, res.body).toBe(202);
  const { export_id, status } = res.json() as { export_id: string; status: string };
  expect(status).toBe('queued');
  expect(await runExport(h().ctx, export_id)).toBe('completed');
  const state = await get(key, `/exports/${export_id}`);
  expect(state.statusCode, state.body).toBe(200);
  return state.json() as { export_id: string; rows: number; bytes: number; objects: string[]; status: string };
}

async function download(id: string, query: Record<string, string> = {}) {
  const res = await get(key, `/exports/${id}/download`, query);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return res;
}

/** Reads a Parquet file with the embedded ClickHouse itself. */
async function parquetRows(bytes: Buffer): Promise<Record<string, unknown>[]> {
  const dir = tempDataDir('parquet');
  const file = path.join(dir, 'part.parquet');
  fs.writeFileSync(file, bytes);
  try {
    const result = await h().ctx.ch.client.query({
      query: `SELECT * FROM file('${file}', Parquet) ORDER BY 1, 2`,
      format: 'JSONEachRow',
    });
    return await result.json();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('exports to a download', () => {
  it('exports spans as JSON lines: every span of the window once, with input and metadata', async () => {
    const state = await exported({ kind: 'spans', format: 'jsonl' });
    expect(state).toMatchObject({ status: 'completed', rows: 8 });
    expect(state.objects.length).toBeGreaterThan(1);
    const res = await download(state.export_id);
    expect(res.headers['content-type']).toContain('application/x-ndjson');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="export-${state.export_id}.jsonl"`);
    expect(Number(res.headers['content-length'] ?? res.rawPayload.length)).toBe(state.bytes);
    const lines = res.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.span_id)).toEqual(['p1', 'p2', 'p3', 'd1', 'd2', 'l1', 'l2', 'l3']);
    expect(lines[0]).toMatchObject({
      trace_id: 't-prod',
      input: 'question p1, "quoted", with a comma',
      output: 'answer p1',
      metadata: { tenant: 'acme' },
      attributes: {},
      environment: 'prod',
    });
    expect(lines[0]!.start_time).toBe(iso(T0));
  });

  it('exports spans as CSV with one header, the filters narrowing to the traces they select', async () => {
    const state = await exported({
      kind: 'spans',
      format: 'csv',
      filters: [{ field: 'environment', op: 'in', value: ['dev'] }],
    });
    expect(state.rows).toBe(5);
    const text = (await download(state.export_id)).body;
    const lines = text.trim().split('\n');
    expect(lines[0]!.startsWith('"trace_id","span_id"')).toBe(true);
    expect(lines.filter((l) => l.startsWith('"trace_id"'))).toHaveLength(1);
    expect(lines.slice(1).map((l) => l.split(',')[1])).toEqual(['"d1"', '"d2"', '"l1"', '"l2"', '"l3"']);
    expect(text).toContain('"question d1, ""quoted"", with a comma"');
  });

  it('exports spans as Parquet parts, each read back by ClickHouse', async () => {
    const state = await exported({ kind: 'spans', format: 'parquet' });
    const parts = state.objects.length;
    expect(parts).toBeGreaterThan(1);
    // Parquet files can't be joined: the whole is refused, each part is downloaded.
    expectDetail(
      await get(key, `/exports/${state.export_id}/download`),
      409,
      `this Parquet export has ${parts} parts; download them one at a time with ?part=1 to ?part=${parts}`,
    );
    const ids: unknown[] = [];
    for (let part = 1; part <= parts; part++) {
      const res = await download(state.export_id, { part: String(part) });
      expect(res.headers['content-type']).toContain('application/vnd.apache.parquet');
      expect(res.rawPayload.subarray(0, 4).toString()).toBe('PAR1');
      const rows = await parquetRows(res.rawPayload);
      ids.push(...rows.map((r) => r.span_id));
      if (part === 1)
        expect(rows[0]).toMatchObject({ trace_id: 't-prod', input: 'question p1, "quoted", with a comma' });
    }
    expect(ids.sort()).toEqual(SPANS.map((s) => s.span_id).sort());
    expectValidationAt(await get(key, `/exports/${state.export_id}/download`, { part: String(parts + 1) }), [
      'query',
      'part',
    ]);
  });

  it('exports traces and scores', async () => {
    const traces = await exported({ kind: 'traces', format: 'jsonl' });
    expect(traces.rows).toBe(3);
    const rows = (await download(traces.export_id)).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.map((r: { trace_id: string }) => r.trace_id)).toEqual(['t-prod', 't-dev', 't-late']);
    expect(rows[0]).toMatchObject({ name: 'chat', span_count: 3, input: 'question p1, "quoted", with a comma' });

    const filtered = await exported({
      kind: 'traces',
      format: 'csv',
      filters: [{ field: 'environment', op: 'in', value: ['prod'] }],
    });
    expect(filtered.rows).toBe(1);

    // Scores are dated when they are written: now.
    const scores = await exported({ kind: 'scores', format: 'parquet', end_time: iso(Date.now() + HOUR) });
    expect(scores.rows).toBe(2);
    const scoreRows = await parquetRows((await download(scores.export_id)).rawPayload);
    expect(scoreRows.map((r) => [r.score_id, r.trace_id, r.value])).toEqual([
      ['sc-1', 't-prod', 0.9],
      ['sc-2', 't-dev', 0.1],
    ]);
  });

  it('writes a JSON lines or CSV part in chunks of minutes, one query each: in order, one CSV header', async () => {
    // A project of its own: three spans a few minutes apart in one hour make one part of 3 rows, which
    // the embedded engine writes as 3 chunks (EXPORT_PART_ROWS 3 / 5 rounds up to 1 row a chunk).
    const other = await createProject(h(), owner.token, owner.workspace.id);
    const otherKey = (await createApiKey(h(), owner.token, other.id)).key;
    const start = T0 + 5 * HOUR;
    await ingestSpans(
      h(),
      otherKey,
      ['c1', 'c2', 'c3'].map((id, i) => span('t-chunks', id, 5 * HOUR + i * 120_000)),
    );
    const window = { start_time: iso(start - HOUR), end_time: iso(start + HOUR) };
    for (const format of ['jsonl', 'csv'] as const) {
      const res = await post(otherKey, '/exports', { ...window, kind: 'spans', format });
      expect(res.statusCode, res.body).toBe(202);
      const id = (res.json() as { export_id: string }).export_id;
      expect(await runExport(h().ctx, id)).toBe('completed');
      const state = (await get(otherKey, `/exports/${id}`)).json() as { rows: number; objects: string[] };
      expect(state).toMatchObject({ rows: 3, objects: [partName(0, format)] });
      const body = (await get(otherKey, `/exports/${id}/download`)).body;
      const lines = body.trim().split('\n');
      if (format === 'jsonl') expect(lines.map((l) => JSON.parse(l).span_id)).toEqual(['c1', 'c2', 'c3']);
      else {
        expect(lines.filter((l) => l.startsWith('"trace_id"'))).toHaveLength(1);
        expect(lines.slice(1).map((l) => l.split(',')[1])).toEqual(['"c1"', '"c2"', '"c3"']);
      }
    }
  });

  it('an empty window completes with no rows; its download is empty', async () => {
    const state = await exported({
      kind: 'spans',
      format: 'jsonl',
      start_time: iso(T0 - 48 * HOUR),
      end_time: iso(T0 - 47 * HOUR),
    });
    expect(state).toMatchObject({ rows: 0, bytes: 0, objects: [] });
    expect((await download(state.export_id)).body).toBe('');
  });

  it('runs in the worker: the job queued by the request completes', async () => {
    const workers = startExportWorkers(h().ctx, { tickMs: 3_600_000 });
    try {
      const res = await post(key, '/exports', { ...WINDOW, kind: 'traces', format: 'jsonl' });
      expect(res.statusCode, res.body).toBe(202);
      const id = res.json().export_id as string;
      await expect
        .poll(async () => (await get(key, `/exports/${id}`)).json().status, { timeout: 30_000 })
        .toBe('completed');
      const listed = await get(key, '/exports');
      expect(listed.json().data.map((e: { export_id: string }) => e.export_id)).toContain(id);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
  });

  it('a download is deleted by the periodic pass once it expires', async () => {
    const state = await exported({ kind: 'spans', format: 'jsonl' });
    await h().ctx.pg.pool.query(`UPDATE exports SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      state.export_id,
    ]);
    await sweepExports(h().ctx, async () => {});
    expect(fs.existsSync(path.join(h().config.dataDir, 'exports', state.export_id))).toBe(false);
    expect((await get(key, `/exports/${state.export_id}`)).json().objects).toEqual([]);
    expectDetail(
      await get(key, `/exports/${state.export_id}/download`),
      404,
      'this export’s file was deleted 24 hours after it completed',
    );
  });

  it('refuses a bad window and a download that is not ready', async () => {
    expectValidationAt(
      await post(key, '/exports', {
        kind: 'spans',
        format: 'csv',
        start_time: WINDOW.end_time,
        end_time: WINDOW.start_time,
      }),
      ['body', 'end_time'],
    );
    expectValidationAt(
      await post(key, '/exports', {
        kind: 'spans',
        format: 'csv',
        start_time: iso(T0 - 401 * 24 * HOUR),
        end_time: iso(T0),
      }),
      ['body', 'end_time'],
    );
    expectValidationAt(await post(key, '/exports', { ...WINDOW, kind: 'logs', format: 'csv' }), ['body', 'kind']);
    expectValidationAt(
      await post(key, '/exports', { ...WINDOW, kind: 'spans', format: 'csv', filters: [{ field: 'nope' }] }),
      ['body', 'filters', 0, 'field'],
    );
    expectDetail(
      await post(key, '/exports', { ...WINDOW, kind: 'spans', format: 'csv', destination: { bucket_id: UNKNOWN_ID } }),
      404,
      'export bucket not found',
    );
    const queued = (await post(key, '/exports', { ...WINDOW, kind: 'spans', format: 'csv' })).json();
    expectDetail(
      await get(key, `/exports/${queued.export_id}/download`),
      409,
      'this export is queued; it can be downloaded once it has completed',
    );
    await runExport(h().ctx, queued.export_id);
  });
});

async function createBucket(token: string, extra: Record<string, unknown> = {}) {
  return post(token, '/export-buckets', {
    project_id: projectId,
    name: `bucket-${Math.random().toString(36).slice(2, 8)}`,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    bucket: s3.bucket,
    prefix: 'sightline/',
    access_key_id: s3.accessKeyId,
    secret_access_key: s3.secretAccessKey,
    force_path_style: true,
    ...extra,
  });
}

describe('exports to a bucket', () => {
  let bucketId: string;
  beforeAll(async () => {
    const res = await createBucket(owner.token);
    expect(res.statusCode, res.body).toBe(201);
    bucketId = res.json().id;
  });

  it('never answers the bucket keys, and stores them sealed', async () => {
    const created = await createBucket(owner.token, {
      access_key_id: 'AKIA-SECRET-ID-1',
      secret_access_key: 'very-secret-key-1',
    });
    expect(created.statusCode, created.body).toBe(201);
    const listed = await get(owner.token, '/export-buckets', { project_id: projectId });
    for (const body of [created.body, listed.body]) {
      expect(body).not.toContain('AKIA-SECRET-ID-1');
      expect(body).not.toContain('very-secret-key-1');
      expect(body).not.toContain('access_key');
    }
    const stored = await h().ctx.pg.pool.query('SELECT * FROM export_buckets WHERE id = $1', [created.json().id]);
    expect(JSON.stringify(stored.rows)).not.toContain('very-secret-key-1');
  });

  it('writes each part as an object under the export’s keys', async () => {
    const res = await post(key, '/exports', {
      ...WINDOW,
      kind: 'spans',
      format: 'jsonl',
      destination: { bucket_id: bucketId },
    });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().export_id as string;
    expect(await runExport(h().ctx, id)).toBe('completed');
    const state = (await get(key, `/exports/${id}`)).json();
    expect(state).toMatchObject({
      status: 'completed',
      rows: 8,
      destination: { bucket_id: bucketId },
      expires_at: null,
    });
    const keys = await s3.keys(`sightline/${id}/`);
    expect(keys).toEqual(state.objects);
    expect(keys[0]).toBe(`sightline/${id}/part-00001.jsonl`);
    const lines = (await Promise.all(keys.map((k) => s3.text(k)))).join('').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).span_id).sort()).toEqual(SPANS.map((s) => s.span_id).sort());
    expectDetail(
      await get(key, `/exports/${id}/download`),
      409,
      'this export was written to a bucket; read its objects there',
    );
  });

  it('a run that died half-way is queued again and goes on without duplicate objects', async () => {
    const res = await post(key, '/exports', {
      ...WINDOW,
      kind: 'spans',
      format: 'parquet',
      destination: { bucket_id: bucketId },
    });
    const id = res.json().export_id as string;
    // The "crash": the run stops after part 2's object is written and before it is counted.
    const crash = new AbortController();
    const first = await runExport(h().ctx, id, {
      signal: crash.signal,
      afterPartWritten: (index) => {
        if (index === 1) crash.abort();
      },
    });
    expect(first).toBe('stopped');
    const half = (await get(key, `/exports/${id}`)).json();
    expect(half).toMatchObject({ status: 'running', objects: [`sightline/${id}/part-00001.parquet`] });
    expect(await s3.keys(`sightline/${id}/`)).toHaveLength(2);
    // While its lease holds, nobody else takes it.
    expect(await runExport(h().ctx, id)).toBe('not-claimed');
    await h().ctx.pg.pool.query(`UPDATE exports SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);
    const queued: string[] = [];
    await sweepExports(h().ctx, async (queuedId) => void queued.push(queuedId));
    expect(queued).toContain(id);
    expect(await runExport(h().ctx, id)).toBe('completed');
    const done = (await get(key, `/exports/${id}`)).json();
    const keys = await s3.keys(`sightline/${id}/`);
    expect(keys).toEqual(done.objects);
    expect(new Set(keys).size).toBe(keys.length);
    const ids: unknown[] = [];
    for (const k of keys) ids.push(...(await parquetRows(Buffer.from(await s3.bytes(k)))).map((r) => r.span_id));
    expect(ids.sort()).toEqual(SPANS.map((s) => s.span_id).sort());
  });

  it('a bucket that refuses the write fails the export with a fixed sentence', async () => {
    const wrong = await createBucket(owner.token, { bucket: 'no-such-bucket' });
    const res = await post(key, '/exports', {
      ...WINDOW,
      kind: 'traces',
      format: 'csv',
      destination: { bucket_id: wrong.json().id },
    });
    const id = res.json().export_id as string;
    expect(await runExport(h().ctx, id)).toBe('failed');
    expect((await get(key, `/exports/${id}`)).json()).toMatchObject({
      status: 'failed',
      error: 'the bucket refused the write (NoSuchBucket)',
    });
  });

  it('schedules export the previous UTC day once', async () => {
    const created = await post(owner.token, '/export-schedules', {
      project_id: projectId,
      kind: 'spans',
      format: 'jsonl',
      bucket_id: bucketId,
      hour_utc: 3,
    });
    expect(created.statusCode, created.body).toBe(201);
    const scheduleId = created.json().id as string;
    const day = TODAY;
    expect(await runDueSchedules(h().ctx, day + 2 * HOUR, { projectIds: [projectId] })).toEqual([]);
    expect(
      (await runDueSchedules(h().ctx, day + 3 * HOUR + 5, { projectIds: [projectId] })).length,
    ).toBeGreaterThanOrEqual(1);
    const exports = (await get(key, '/exports', { limit: '200' })).json().data as {
      export_id: string;
      schedule_id: string | null;
      start_time: string;
      end_time: string;
    }[];
    const fromSchedule = exports.filter((e) => e.schedule_id === scheduleId);
    expect(fromSchedule).toHaveLength(1);
    expect(fromSchedule[0]).toMatchObject({ start_time: iso(TODAY - DAY), end_time: iso(TODAY) });
    expect(await runExport(h().ctx, fromSchedule[0]!.export_id)).toBe('completed');
    expect((await get(key, `/exports/${fromSchedule[0]!.export_id}`)).json().rows).toBe(8);
    // The same day again: nothing new.
    await runDueSchedules(h().ctx, day + 5 * HOUR, { projectIds: [projectId] });
    const again = (await get(key, '/exports', { limit: '200' })).json().data as { schedule_id: string | null }[];
    expect(again.filter((e) => e.schedule_id === scheduleId)).toHaveLength(1);
    expect((await get(owner.token, `/export-schedules/${scheduleId}`, { project_id: projectId })).json()).toMatchObject(
      {
        last_day: iso(TODAY - DAY).slice(0, 10),
      },
    );
    expectDetail(
      await call(h().api, {
        method: 'DELETE',
        url: `${PUBLIC}/export-buckets/${bucketId}`,
        token: owner.token,
        query: { project_id: projectId },
      }),
      409,
      'an export schedule writes to this bucket; delete that schedule first',
    );
    const deleted = await call(h().api, {
      method: 'DELETE',
      url: `${PUBLIC}/export-schedules/${scheduleId}`,
      token: owner.token,
      query: { project_id: projectId },
    });
    expect(deleted.statusCode, deleted.body).toBe(200);
  });
});

describe('isolation and roles', () => {
  it('another project can read, download or delete none of it', async () => {
    const other = await signUp(h(), 'other');
    const otherProject = (await createProject(h(), other.token, other.workspace.id)).id;
    const otherKey = (await createApiKey(h(), other.token, otherProject)).key;
    const state = await exported({ kind: 'spans', format: 'jsonl' });
    const bucket = (await createBucket(owner.token)).json().id as string;
    const schedule = (
      await post(owner.token, '/export-schedules', {
        project_id: projectId,
        kind: 'traces',
        format: 'csv',
        bucket_id: bucket,
        hour_utc: 1,
      })
    ).json().id as string;

    expectDetail(await get(otherKey, `/exports/${state.export_id}`), 404, 'export not found');
    expectDetail(await get(otherKey, `/exports/${state.export_id}/download`), 404, 'export not found');
    expect((await get(otherKey, '/exports')).json().data).toEqual([]);
    const q = { project_id: otherProject };
    expect((await get(other.token, '/export-buckets', q)).json().data).toEqual([]);
    expect((await get(other.token, '/export-schedules', q)).json().data).toEqual([]);
    expectDetail(await get(other.token, `/export-schedules/${schedule}`, q), 404, 'export schedule not found');
    const del = (url: string) =>
      call(h().api, { method: 'DELETE', url: `${PUBLIC}${url}`, token: other.token, query: q });
    expectDetail(await del(`/export-buckets/${bucket}`), 404, 'export bucket not found');
    expectDetail(await del(`/export-schedules/${schedule}`), 404, 'export schedule not found');
    // Nor write to A's bucket.
    expectDetail(
      await post(otherKey, '/exports', { ...WINDOW, kind: 'spans', format: 'csv', destination: { bucket_id: bucket } }),
      404,
      'export bucket not found',
    );
    expectDetail(
      await post(other.token, '/export-schedules', {
        project_id: otherProject,
        kind: 'spans',
        format: 'csv',
        bucket_id: bucket,
        hour_utc: 1,
      }),
      404,
      'export bucket not found',
    );
    // And the user of B can't name A's project.
    expect((await get(other.token, `/exports/${state.export_id}`, { project_id: projectId })).statusCode).toBe(403);
  });

  it('exports need MEMBER; buckets and schedules ADMIN and a user login', async () => {
    const viewer = await memberWithRole(h(), owner, owner.workspace.id, 'VIEWER');
    const member = await memberWithRole(h(), owner, owner.workspace.id, 'MEMBER');
    const body = { ...WINDOW, project_id: projectId, kind: 'spans', format: 'csv' };
    expect((await post(viewer.token, '/exports', body)).statusCode).toBe(403);
    expect((await get(viewer.token, '/exports', { project_id: projectId })).statusCode).toBe(403);
    const byMember = await post(member.token, '/exports', body);
    expect(byMember.statusCode, byMember.body).toBe(202);
    await runExport(h().ctx, byMember.json().export_id);
    expect((await createBucket(member.token)).statusCode).toBe(403);
    expect((await createBucket(key)).statusCode).toBe(403);
    expect((await get(member.token, '/export-buckets', { project_id: projectId })).statusCode).toBe(200);
  });

  it('caps the exports a project runs at once', async () => {
    const capped = await signUp(h(), 'capped');
    const p = (await createProject(h(), capped.token, capped.workspace.id)).id;
    const body = { ...WINDOW, project_id: p, kind: 'spans', format: 'csv' };
    // The harness allows 50; fill them.
    for (let i = 0; i < 50; i++) expect((await post(capped.token, '/exports', body)).statusCode).toBe(202);
    const over = await post(capped.token, '/exports', body);
    expectDetail(over, 429, 'a project runs at most 50 exports at a time; try again when one of them has finished');
    expect(over.headers['retry-after']).toBe('30');
  });
});

describe('chunks of a part', () => {
  it('groups consecutive minutes up to the chunk size, the ends open, a busy minute alone', () => {
    expect(planChunks([], 10)).toEqual([{}]);
    expect(planChunks([{ minute: 60, rows: 4 }], 10)).toEqual([{}]);
    expect(
      planChunks(
        [
          { minute: 60, rows: 4 },
          { minute: 120, rows: 6 },
          { minute: 180, rows: 25 },
          { minute: 240, rows: 0 },
          { minute: 300, rows: 3 },
        ],
        10,
      ),
    ).toEqual([{ to: 180 }, { from: 180, to: 300 }, { from: 300 }]);
  });
});
