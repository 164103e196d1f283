import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';
import { evaluatorScoreId, isSampled } from '../../src/evaluators/identity.js';
import { runEvaluatorTick } from '../../src/evaluators/runtime.js';
import { EXECUTION_ERRORS, PAUSED_SENTENCE, runExecution } from '../../src/evaluators/execution.js';
import { DISABLED_SENTENCE } from '../../src/evaluators/service.js';
import { JUDGE_ANSWER_ERRORS } from '../../src/evaluators/judgement.js';
import { runWatchdog } from '../../src/evaluators/watchdog.js';

/**
 * The online evaluator runtime end to end (docs/evaluators.md, "How traces are scored"): traces
 * ingested over HTTP, the worker's tick and executions called directly (the queue's own path is in
 * runtime-queue.test.ts), a fake OpenAI-compatible judge on loopback answering as scripted.
 */

const h = useHarness({
  LLM_CONNECTION_ALLOW_PRIVATE: 'true',
  LLM_CONNECTION_TIMEOUT_MS: '400',
  EVALUATOR_RETRY_BACKOFF_MS: '0',
  EVALUATOR_CONCURRENCY_PER_PROJECT: '2',
});

type Project = Awaited<ReturnType<typeof projectWithKey>>;
let judge: FakeJudge;
let a: Project;
let b: Project;
let connA: string;

const rand = () => crypto.randomBytes(4).toString('hex');

beforeAll(async () => {
  judge = await startFakeJudge();
  a = await projectWithKey(h(), 'runtime-a');
  b = await projectWithKey(h(), 'runtime-b');
  connA = await connection(a);
});
afterAll(() => judge?.close());

async function connection(p: Project): Promise<string> {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/llm-connections`,
    token: p.owner.token,
    payload: {
      project_id: p.project.id,
      name: `fake-${rand()}`,
      provider: 'openai_compatible',
      base_url: judge.baseUrl,
      api_key: 'sk-fake-key-0000',
      default_model: 'gpt-4o-mini',
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

const judgeScorer = (connectionId: string, over: Record<string, unknown> = {}) => ({
  type: 'llm_judge',
  connection_id: connectionId,
  prompt: 'Question: {{Q}}\nAnswer: {{A}}',
  variables: { Q: 'input', A: 'output' },
  output: { data_type: 'numeric', min_value: 0, max_value: 1 },
  ...over,
});

async function createEvaluator(p: Project, over: Record<string, unknown> = {}, connectionId = connA) {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/evaluators`,
    token: p.key.key,
    payload: {
      name: `e-${rand()}`,
      target: 'trace',
      delay_seconds: 0,
      scorer: judgeScorer(connectionId),
      score_name: 'helpfulness',
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; version: number };
}

/** One trace of two spans (root and an llm call); `meta` on the root. */
function trace(traceId: string, meta: Record<string, string> = {}, t = Date.now() - 5_000) {
  return [
    {
      trace_id: traceId,
      span_id: 'root',
      name: 'support-agent',
      start_time: iso(t),
      end_time: iso(t + 900),
      input: 'How do I reset my password?',
      output: 'Click "Forgot password".',
      metadata: meta,
    },
    {
      trace_id: traceId,
      span_id: 'llm-1',
      parent_span_id: 'root',
      name: 'chat',
      kind: 'llm',
      model_name: 'gpt-4o',
      start_time: iso(t + 10),
      end_time: iso(t + 800),
      input: 'reset password?',
      output: '{"steps": 2}',
    },
  ];
}

/**
 * A tick of the worker for these projects (and only the evaluator `only` when given: tests share
 * project A), `aheadMs` past the real clock; answers the new executions.
 */
async function tick(projects: Project[], aheadMs = 0, only?: { id: string }): Promise<string[]> {
  const { created } = await runEvaluatorTick(h().ctx, {
    projectIds: projects.map((p) => p.project.id),
    ...(only ? { evaluatorIds: [only.id] } : {}),
    now: Date.now() + aheadMs,
    enqueue: async () => {},
    watchdog: false,
    latenessMs: 0,
  });
  return created;
}

const runAll = (ids: string[], options = {}) => Promise.all(ids.map((id) => runExecution(h().ctx, id, options)));

type Execution = {
  execution_id: string;
  trace_id: string;
  span_id: string | null;
  status: string;
  error: string | null;
  score_id: string | null;
  attempts: number;
  judge_model: string | null;
  judge_trace_id: string | null;
  evaluator_version: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  finished_at: string | null;
};

async function executions(p: Project, evaluatorId: string, status?: string): Promise<Execution[]> {
  const res = await call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/evaluators/${evaluatorId}/executions`,
    token: p.key.key,
    query: { limit: '200', ...(status ? { status } : {}) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Execution[];
}

async function scoresOf(p: Project, evaluatorId: string) {
  const res = await call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/scores`,
    token: p.key.key,
    query: { evaluator_id: evaluatorId, limit: '200' },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Record<string, unknown>[];
}

describe('an LLM judge on production traces', () => {
  it('enrols matching traces after their delay, scores them with reasoning, and records the execution', async () => {
    const ev = await createEvaluator(a, {
      filters: [{ field: 'metadata', key: 'tenant', op: 'eq', value: 'acme' }],
    });
    const acme = `tr-acme-${rand()}`;
    const other = `tr-other-${rand()}`;
    await ingestSpans(h(), a.key.key, [...trace(acme, { tenant: 'acme' }), ...trace(other, { tenant: 'globex' })]);
    judge.script({ kind: 'judgement', score: 0.8, reasoning: 'Short and right.', inputTokens: 200, outputTokens: 20 });
    const created = await tick([a], 0, ev);
    expect(created).toHaveLength(1);
    await runAll(created);

    const [x] = await executions(a, ev.id);
    expect(x).toMatchObject({
      trace_id: acme,
      span_id: null,
      status: 'completed',
      error: null,
      attempts: 1,
      judge_model: 'gpt-4o-mini',
      input_tokens: 200,
      output_tokens: 20,
      evaluator_version: 1,
      score_id: evaluatorScoreId(ev.id, acme, null),
    });
    expect(x!.cost).toBeGreaterThan(0);
    expect(x!.finished_at).not.toBeNull();

    const [score] = await scoresOf(a, ev.id);
    expect(score).toMatchObject({
      score_id: evaluatorScoreId(ev.id, acme, null),
      trace_id: acme,
      name: 'helpfulness',
      value: 0.8,
      comment: 'Short and right.',
      source: 'evaluator',
      evaluator_id: ev.id,
      execution_id: x!.execution_id,
      evaluator_version: 1,
    });
    // The prompt was filled from the trace.
    const sent = judge.requests.at(-1)!.body as { messages: { content: string }[] };
    expect(sent.messages[0]!.content).toBe('Question: How do I reset my password?\nAnswer: Click "Forgot password".');

    // Nothing more to do: the same traces are never enrolled twice.
    expect(await tick([a], 60_000, ev)).toEqual([]);

    // The stats count it.
    const got = await call(h().api, { method: 'GET', url: `${PUBLIC}/evaluators/${ev.id}`, token: a.key.key });
    expect(got.json().stats.all_time).toMatchObject({
      executions: 1,
      completed: 1,
      input_tokens: 200,
      output_tokens: 20,
    });
    expect(got.json().stats.last_24h.cost).toBeCloseTo(x!.cost, 9);
  });

  it("keeps the judge's call as a trace of the project, left out of lists and never evaluated", async () => {
    const ev = await createEvaluator(a);
    const id = `tr-judged-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(id));
    await runAll(await tick([a], 0, ev));
    const [x] = (await executions(a, ev.id)).filter((e) => e.trace_id === id);
    expect(x!.status).toBe('completed');
    expect(x!.judge_trace_id).toBeTruthy();

    const detail = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/traces/${x!.judge_trace_id}`,
      token: a.key.key,
    });
    expect(detail.statusCode, detail.body).toBe(200);
    const span = detail.json().spans[0];
    expect(span).toMatchObject({ kind: 'llm', model_name: 'gpt-4o-mini', environment: 'sightline-evaluator' });
    expect(span.metadata).toMatchObject({ evaluator_id: ev.id, execution_id: x!.execution_id, scored_trace_id: id });
    expect(span.cost).toBeGreaterThan(0);

    const ids = async (query: Record<string, string>) =>
      (
        await call(h().api, {
          method: 'GET',
          url: `${PUBLIC}/traces`,
          token: a.key.key,
          query: { limit: '200', ...query },
        })
      )
        .json()
        .data.map((t: { trace_id: string }) => t.trace_id);
    expect(await ids({})).toContain(id);
    expect(await ids({})).not.toContain(x!.judge_trace_id);
    const filters = JSON.stringify([{ field: 'environment', op: 'in', value: ['sightline-evaluator'] }]);
    expect(await ids({ filters })).toContain(x!.judge_trace_id);

    // The judge trace arrived after the evaluator's watermark; it is still never enrolled.
    const later = await tick([a], 60_000, ev);
    const enrolled = await h().ctx.pg.pool.query('SELECT 1 FROM evaluator_executions WHERE trace_id = $1', [
      x!.judge_trace_id,
    ]);
    expect(later).toEqual([]);
    expect(enrolled.rowCount).toBe(0);
  });

  it('retries 429 (honouring Retry-After), 5xx and time-outs, then errors with a fixed sentence', async () => {
    const ev = await createEvaluator(a);
    const ok = `tr-retry-ok-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(ok));
    const [first] = await tick([a], 0, ev);
    judge.script(
      { kind: 'status', status: 429, retryAfter: '3' },
      { kind: 'status', status: 500 },
      { kind: 'hang' },
      { kind: 'judgement', score: 1, reasoning: 'fine' },
    );
    const waits: number[] = [];
    await runExecution(h().ctx, first!, { sleep: async (ms: number) => void waits.push(ms) });
    judge.release();
    let [x] = await executions(a, ev.id);
    expect(x).toMatchObject({ status: 'completed', attempts: 4 });
    // Retry-After of the 429 (3 s), then the backoff (0 in this harness) twice.
    expect(waits).toEqual([3000, 0, 0]);

    const bad = `tr-retry-bad-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(bad));
    const [second] = await tick([a], 0, ev);
    judge.script(...Array.from({ length: 4 }, () => ({ kind: 'status' as const, status: 503 })));
    await runExecution(h().ctx, second!, { sleep: async () => {} });
    [x] = (await executions(a, ev.id)).filter((e) => e.trace_id === bad);
    expect(x).toMatchObject({ status: 'error', attempts: 4, score_id: null });
    expect(x!.error).toBe(`${EXECUTION_ERRORS.retriesExhausted}; last: HTTP 503: the provider had an internal error`);
    expect(x!.error).not.toContain('secret provider detail');
    expect((await scoresOf(a, ev.id)).map((s) => s.trace_id)).toEqual([ok]);
  });

  it('gives malformed JSON and an out-of-range score an error, without retrying', async () => {
    const ev = await createEvaluator(a);
    const t1 = `tr-malformed-${rand()}`;
    const t2 = `tr-range-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(t1));
    const [e1] = await tick([a], 0, ev);
    judge.script({ kind: 'malformed' });
    await runExecution(h().ctx, e1!);
    await ingestSpans(h(), a.key.key, trace(t2));
    const [e2] = await tick([a], 0, ev);
    judge.script({ kind: 'judgement', score: 7, reasoning: 'off the scale' });
    await runExecution(h().ctx, e2!);
    const byTrace = new Map((await executions(a, ev.id)).map((e) => [e.trace_id, e]));
    expect(byTrace.get(t1)).toMatchObject({ status: 'error', attempts: 1, error: 'the judge did not answer in JSON' });
    expect(byTrace.get(t2)).toMatchObject({ status: 'error', attempts: 1, error: JUDGE_ANSWER_ERRORS.range });
    // The call happened: its tokens are counted even without a score.
    expect(byTrace.get(t2)!.input_tokens).toBeGreaterThan(0);
    expect(await scoresOf(a, ev.id)).toEqual([]);
  });

  it('a late span restarts the wait once, and never makes a second score', async () => {
    const ev = await createEvaluator(a, { delay_seconds: 30 });
    const id = `tr-late-${rand()}`;
    const [root, llm] = trace(id);
    await ingestSpans(h(), a.key.key, [root]);
    const firstStored = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await ingestSpans(h(), a.key.key, [llm]);
    // Past the first span's wait, inside the second's: not yet.
    expect(await tick([a], firstStored + 30_500 - Date.now(), ev)).toEqual([]);
    // Past the second span's wait.
    const created = await tick([a], 31_000, ev);
    expect(created).toHaveLength(1);
    await runAll(created);
    // A span arriving after the score: no second execution, no second score.
    await ingestSpans(h(), a.key.key, [{ ...llm, span_id: 'llm-late' }]);
    expect(await tick([a], 120_000, ev)).toEqual([]);
    expect(await executions(a, ev.id)).toHaveLength(1);
    expect(await scoresOf(a, ev.id)).toHaveLength(1);
  });
});

describe('sampling, targets and checks', () => {
  it('enrols exactly the traces the sampling hash lets in', async () => {
    const ev = await createEvaluator(a, {
      sampling_rate: 0.3,
      scorer: { type: 'check', check: 'contains', params: { text: 'Forgot' } },
      score_name: 'mentions-forgot',
    });
    const ids = Array.from({ length: 40 }, (_, i) => `tr-sample-${i}-${rand()}`);
    await ingestSpans(
      h(),
      a.key.key,
      ids.flatMap((id) => trace(id)),
    );
    await runAll(await tick([a], 0, ev));
    const expected = ids.filter((id) => isSampled(id, ev.id, 0.3)).sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(ids.length);
    const got = await executions(a, ev.id);
    expect(got.map((e) => e.trace_id).sort()).toEqual(expected);
    // A check needs no model: completed, a boolean score, no judge.
    expect(got.every((e) => e.status === 'completed' && e.judge_model === null && e.judge_trace_id === null)).toBe(
      true,
    );
    const scores = await scoresOf(a, ev.id);
    expect(scores).toHaveLength(expected.length);
    expect(scores.every((s) => s.data_type === 'boolean' && s.value === 1)).toBe(true);
  });

  it('target span scores each span its span_filter lets through, on its own', async () => {
    const ev = await createEvaluator(a, {
      target: 'span',
      span_filter: { kind: ['llm'] },
      scorer: { type: 'check', check: 'json_valid', params: {} },
      score_name: 'json-ok',
    });
    const id = `tr-spans-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(id));
    await runAll(await tick([a], 0, ev));
    const got = await executions(a, ev.id);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ trace_id: id, span_id: 'llm-1', status: 'completed' });
    const [score] = await scoresOf(a, ev.id);
    expect(score).toMatchObject({ span_id: 'llm-1', value: 1, score_id: evaluatorScoreId(ev.id, id, 'llm-1') });
  });
});

describe('caps', () => {
  it('runs at most EVALUATOR_CONCURRENCY_PER_PROJECT judge calls of a project at once', async () => {
    const ev = await createEvaluator(a);
    const ids = Array.from({ length: 6 }, (_, i) => `tr-conc-${i}-${rand()}`);
    await ingestSpans(
      h(),
      a.key.key,
      ids.flatMap((id) => trace(id)),
    );
    const created = await tick([a], 0, ev);
    judge.maxInFlight = 0;
    judge.delayMs = 150;
    try {
      await runAll(created);
    } finally {
      judge.delayMs = 0;
    }
    expect(judge.maxInFlight).toBeLessThanOrEqual(2);
    expect((await executions(a, ev.id)).map((e) => e.status)).toEqual(Array(6).fill('completed'));
    const slots = await h().ctx.pg.pool.query('SELECT 1 FROM evaluator_call_slots WHERE project_id = $1', [
      a.project.id,
    ]);
    expect(slots.rowCount).toBe(0);
  });
});

describe('stopping', () => {
  it('disabling an evaluator skips its pending executions; deleting removes them', async () => {
    const ev = await createEvaluator(a);
    const id = `tr-stop-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(id));
    const [pending] = await tick([a], 0, ev);
    const patched = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/evaluators/${ev.id}`,
      token: a.key.key,
      payload: { enabled: false },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const asked = judge.requests.length;
    await runExecution(h().ctx, pending!);
    expect(judge.requests.length).toBe(asked);
    expect(await executions(a, ev.id)).toMatchObject([{ status: 'skipped', error: DISABLED_SENTENCE }]);

    // Enabled again it does not go back over what arrived while it was off.
    await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/evaluators/${ev.id}`,
      token: a.key.key,
      payload: { enabled: true },
    });
    expect(await tick([a], 60_000, ev)).toEqual([]);

    const ev2 = await createEvaluator(a);
    await ingestSpans(h(), a.key.key, trace(`tr-stop2-${rand()}`));
    const [queued] = await tick([a], 0, ev2);
    const del = await call(h().api, { method: 'DELETE', url: `${PUBLIC}/evaluators/${ev2.id}`, token: a.key.key });
    expect(del.statusCode).toBe(200);
    await runExecution(h().ctx, queued!);
    const left = await h().ctx.pg.pool.query('SELECT 1 FROM evaluator_executions WHERE evaluator_id = $1', [ev2.id]);
    expect(left.rowCount).toBe(0);
  });

  it('pauses itself on a 401, says why, and raises a signal the project sees', async () => {
    const p = await projectWithKey(h(), 'pause');
    const conn = await connection(p);
    const ev = await createEvaluator(p, {}, conn);
    await ingestSpans(
      h(),
      p.key.key,
      [`tr-p1-${rand()}`, `tr-p2-${rand()}`].flatMap((id) => trace(id)),
    );
    const created = await tick([p]);
    expect(created).toHaveLength(2);
    judge.script({ kind: 'status', status: 401, message: 'secret provider detail' });
    await runExecution(h().ctx, created[0]!);
    await runExecution(h().ctx, created[1]!);
    const got = (await call(h().api, { method: 'GET', url: `${PUBLIC}/evaluators/${ev.id}`, token: p.key.key })).json();
    expect(got.enabled).toBe(false);
    expect(got.paused_reason).toBe(`${PAUSED_SENTENCE} (HTTP 401: the provider refused the API key)`);
    const statuses = (await executions(p, ev.id)).map((e) => e.status).sort();
    expect(statuses).toEqual(['error', 'skipped']);
    const signals = await call(h().api, { method: 'GET', url: `${PUBLIC}/signals`, token: p.key.key });
    expect(signals.statusCode, signals.body).toBe(200);
    const titles = signals.json().data.map((s: { title: string }) => s.title);
    expect(titles).toContain(`Evaluator "${got.name}" paused: HTTP 401: the provider refused the API key`);
    expect(JSON.stringify(signals.json())).not.toContain('secret provider detail');
  });
});

describe('watchdog', () => {
  it('raises one signal when most executions of the hour fail, and clears it on recovery', async () => {
    const p = await projectWithKey(h(), 'watchdog');
    const conn = await connection(p);
    const ev = await createEvaluator(p, {}, conn);
    const ids = Array.from({ length: 3 }, (_, i) => `tr-wd-${i}-${rand()}`);
    await ingestSpans(
      h(),
      p.key.key,
      ids.flatMap((id) => trace(id)),
    );
    judge.script(...Array.from({ length: 12 }, () => ({ kind: 'status' as const, status: 500 })));
    for (const x of await tick([p])) await runExecution(h().ctx, x, { sleep: async () => {} });
    expect(await runWatchdog(h().ctx, { projectIds: [p.project.id], force: true })).toEqual({
      raised: [ev.id],
      cleared: [],
    });
    // Raised once.
    expect(await runWatchdog(h().ctx, { projectIds: [p.project.id], force: true })).toEqual({
      raised: [],
      cleared: [],
    });
    const open = async () =>
      (await call(h().api, { method: 'GET', url: `${PUBLIC}/signals`, token: p.key.key, query: { status: 'open' } }))
        .json()
        .data.filter((s: { title: string }) => s.title.startsWith(`Evaluator "`)).length;
    expect(await open()).toBe(1);

    const more = Array.from({ length: 4 }, (_, i) => `tr-wd-ok-${i}-${rand()}`);
    await ingestSpans(
      h(),
      p.key.key,
      more.flatMap((id) => trace(id)),
    );
    await runAll(await tick([p]));
    expect(await runWatchdog(h().ctx, { projectIds: [p.project.id], force: true })).toEqual({
      raised: [],
      cleared: [ev.id],
    });
    expect(await open()).toBe(0);
  });
});

describe('backfill', () => {
  it('scores a past window with progress, one at a time per evaluator', async () => {
    const p = await projectWithKey(h(), 'backfill');
    const conn = await connection(p);
    const t0 = Date.now() - 3 * 3_600_000;
    const old = Array.from({ length: 5 }, (_, i) => `tr-bf-${i}-${rand()}`);
    await ingestSpans(
      h(),
      p.key.key,
      old.flatMap((id, i) => trace(id, {}, t0 + i * 60_000)),
    );
    // Created after those traces arrived: enrolment never looks back.
    const ev = await createEvaluator(p, {}, conn);
    expect(await tick([p], 60_000)).toEqual([]);

    const post = (body: Record<string, unknown>, token = p.key.key, id = ev.id) =>
      call(h().api, { method: 'POST', url: `${PUBLIC}/evaluators/${id}/backfill`, token, payload: body });
    const bad = await post({ start_time: iso(Date.now()), end_time: iso(Date.now() - 1000) });
    expect(bad.statusCode).toBe(422);
    const res = await post({ start_time: iso(t0 - 60_000), end_time: iso(Date.now()) });
    expect(res.statusCode, res.body).toBe(202);
    const backfill = res.json();
    expect(backfill).toMatchObject({ status: 'pending', total: 0, done: 0 });
    expect((await post({ start_time: iso(t0), end_time: iso(Date.now()) })).statusCode).toBe(409);

    const get = () =>
      call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/evaluators/${ev.id}/backfills/${backfill.backfill_id}`,
        token: p.key.key,
      });
    const created = await tick([p]);
    expect(created).toHaveLength(5);
    expect((await get()).json()).toMatchObject({ status: 'running', total: 5, done: 0 });
    await runAll(created.slice(0, 2));
    expect((await get()).json()).toMatchObject({ status: 'running', total: 5, done: 2 });
    await runAll(created.slice(2));
    await tick([p]);
    expect((await get()).json()).toMatchObject({ status: 'completed', total: 5, done: 5 });
    expect((await scoresOf(p, ev.id)).map((s) => s.trace_id).sort()).toEqual([...old].sort());

    // Another project sees neither the evaluator nor its backfill, and can't start one.
    const other = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/evaluators/${ev.id}/backfills/${backfill.backfill_id}`,
      token: b.key.key,
    });
    expect(other.statusCode).toBe(404);
    expect((await post({ start_time: iso(t0), end_time: iso(Date.now()) }, b.key.key)).statusCode).toBe(404);
  });
});

describe('project isolation', () => {
  it("an evaluator of A never enrols or scores B's traces", async () => {
    const ev = await createEvaluator(a, {
      scorer: { type: 'check', check: 'json_valid', params: {} },
      score_name: 'iso',
    });
    const mine = `tr-iso-a-${rand()}`;
    const theirs = `tr-iso-b-${rand()}`;
    await ingestSpans(h(), a.key.key, trace(mine));
    await ingestSpans(h(), b.key.key, trace(theirs));
    await runAll(await tick([a, b], 0, ev));
    expect((await executions(a, ev.id)).map((e) => e.trace_id)).toEqual([mine]);
    const bScores = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/scores`,
      token: b.key.key,
      query: { trace_id: theirs },
    });
    expect(bScores.json().data).toEqual([]);
    // B cannot read A's executions.
    const res = await call(h().api, {
      method: 'GET',
      url: `${PUBLIC}/evaluators/${ev.id}/executions`,
      token: b.key.key,
    });
    expect(res.statusCode).toBe(404);
  });
});

describe('score configs', () => {
  it("refuses a score_config_id that isn't the project's or that the scorer's output doesn't fit (422)", async () => {
    const config = async (p: Project, body: Record<string, unknown>) => {
      const res = await call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/score-configs`,
        token: p.key.key,
        payload: body,
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const name = `quality-${rand()}`;
    const numeric = await config(a, { name, data_type: 'numeric', min_value: 0, max_value: 1 });
    const theirs = await config(b, { name, data_type: 'numeric', min_value: 0, max_value: 1 });
    const create = (over: Record<string, unknown>) =>
      call(h().api, {
        method: 'POST',
        url: `${PUBLIC}/evaluators`,
        token: a.key.key,
        payload: { name: `e-${rand()}`, target: 'trace', scorer: judgeScorer(connA), score_name: name, ...over },
      });
    const foreign = await create({ score_config_id: theirs });
    expect(foreign.statusCode).toBe(422);
    expect(JSON.stringify(foreign.json())).toContain('score_config_id');
    const check = await create({
      score_config_id: numeric,
      scorer: { type: 'check', check: 'json_valid', params: {} },
    });
    expect(check.statusCode).toBe(422);
    const wide = await create({
      score_config_id: numeric,
      scorer: judgeScorer(connA, { output: { data_type: 'numeric', min_value: 0, max_value: 10 } }),
    });
    expect(wide.statusCode).toBe(422);
    const fits = await create({ score_config_id: numeric });
    expect(fits.statusCode, fits.body).toBe(201);
    const patch = await call(h().api, {
      method: 'PATCH',
      url: `${PUBLIC}/evaluators/${fits.json().id}`,
      token: a.key.key,
      payload: { score_config_id: theirs },
    });
    expect(patch.statusCode).toBe(422);
  });
});
