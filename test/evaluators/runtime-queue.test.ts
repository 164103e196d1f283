import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { waitUntil } from '../support/wait.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';
import { runEvaluatorTick } from '../../src/evaluators/runtime.js';
import { EXECUTION_ERRORS, runExecution } from '../../src/evaluators/execution.js';
import { startEvaluatorWorkers } from '../../workers/evaluators.js';

/**
 * The evaluator runtime through the real queue (the worker's scheduled tick and its execution jobs),
 * and the daily call cap (3 in this harness).
 */

const h = useHarness({
  LLM_CONNECTION_ALLOW_PRIVATE: 'true',
  LLM_CONNECTION_TIMEOUT_MS: '2000',
  EVALUATOR_RETRY_BACKOFF_MS: '0',
  EVALUATOR_DAILY_CALLS_PER_PROJECT: '3',
});

type Project = Awaited<ReturnType<typeof projectWithKey>>;
let judge: FakeJudge;
const rand = () => crypto.randomBytes(4).toString('hex');

beforeAll(async () => {
  judge = await startFakeJudge();
});
afterAll(() => judge?.close());

async function setup(label: string): Promise<{ p: Project; evaluatorId: string }> {
  const p = await projectWithKey(h(), label);
  const conn = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/llm-connections`,
    token: p.owner.token,
    payload: {
      project_id: p.project.id,
      name: 'fake',
      provider: 'openai_compatible',
      base_url: judge.baseUrl,
      api_key: 'sk-fake-key-0000',
      default_model: 'judge-model',
    },
  });
  expect(conn.statusCode, conn.body).toBe(201);
  const ev = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/evaluators`,
    token: p.key.key,
    payload: {
      name: 'helpfulness judge',
      target: 'trace',
      delay_seconds: 0,
      scorer: {
        type: 'llm_judge',
        connection_id: conn.json().id,
        prompt: 'Rate: {{A}}',
        variables: { A: 'output' },
        output: { data_type: 'boolean' },
      },
      score_name: 'helpful',
    },
  });
  expect(ev.statusCode, ev.body).toBe(201);
  return { p, evaluatorId: ev.json().id };
}

const span = (traceId: string) => ({
  trace_id: traceId,
  span_id: 'root',
  name: 'agent',
  start_time: iso(Date.now() - 2_000),
  end_time: iso(Date.now() - 1_000),
  input: 'hi',
  output: 'hello',
});

async function statuses(p: Project, evaluatorId: string) {
  const res = await call(h().api, {
    method: 'GET',
    url: `${PUBLIC}/evaluators/${evaluatorId}/executions`,
    token: p.key.key,
    query: { limit: '100' },
  });
  return res.json().data as { trace_id: string; status: string; error: string | null }[];
}

describe('the queue worker', () => {
  it('enrols on its scheduled tick and runs the executions as jobs', async () => {
    const { p, evaluatorId } = await setup('queue');
    const workers = startEvaluatorWorkers(h().ctx, { projectIds: [p.project.id] });
    try {
      const ids = [`tr-q1-${rand()}`, `tr-q2-${rand()}`];
      judge.fallback = { kind: 'judgement', score: true, reasoning: 'helpful' };
      await ingestSpans(h(), p.key.key, ids.map(span));
      await waitUntil(
        async () => (await statuses(p, evaluatorId)).filter((x) => x.status === 'completed').length === 2,
        'both traces scored through the queue',
      );
      const scores = await call(h().api, {
        method: 'GET',
        url: `${PUBLIC}/scores`,
        token: p.key.key,
        query: { evaluator_id: evaluatorId },
      });
      expect(
        scores
          .json()
          .data.map((s: { trace_id: string }) => s.trace_id)
          .sort(),
      ).toEqual([...ids].sort());
      expect(scores.json().data[0]).toMatchObject({ data_type: 'boolean', value: 1, comment: 'helpful' });
    } finally {
      await Promise.all(workers.map((w) => w.close()));
      judge.fallback = { kind: 'judgement', score: 1, reasoning: 'looks right' };
    }
  });
});

describe('the daily cap', () => {
  it('skips the executions past EVALUATOR_DAILY_CALLS_PER_PROJECT with a sentence naming the cap', async () => {
    const { p, evaluatorId } = await setup('cap');
    judge.fallback = { kind: 'judgement', score: true, reasoning: 'ok' };
    try {
      await ingestSpans(
        h(),
        p.key.key,
        Array.from({ length: 5 }, (_, i) => span(`tr-cap-${i}-${rand()}`)),
      );
      const { created } = await runEvaluatorTick(h().ctx, {
        projectIds: [p.project.id],
        enqueue: async () => {},
        watchdog: false,
        latenessMs: 0,
      });
      expect(created).toHaveLength(5);
      for (const id of created) await runExecution(h().ctx, id);
    } finally {
      judge.fallback = { kind: 'judgement', score: 1, reasoning: 'looks right' };
    }
    const got = await statuses(p, evaluatorId);
    expect(got.filter((x) => x.status === 'completed')).toHaveLength(3);
    const skipped = got.filter((x) => x.status === 'skipped');
    expect(skipped).toHaveLength(2);
    expect(skipped.every((x) => x.error === EXECUTION_ERRORS.dailyCap)).toBe(true);
    expect(EXECUTION_ERRORS.dailyCap).toContain('EVALUATOR_DAILY_CALLS_PER_PROJECT');
  });
});
