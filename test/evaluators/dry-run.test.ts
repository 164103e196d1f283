import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey, useHarness } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { expectDetail, expectValidationAt } from '../support/expect.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';
import { evaluatorScoreId } from '../../src/evaluators/identity.js';

const h = useHarness({ LLM_CONNECTION_ALLOW_PRIVATE: 'true', LLM_CONNECTION_TIMEOUT_MS: '1000' });

let judge: FakeJudge;
let a: Awaited<ReturnType<typeof projectWithKey>>;
let connectionId: string;
let anthropicId: string;
const traceId = `tr-${crypto.randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  judge = await startFakeJudge();
  a = await projectWithKey(h(), 'dry');
  const t = Date.now() - 60_000;
  await ingestSpans(h(), a.key.key, [
    {
      trace_id: traceId,
      span_id: 'root',
      name: 'support-agent',
      start_time: iso(t),
      end_time: iso(t + 900),
      input: { messages: [{ role: 'user', content: 'How do I reset my password?' }] },
      output: 'Click "Forgot password" on the login page.',
      metadata: { tenant: 'acme' },
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
      input: 'rewrite: reset password',
      output: '{"steps": 2}',
    },
  ]);
  const conn = async (provider: string, name: string) => {
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/llm-connections`,
      token: a.owner.token,
      payload: {
        project_id: a.project.id,
        name,
        provider,
        base_url: judge.baseUrl,
        api_key: 'sk-fake-key-0000',
        default_model: 'judge-model',
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as string;
  };
  connectionId = await conn('openai_compatible', 'fake');
  anthropicId = await conn('anthropic', 'fake-anthropic');
});
afterAll(() => judge?.close());

const judgeScorer = (connection: string, over: Record<string, unknown> = {}) => ({
  type: 'llm_judge',
  connection_id: connection,
  prompt: 'Tenant {{T}} asked: {{Q}}\nThe agent said: {{A}}\nMissing: [{{E}}]',
  variables: { Q: 'input.messages[-1].content', A: 'output', T: 'metadata.tenant', E: 'error_message' },
  output: { data_type: 'numeric', min_value: 0, max_value: 1 },
  temperature: 0,
  ...over,
});

async function evaluator(scorer: Record<string, unknown>, over: Record<string, unknown> = {}) {
  const res = await call(h().api, {
    method: 'POST',
    url: `${PUBLIC}/evaluators`,
    token: a.key.key,
    payload: {
      name: `e-${crypto.randomBytes(4).toString('hex')}`,
      target: 'trace',
      scorer,
      score_name: 'helpfulness',
      ...over,
    },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

function dryRun(id: string, body: Record<string, unknown> = { trace_id: traceId }, token = a.key.key) {
  return call(h().api, { method: 'POST', url: `${PUBLIC}/evaluators/${id}/dry-run`, token, payload: body });
}

async function executionCount(): Promise<number> {
  const { rows } = await h().ctx.pg.pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM evaluator_executions WHERE project_id = $1',
    [a.project.id],
  );
  return rows[0]!.n;
}

describe('dry run', () => {
  it('renders the prompt from the trace, asks the judge for JSON, and answers the would-be score', async () => {
    const id = await evaluator(judgeScorer(connectionId));
    judge.requests.length = 0;
    judge.script({
      kind: 'judgement',
      score: 0.75,
      reasoning: 'Accurate and short.',
      inputTokens: 210,
      outputTokens: 18,
    });
    const res = await dryRun(id);
    expect(res.statusCode, res.body).toBe(200);
    const prompt =
      'Tenant acme asked: How do I reset my password?\nThe agent said: Click "Forgot password" on the login page.\nMissing: []';
    expect(res.json()).toEqual({
      evaluator_id: id,
      version: 1,
      trace_id: traceId,
      span_id: null,
      score_id: evaluatorScoreId(id, traceId, null),
      score_name: 'helpfulness',
      rendered_prompt: prompt,
      missing_variables: ['E'],
      truncated: false,
      judge_model: 'judge-model',
      input_tokens: 210,
      output_tokens: 18,
      score: { value: 0.75, string_value: null, comment: 'Accurate and short.' },
      error: null,
    });
    const sent = judge.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.body).toMatchObject({
      model: 'judge-model',
      temperature: 0,
      messages: [{ role: 'user', content: prompt }],
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'judgement',
          strict: true,
          schema: {
            required: ['score', 'reasoning'],
            properties: { score: { type: 'number' }, reasoning: { type: 'string' } },
          },
        },
      },
    });
    expect(await executionCount()).toBe(0);
  });

  it('asks Anthropic through a tool whose input schema is the judgement', async () => {
    const id = await evaluator(
      judgeScorer(anthropicId, {
        model: 'claude-judge',
        output: { data_type: 'categorical', categories: ['good', 'bad'] },
      }),
    );
    judge.requests.length = 0;
    judge.script({ kind: 'judgement', score: 'bad', reasoning: 'Wrong page.' });
    const res = await dryRun(id);
    expect(res.json()).toMatchObject({
      judge_model: 'claude-judge',
      score: { value: 1, string_value: 'bad', comment: 'Wrong page.' },
      error: null,
    });
    expect(judge.requests[0]!.path).toBe('/v1/messages');
    expect(judge.requests[0]!.body).toMatchObject({
      model: 'claude-judge',
      tool_choice: { type: 'tool', name: 'record_judgement' },
      tools: [
        {
          name: 'record_judgement',
          input_schema: { properties: { score: { type: 'string', enum: ['good', 'bad'] } } },
        },
      ],
    });
  });

  it('answers the error, not a score, when the judge fails or answers out of range', async () => {
    const id = await evaluator(judgeScorer(connectionId));
    const cases: [Parameters<FakeJudge['script']>[0], string][] = [
      [{ kind: 'judgement', score: 7, reasoning: 'very' }, "the judge's score is outside the output's range"],
      [{ kind: 'judgement', judgement: { verdict: 'yes' } }, 'the judge answered without a score and reasoning'],
      [{ kind: 'malformed' }, 'the judge did not answer in JSON'],
      [{ kind: 'status', status: 429 }, 'HTTP 429: the provider is rate limiting this key'],
      [{ kind: 'status', status: 500 }, 'HTTP 500: the provider had an internal error'],
      [{ kind: 'status', status: 401 }, 'HTTP 401: the provider refused the API key'],
      [{ kind: 'hang' }, 'the LLM provider host gave no answer within 1000 ms'],
    ];
    for (const [reply, error] of cases) {
      judge.script(reply);
      const res = await dryRun(id);
      judge.release();
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ score: null, error });
      expect(res.body).not.toContain('secret provider detail');
    }
    expect(await executionCount()).toBe(0);
  });

  it('runs a check without any model call; a span target scores the chosen span', async () => {
    const check = await evaluator({ type: 'check', check: 'json_valid', params: {} });
    const res = await dryRun(check);
    expect(res.json()).toMatchObject({
      rendered_prompt: null,
      judge_model: null,
      score: { value: 0, string_value: 'false', comment: 'output is not valid JSON' },
    });
    const spanCheck = await evaluator(
      { type: 'check', check: 'json_schema', params: { schema: { type: 'object', required: ['steps'] } } },
      { target: 'span', span_filter: { kind: ['llm'] } },
    );
    const first = await dryRun(spanCheck);
    expect(first.json()).toMatchObject({ span_id: 'llm-1', score: { value: 1, string_value: 'true' } });
    expect(first.json().score_id).toBe(evaluatorScoreId(spanCheck, traceId, 'llm-1'));
    const root = await dryRun(spanCheck, { trace_id: traceId, span_id: 'root' });
    expect(root.json()).toMatchObject({ span_id: 'root', score: { value: 0 } });
    expectDetail(await dryRun(spanCheck, { trace_id: traceId, span_id: 'nope' }), 404, 'span not found in this trace');
    expectValidationAt(await dryRun(check, { trace_id: traceId, span_id: 'root' }), ['body', 'span_id']);
    expectDetail(await dryRun(check, { trace_id: 'no-such-trace' }), 404, 'trace not found');
  });

  it("never reads another project's trace or evaluator", async () => {
    const b = await projectWithKey(h(), 'other');
    const id = await evaluator({ type: 'check', check: 'contains', params: { text: 'password' } });
    expectDetail(await dryRun(id, { trace_id: traceId }, b.key.key), 404, 'evaluator not found');
    const res = await call(h().api, {
      method: 'POST',
      url: `${PUBLIC}/evaluators`,
      token: b.key.key,
      payload: {
        name: 'b',
        target: 'trace',
        scorer: { type: 'check', check: 'contains', params: { text: 'x' } },
        score_name: 's',
      },
    });
    expectDetail(await dryRun(res.json().id, { trace_id: traceId }, b.key.key), 404, 'trace not found');
  });
});
