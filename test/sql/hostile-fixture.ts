import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { beforeAll, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { call, projectWithKey, PUBLIC, type Harness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';

/**
 * Shared set-up and verdicts of the hostile public-SQL corpus (hostile-corpus*.test.ts).
 *
 * Two projects, A and B, each with traces, spans and findings whose ids, users, names, metadata and
 * payloads carry the project's marker. Every hostile query is sent with A's key and must either be
 * refused (400 `{detail}` that leaks nothing) or answer 200 with A's data only. Never a 500.
 */

const hex = () => crypto.randomBytes(4).toString('hex');
export const MA = `Amk${hex()}`;
export const MB = `Bmk${hex()}`;
export const BULK_SPANS = 400; // A's bulk trace: enough spans that a 4-way cartesian product is ~2.6e10 rows.

export type World = {
  a: Awaited<ReturnType<typeof projectWithKey>>;
  b: Awaited<ReturnType<typeof projectWithKey>>;
  aTraces: number;
  aSpans: number;
  aFindings: number;
  /** A's rows of `evaluation_results` (B has one, marked like its other data). */
  aResults: number;
  bFinding: {
    signal_id: string;
    detector_id: string;
    finding_id: string;
    trace_id: string;
    span_id: string;
    trace_start_time: string;
    found_at: string;
    summary: string;
  };
  tablesBefore: string[];
  /** Exact cell values a 200 answer must never hold (server state). */
  serverValues: string[];
  /** Names of system and physical tables outside the contract: a cell holding one read the catalog. */
  serverNames: string[];
};

export type Answer = {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
};

export type Case = {
  /** The query; `{A_PROJECT}` and `{B_PROJECT}` become the projects' ids. */
  q: string;
  name?: string;
  /** A 200 is acceptable when confined to A's data; otherwise a 200 is itself the leak. */
  ok?: boolean;
  /** Extra checks of a 200 answer. */
  check?: (body: Answer, w: World) => void;
  /** Error-oracle probe: must answer 200 with this many rows counted (a 400 proves other projects' rows were evaluated). */
  oracle?: (w: World) => number;
  /** Resource exhaustion: must be refused (400) and return within the test timeout. */
  heavy?: boolean;
};

function spansOf(marker: string, session: string, n: string, bulk: number) {
  const t0 = Date.now() - 30 * 60_000;
  const spans: Record<string, unknown>[] = [];
  for (let t = 1; t <= 3; t++) {
    const trace_id = `${marker}-t${t}`;
    spans.push({
      trace_id,
      span_id: `${marker}-root${t}`,
      name: `${marker}-agent`,
      kind: 'agent',
      start_time: iso(t0 + t * 1000),
      end_time: iso(t0 + t * 1000 + 900),
      user_id: `${marker}-user`,
      session_id: session,
      metadata: { owner: marker, n },
      input: { secret: `${marker}-input` },
      output: `${marker}-output`,
      cost: 0.5,
    });
    for (let c = 1; c <= 3; c++) {
      spans.push({
        trace_id,
        span_id: `${marker}-c${t}-${c}`,
        parent_span_id: `${marker}-root${t}`,
        name: `${marker}-llm`,
        kind: 'llm',
        start_time: iso(t0 + t * 1000 + c * 10),
        end_time: iso(t0 + t * 1000 + c * 10 + 5),
        model_name: `${marker}-model`,
        user_id: `${marker}-user`,
        session_id: session,
        metadata: { owner: marker, n },
        status: c === 3 ? 'error' : 'ok',
        error_type: c === 3 ? `${marker}-Err` : undefined,
        error_message: c === 3 ? `${marker}-boom` : undefined,
        cost: 0.1,
      });
    }
  }
  for (let i = 0; i < bulk; i++) {
    spans.push({
      trace_id: `${marker}-bulk`,
      span_id: `${marker}-b${i}`,
      parent_span_id: i === 0 ? undefined : `${marker}-b0`,
      name: `${marker}-bulk`,
      start_time: iso(t0 + 60_000 + i),
      user_id: `${marker}-user`,
      session_id: session,
      metadata: { owner: marker, n },
    });
  }
  return spans;
}

/** Registers the two projects and their data; returns a getter of the world. */
export function useWorld(h: () => Harness): () => World {
  let world: World | undefined;
  beforeAll(async () => {
    const a = await projectWithKey(h(), 'alice');
    const b = await projectWithKey(h(), 'bob');
    // A's session ids and metadata `n` parse as integers; B's never do (error-oracle probes rely on it).
    const aSpans = spansOf(MA, '4242', '1', BULK_SPANS);
    const bSpans = spansOf(MB, `${MB}-session`, MB, 20);
    await ingestSpans(h(), a.key.key, aSpans);
    await ingestSpans(h(), b.key.key, bSpans);
    const ch = h().ctx.ch.client;
    const db = h().ctx.ch.database;
    const when = '2026-01-02 03:04:05.000';
    const finding = (project: string, marker: string, i: number) => ({
      project_id: project,
      signal_id: `${marker}-sig`,
      detector_id: `${marker}-det`,
      finding_id: `${marker}-f${i}`,
      trace_id: `${marker}-t${i}`,
      span_id: `${marker}-root${i}`,
      trace_start_time: when,
      found_at: when,
      summary: `${marker}-finding`,
    });
    await ch.insert({
      table: `${db}.findings`,
      values: [finding(a.project.id, MA, 1), finding(a.project.id, MA, 2), finding(b.project.id, MB, 1)],
      format: 'JSONEachRow',
    });
    // Evaluation results: A's scores are integers and A has no `Bmk` values, like the rest of its data.
    const result = (project: string, marker: string, i: number) => ({
      project_id: project,
      evaluation_run_id: `${marker}-run`,
      evaluation_id: `${marker}-eval`,
      dataset_version_id: `${marker}-ver`,
      test_case_id: `${marker}-case${i}`,
      trace_id: `${marker}-t${i}`,
      output: `${marker}-output`,
      error: null,
      scores: { [`${marker}-acc`]: i },
      metrics: { latency: 100 * i },
      passed: 1,
      revision: 1,
    });
    await ch.insert({
      table: `${db}.evaluation_results`,
      values: [result(a.project.id, MA, 1), result(a.project.id, MA, 2), result(b.project.id, MB, 1)],
      format: 'JSONEachRow',
    });
    // Background merges put several projects' rows in one part and one granule in production; do it
    // now, so the scoped reads face what they face there (rows of B beside rows of A).
    for (const t of ['spans', 'traces', 'findings', 'evaluation_results'])
      await ch.command({ query: `OPTIMIZE TABLE ${db}.${t} FINAL` });
    const tables = await (
      await ch.query({
        query:
          "SELECT database || '.' || name AS t FROM system.tables WHERE database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') ORDER BY t",
        format: 'JSONEachRow',
      })
    ).json<{ t: string }>();
    const catalog = await (
      await ch.query({
        query: `SELECT name FROM system.tables WHERE (database = 'system' AND length(name) >= 8 AND position(name, '_') > 0) OR (database = '${db}' AND name NOT IN ('spans', 'traces', 'findings', 'evaluation_results'))`,
        format: 'JSONEachRow',
      })
    ).json<{ name: string }>();
    const state = await (
      await ch.query({
        query: 'SELECT version() AS v, hostName() AS hn, toString(serverUUID()) AS u',
        format: 'JSONEachRow',
      })
    ).json<{ v: string; hn: string; u: string }>();
    world = {
      a,
      b,
      aTraces: 4,
      aSpans: aSpans.length,
      aFindings: 2,
      aResults: 2,
      bFinding: { ...finding(b.project.id, MB, 1) },
      tablesBefore: tables.map((r) => r.t),
      serverNames: catalog.map((r) => r.name),
      serverValues: [state[0]!.v, state[0]!.hn, state[0]!.u, os.hostname()].filter(
        (v) => v && v !== '00000000-0000-0000-0000-000000000000',
      ),
    };
  });
  return () => {
    if (!world) throw new Error('world not ready');
    return world;
  };
}

export function sql(
  h: Harness,
  token: string,
  query: string,
  extra: Record<string, unknown> = {},
): Promise<LightMyRequestResponse> {
  return call(h.api, { method: 'POST', url: `${PUBLIC}/sql`, token, payload: { query, ...extra } });
}

const STACK = /\n\s+at\s|\bat\s+\S+\s+\(.*:\d+:\d+\)|Stack trace|node_modules/;

/** Substrings no 400 detail may hold, unless the caller's own query already did. */
function detailForbidden(w: World): (string | RegExp)[] {
  return [
    MB,
    w.b.project.id,
    w.b.key.key,
    w.a.key.key,
    'DB::Exception',
    '/work',
    '/tmp',
    os.tmpdir(),
    'default.',
    'sightline.',
    '__sl',
    /__table\d/,
    /\bp_[a-z_]+/,
    'MergeTree',
    'project_id',
    'FINAL',
    'metadata_pairs',
    'trace_start_hour',
    'ttl_days',
    'ingested_at',
    'finalizeAggregation',
    ...w.serverValues.filter((v) => v.length >= 6),
  ];
}

/** Substrings no cell of a 200 answer may hold, unless the caller's own query already did. */
function cellForbidden(w: World): string[] {
  return [
    MB,
    w.b.project.id,
    w.a.project.id,
    w.b.key.key,
    w.a.key.key,
    'DB::Exception',
    os.tmpdir(),
    '/work/',
    'root:x:0:0',
    'MergeTree',
    '__sl',
    'CREATE TABLE',
  ];
}

function hits(text: string, pattern: string | RegExp): boolean {
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

export function verdict(c: Case, w: World, res: LightMyRequestResponse): void {
  const qn = c.q.replace(/["`]/g, '').toLowerCase();
  const echoed = (p: string | RegExp) =>
    typeof p === 'string' ? qn.includes(p.toLowerCase()) : p.test(c.q) || p.test(qn);
  const label = `query ${JSON.stringify(c.q.length > 300 ? `${c.q.slice(0, 300)}…` : c.q)}`;
  expect(
    res.statusCode,
    `${label}: must never be a ${res.statusCode}; body ${res.body.slice(0, 500)}`,
  ).not.toBeGreaterThanOrEqual(500);
  if (c.oracle) {
    expect(
      res.statusCode,
      `ERROR ORACLE ${label}: A's rows all evaluate fine, so a ${res.statusCode} means other projects' rows were evaluated; body ${res.body.slice(0, 500)}`,
    ).toBe(200);
  }
  if (c.heavy)
    expect(
      res.statusCode,
      `EXHAUSTION ${label}: must be refused within the time limit; body ${res.body.slice(0, 300)}`,
    ).toBe(400);
  if (res.statusCode === 422 && (c.q.trim() === '' || c.q.length > 100_000)) {
    // An empty query or one over the documented length limit fails the body schema: 422 (validation envelope); it must leak nothing either.
    expect(Array.isArray(res.json().detail), label).toBe(true);
    for (const p of [MB, 'DB::Exception', '/work', '__sl'])
      expect(res.body.includes(p), `LEAK IN 422 ${label}: ${String(p)}`).toBe(false);
    return;
  }
  expect([200, 400], `${label}: answered ${res.statusCode} ${res.body.slice(0, 500)}`).toContain(res.statusCode);
  if (res.statusCode === 400) {
    const body = res.json();
    expect(Object.keys(body), `${label}: 400 body must be exactly {detail}`).toEqual(['detail']);
    expect(typeof body.detail, label).toBe('string');
    expect(body.detail.length, `${label}: empty detail`).toBeGreaterThan(0);
    expect(STACK.test(body.detail), `${label}: stack trace in detail: ${body.detail}`).toBe(false);
    for (const p of detailForbidden(w)) {
      if (echoed(p)) continue;
      expect(
        hits(body.detail, p),
        `LEAK IN DETAIL ${label}: detail holds ${String(p)}: ${body.detail.slice(0, 600)}`,
      ).toBe(false);
    }
    return;
  }
  expect(c.ok || !!c.oracle, `LEAK (accepted) ${label}: answered 200 ${res.body.slice(0, 400)}`).toBe(true);
  const body = res.json() as Answer;
  expect(Object.keys(body).sort(), label).toEqual(['columns', 'elapsed_ms', 'row_count', 'rows', 'truncated']);
  expect(body.row_count, label).toBe(body.rows.length);
  expect(body.rows.length, label).toBeLessThanOrEqual(10_000);
  for (const col of body.columns) {
    expect(Object.keys(col).sort(), label).toEqual(['name', 'type']);
    if (!hits(c.q, '__sl')) expect(col.name.startsWith('__sl'), `${label}: internal column ${col.name}`).toBe(false);
  }
  const forbidden = cellForbidden(w).filter((p) => !echoed(p));
  for (const row of body.rows) {
    expect(row.length, label).toBe(body.columns.length);
    for (const cell of row) {
      const text = typeof cell === 'string' ? cell : (JSON.stringify(cell) ?? '');
      for (const p of forbidden)
        expect(text.includes(p), `LEAK IN ROWS ${label}: a cell holds ${p}: ${text.slice(0, 300)}`).toBe(false);
      for (const v of w.serverValues) expect(text === v, `LEAK IN ROWS ${label}: server state ${v}`).toBe(false);
      for (const v of w.serverNames)
        if (!echoed(v)) expect(text === v, `LEAK IN ROWS ${label}: catalog name ${v}`).toBe(false);
    }
  }
  if (c.oracle) expect(Number(body.rows[0]?.[0]), `${label}: count`).toBe(c.oracle(w));
  c.check?.(body, w);
}

/** One vitest case per corpus entry. */
export function corpus(h: () => Harness, w: () => World, cases: Case[]): void {
  for (const c of cases) {
    const title = c.name ?? (c.q.length > 110 ? `${c.q.slice(0, 110)}…` : c.q);
    it(
      title.replace(/[\u0000-\u001f]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`),
      { timeout: 60_000 },
      async () => {
        const q = c.q.replaceAll('{A_PROJECT}', w().a.project.id).replaceAll('{B_PROJECT}', w().b.project.id);
        const res = await sql(h(), w().a.key.key, q);
        // A query that failed while running leaves its partial output on the embedded connection, where
        // the next query's answer picks it up (pinned on its own in hostile-corpus-2.test.ts); drain it
        // so every corpus case is judged on its own answer.
        if (res.statusCode === 400 && /^query (failed|exceeded)/.test(String(res.json().detail)))
          await sql(h(), w().a.key.key, 'SELECT 1');
        verdict({ ...c, q }, w(), res);
      },
    );
  }
}

/** Both projects' data is intact, no table appeared or vanished, no file was written. */
export async function integrity(h: Harness, w: World, files: string[] = []): Promise<void> {
  const ch = h.ctx.ch.client;
  const db = h.ctx.ch.database;
  const count = async (q: string, project: string) =>
    Number(
      (
        await (await ch.query({ query: q, format: 'JSONEachRow', query_params: { p: project } })).json<{ n: string }>()
      )[0]!.n,
    );
  expect(await count(`SELECT count() AS n FROM ${db}.spans WHERE project_id = {p:String}`, w.a.project.id)).toBe(
    w.aSpans,
  );
  expect(await count(`SELECT count() AS n FROM ${db}.spans WHERE project_id = {p:String}`, w.b.project.id)).toBe(
    3 * 4 + 20,
  );
  expect(
    await count(`SELECT count() AS n FROM ${db}.findings FINAL WHERE project_id = {p:String}`, w.a.project.id),
  ).toBe(w.aFindings);
  expect(
    await count(
      `SELECT count() AS n FROM ${db}.evaluation_results FINAL WHERE project_id = {p:String}`,
      w.b.project.id,
    ),
  ).toBe(1);
  const tables = await (
    await ch.query({
      query:
        "SELECT database || '.' || name AS t FROM system.tables WHERE database NOT IN ('system', 'INFORMATION_SCHEMA', 'information_schema') ORDER BY t",
      format: 'JSONEachRow',
    })
  ).json<{ t: string }>();
  expect(tables.map((r) => r.t)).toEqual(w.tablesBefore);
  for (const f of files) expect(fs.existsSync(f), `file written by the query: ${f}`).toBe(false);
  // The A key still works and still sees only A.
  const res = await sql(h, w.a.key.key, 'SELECT count() FROM spans');
  expect(res.statusCode, res.body).toBe(200);
  expect(Number(res.json().rows[0][0])).toBe(w.aSpans);
}

export const OUTFILE = `/tmp/sightline-outfile-${hex()}.csv`;
export const OUTFILE_REL = `sightline-outfile-${hex()}.csv`;
