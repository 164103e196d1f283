import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC, projectWithKey } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';
import { writeScores } from '../../src/scores/service.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

/**
 * The evaluators page (docs/evaluators.md, "In the web app"): create from a template, filters from the
 * filter bar, a dry run on a trace against a judge on loopback (the rendered prompt and the would-be
 * score), the list's state and stats, executions; another project's evaluator is not found here.
 */
const server = useWebServer({ LLM_CONNECTION_ALLOW_PRIVATE: 'true', LLM_CONNECTION_TIMEOUT_MS: '2000' });

const tag = crypto.randomBytes(3).toString('hex');
const traceId = `tr-eval-${tag}`;
const QUESTION = `How do I export my invoices (${tag})?`;
const ANSWER = '{"steps": ["Billing", "Invoices", "Export"]}';

let judge: FakeJudge;
beforeAll(async () => {
  judge = await startFakeJudge();
  const s = server();
  const t = Date.now() - 5 * 60_000;
  await ingestSpans(s.h, s.demo.apiKey, [
    {
      trace_id: traceId,
      span_id: 'root',
      name: 'support-agent',
      start_time: iso(t),
      end_time: iso(t + 1200),
      input: QUESTION,
      output: ANSWER,
      environment: 'production',
    },
  ]);
  // The connection is made through the API here; settings' form is driven in scores.test.ts.
  const session = await call(s.h.web, {
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: s.demo.email, password: s.demo.password },
  });
  expect(session.statusCode, session.body).toBe(200);
  const res = await call(s.h.api, {
    method: 'POST',
    url: `${PUBLIC}/llm-connections`,
    token: session.json().session_token,
    payload: {
      project_id: s.demo.projectId,
      name: 'fake judge',
      provider: 'openai_compatible',
      base_url: judge.baseUrl,
      api_key: 'sk-fake-judge-0000',
      default_model: 'judge-model',
    },
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(() => judge?.close());

describe('web application: evaluators', () => {
  it('creates a helpfulness judge from its template with a filter, and dry-runs it on a trace', async () => {
    const s = server();
    const { context, page } = await newPage(s, { width: 1280, height: 1000 });
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/evaluators`);
    await page.getByText('No evaluators yet').waitFor();
    await page.locator('summary', { hasText: 'New evaluator' }).click();
    await page.getByRole('menuitem', { name: /Helpfulness judge/ }).click();
    await page.getByRole('heading', { name: 'New evaluator: Helpfulness judge' }).waitFor();

    const form = page.getByRole('form', { name: 'Evaluator' });
    // The template's worked start: sampled at 10%, a numeric 0-1 judge over input and output.
    await expect(form.getByLabel('Sampling (% of traces)').inputValue()).resolves.toBe('10');
    await expect(form.getByLabel('Judge prompt').inputValue()).resolves.toContain('{{question}}');
    await expect(form.getByLabel('Variable 1 path').inputValue()).resolves.toBe('input');
    await expect(form.getByLabel('LLM connection').inputValue()).resolves.not.toBe('');
    await form.getByLabel('Evaluator name').fill(`helpfulness ${tag}`);
    // A variable the prompt names that is not mapped yet is offered from the prompt.
    await form.getByLabel('Judge prompt').fill(`${await form.getByLabel('Judge prompt').inputValue()}\nEnv: {{env}}`);
    await form.getByRole('button', { name: 'Add {{env}} from the prompt' }).click();
    await form.getByLabel('Variable 3 path').fill('metadata.missing_key');
    // Filters through the filter bar: only production traces.
    await form.getByRole('button', { name: '+ Add filter' }).click();
    await page.getByRole('menuitem', { name: /^Environment/ }).click();
    await page.getByLabel('Other values').fill('production');
    await page.getByRole('button', { name: 'Apply' }).click();
    await form.getByTestId('filter-chip').filter({ hasText: 'Environment is production' }).waitFor();
    await form.getByRole('button', { name: 'Create evaluator' }).click();

    await page.getByRole('heading', { name: new RegExp(`helpfulness ${tag}`) }).waitFor();
    const listed = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/evaluators`, token: s.demo.apiKey });
    const created = listed.json().data.find((e: { name: string }) => e.name === `helpfulness ${tag}`);
    expect(created).toMatchObject({
      sampling_rate: 0.1,
      score_name: 'helpfulness',
      filters: [{ field: 'environment', op: 'in', value: ['production'] }],
      scorer: {
        type: 'llm_judge',
        variables: { question: 'input', answer: 'output', env: 'metadata.missing_key' },
        output: { data_type: 'numeric', min_value: 0, max_value: 1 },
      },
    });
    await page.getByText('Environment is production').waitFor();

    // Dry run: the prompt as the judge gets it, and the score it would give; nothing stored.
    judge.script({ kind: 'judgement', score: 0.8, reasoning: 'Names each menu <b>step</b>.' });
    await page.getByLabel('Trace ID').fill(traceId);
    await page.getByRole('button', { name: 'Dry run' }).click();
    const result = page.getByTestId('dry-run-result');
    await result.waitFor();
    await expect(result.getByTestId('rendered-prompt').textContent()).resolves.toContain(QUESTION);
    await expect(result.getByTestId('rendered-prompt').textContent()).resolves.toContain(ANSWER);
    await expect(result.getByTestId('dry-run-score').textContent()).resolves.toMatch(/^0\.8 as helpfulness \(v1\)/);
    await expect(result.getByTestId('dry-run-reasoning').textContent()).resolves.toBe('Names each menu <b>step</b>.');
    expect(await result.locator('b').count()).toBe(0);
    await expect(result.textContent()).resolves.toContain('env');
    const scores = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/scores?trace_id=${traceId}`,
      token: s.demo.apiKey,
    });
    expect(scores.json().data).toEqual([]);
    await page.getByTestId('evaluator-stats').waitFor();
    await page.getByText('No executions').waitFor();
    await screenshot(page, 'evaluator-dry-run', true);

    // A judge that fails: the fixed sentence, not the provider's body.
    judge.script({ kind: 'status', status: 500, message: 'secret provider detail' });
    judge.script({ kind: 'status', status: 500, message: 'secret provider detail' });
    judge.script({ kind: 'status', status: 500, message: 'secret provider detail' });
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(async () => result.getByTestId('dry-run-score').textContent()).not.toMatch(/^0\.8/);
    expect(await result.textContent()).not.toContain('secret provider detail');

    // Backfill: the last day's traces, with progress polled (POST /evaluators/{id}/backfill → 202).
    const backfill = page.getByRole('region', { name: 'Backfill' });
    await backfill.getByRole('button', { name: 'Start backfill' }).click();
    const progress = backfill.getByTestId('backfill-progress');
    await progress.waitFor();
    await expect(progress.textContent()).resolves.toMatch(/\d+ \/ \d+ · (pending|running|completed)/);

    // Disable from the page; the list shows its state and stats.
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await page.getByRole('link', { name: 'Evaluators' }).first().click();
    const row = page.getByTestId('evaluator-row').filter({ hasText: `helpfulness ${tag}` });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('disabled');
    await expect(row.textContent()).resolves.toContain('LLM judge');
    await expect(row.textContent()).resolves.toContain('10%');
    await screenshot(page, 'evaluators');
    await context.close();
  });

  it('creates a JSON validity check from its template and dry-runs it without a model', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/evaluators/new?template=json-valid`);
    const form = page.getByRole('form', { name: 'Evaluator' });
    await expect(form.getByLabel('Check', { exact: true }).inputValue()).resolves.toBe('json_valid');
    await form.getByLabel('Evaluator name').fill(`json ${tag}`);
    const calls = judge.requests.length;
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await page.getByRole('heading', { name: new RegExp(`json ${tag}`) }).waitFor();
    await page.getByLabel('Trace ID').fill(traceId);
    await page.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(async () => page.getByTestId('dry-run-score').textContent()).toMatch(/^true as json_valid/);
    expect(page.getByTestId('rendered-prompt')).toBeDefined();
    expect(await page.getByTestId('rendered-prompt').count()).toBe(0);
    expect(judge.requests.length).toBe(calls);

    // The form refuses what the server refuses, naming the field; nothing is created.
    await page.goto(`/projects/${s.demo.projectId}/evaluators/new?template=latency`);
    await form.getByLabel('Evaluator name').fill(`json ${tag}`);
    await form.getByRole('button', { name: 'Create evaluator' }).click();
    await form.locator('.form-error').waitFor();
    const listed = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/evaluators`, token: s.demo.apiKey });
    expect(listed.json().data.filter((e: { name: string }) => e.name === `json ${tag}`)).toHaveLength(1);
    await context.close();
  });

  it("shows a paused evaluator's reason in the list and on its page", async () => {
    const s = server();
    // The runtime pauses an evaluator on a provider answer no retry fixes; set that state as it would.
    const reason = 'The provider refused the API key (401): the evaluator is paused until the connection is fixed.';
    const { rowCount } = await s.h.ctx.pg.pool.query(
      'UPDATE evaluators SET enabled = false, paused_reason = $1 WHERE project_id = $2 AND name = $3',
      [reason, s.demo.projectId, `json ${tag}`],
    );
    expect(rowCount).toBe(1);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/evaluators`);
    const row = page.getByTestId('evaluator-row').filter({ hasText: `json ${tag}` });
    await row.getByTestId('paused-reason').waitFor();
    await expect(row.getByTestId('paused-reason').textContent()).resolves.toBe(reason);
    await expect(row.textContent()).resolves.toContain('paused');
    await row.getByRole('link', { name: `json ${tag}` }).click();
    await page.getByRole('alert').filter({ hasText: reason }).waitFor();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    await context.close();
  });

  it("shows how the judge agrees with people's annotations on its page", async () => {
    const s = server();
    const created = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/evaluators`,
      token: s.demo.apiKey,
      payload: {
        name: `agree ${tag}`,
        target: 'trace',
        scorer: { type: 'check', check: 'contains', params: { text: 'x' } },
        score_name: `verdict-${tag}`,
        enabled: false,
      },
    });
    expect(created.statusCode, created.body).toBe(201);
    const evaluatorId = created.json().id as string;
    const project = { projectId: s.demo.projectId, traceTtlDays: 30 };
    const verdict = (i: number, label: string) => ({
      trace_id: `agree-${tag}-${i}`,
      name: `verdict-${tag}`,
      data_type: 'categorical',
      string_value: label,
    });
    // The judge and a person agree on two traces of three.
    const judged = await writeScores(
      s.h.ctx,
      project,
      ['good', 'bad', 'good'].map((l, i) => verdict(i, l)),
      {
        source: 'evaluator',
        evaluatorId,
      },
    );
    const annotated = await writeScores(
      s.h.ctx,
      project,
      ['good', 'bad', 'bad'].map((l, i) => verdict(i, l)),
      {
        source: 'annotation',
      },
    );
    expect([judged.rejected, annotated.rejected]).toEqual([[], []]);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/evaluators/${evaluatorId}`);
    const section = page.getByTestId('evaluator-agreement');
    await section.getByTestId('agreement-pairs').waitFor();
    await expect(section.getByTestId('agreement-pairs').textContent()).resolves.toBe('3');
    await expect(section.getByTestId('agreement-share').textContent()).resolves.toBe('67%');
    const differs = section.getByTestId('agreement-disagreements').locator('tbody tr');
    await expect(differs.count()).resolves.toBe(1);
    await expect(differs.first().textContent()).resolves.toBe(`agree-${tag}-2goodbad`);
    await context.close();
  });

  it("does not open another project's evaluator", async () => {
    const s = server();
    const other = await projectWithKey(s.h, 'other');
    const res = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/evaluators`,
      token: other.key.key,
      payload: {
        name: 'theirs',
        target: 'trace',
        score_name: 'theirs',
        scorer: { type: 'check', check: 'json_valid', params: { field: 'output' } },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/evaluators/${res.json().id}`);
    await page.getByText('This evaluator was not found').waitFor();
    await page.goto(`/projects/${other.project.id}/evaluators/${res.json().id}`);
    await page.getByText('This project was not found').waitFor();
    await context.close();
  });
});
