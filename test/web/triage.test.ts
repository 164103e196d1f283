import { describe, expect, it } from 'vitest';
import { runDetectionTick } from '../../src/signals/detection.js';
import { call, PUBLIC } from '../support/harness.js';
import { datasetWithVersion } from '../support/datasets.js';
import { complete, createRun, writeResults } from '../support/evaluations.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

const server = useWebServer();

type Signal = { signal_id: string; title: string; status: string };

async function openSignals(): Promise<Signal[]> {
  const s = server();
  await runDetectionTick(s.h.ctx, { projectIds: [s.demo.projectId] });
  const res = await call(s.h.api, {
    method: 'GET',
    url: `${PUBLIC}/signals?status=open&limit=200`,
    token: s.demo.apiKey,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

describe('web application: signals, alerts, evaluations', () => {
  it('resolves and reopens a signal, then dismisses one and merges another', async () => {
    const s = server();
    const signals = await openSignals();
    expect(signals.length).toBeGreaterThanOrEqual(3);
    const [first, second, third] = signals as [Signal, Signal, Signal];
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/signals`);
    await page.getByTestId('signal-row').first().waitFor();
    await screenshot(page, 'signals');

    await page.goto(`/projects/${s.demo.projectId}/signals/${first.signal_id}`);
    const heading = page.getByRole('heading', { level: 1 });
    await page.getByRole('button', { name: 'Resolve…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Resolve signal' });
    await dialog.getByLabel('Reason').selectOption('other');
    await dialog.getByLabel(/^Note/).fill('rolled back the bad deploy');
    await dialog.getByRole('button', { name: 'Resolve' }).click();
    await heading.filter({ hasText: 'resolved' }).waitFor();
    await page.getByTestId('finding-table').waitFor();
    await screenshot(page, 'signal-resolved');
    await page.getByRole('button', { name: 'Reopen' }).click();
    await heading.filter({ hasText: 'open' }).waitFor();

    // Someone else resolves it meanwhile: this page's next change is refused with a 409, not applied.
    const other = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: s.demo.email, password: s.demo.password },
    });
    const resolved = await call(s.h.api, {
      method: 'PATCH',
      url: `${PUBLIC}/signals/${first.signal_id}/status`,
      token: other.json().session_token,
      payload: { project_id: s.demo.projectId, status: 'resolved', reason: 'fixed_elsewhere' },
    });
    expect(resolved.statusCode).toBe(200);
    await page.getByRole('button', { name: 'Resolve…' }).click();
    await dialog.getByLabel('Reason').selectOption('fixed_by_pr');
    await dialog.getByRole('button', { name: 'Resolve' }).click();
    await page.getByTestId('signal-conflict').waitFor();
    await screenshot(page, 'signal-conflict');
    await page.getByRole('button', { name: 'Reload' }).click();
    await heading.filter({ hasText: 'resolved' }).waitFor();

    // Dismiss the second.
    await page.goto(`/projects/${s.demo.projectId}/signals/${second.signal_id}`);
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Dismiss' }).click();
    await heading.filter({ hasText: 'dismissed' }).waitFor();

    // Merge the third into the first.
    await page.goto(`/projects/${s.demo.projectId}/signals/${third.signal_id}`);
    await page.getByRole('button', { name: 'Merge into…' }).click();
    const merge = page.getByRole('dialog', { name: 'Merge into another signal' });
    await merge.getByLabel('Merge into').selectOption(first.signal_id);
    await merge.getByRole('button', { name: 'Merge' }).click();
    await page.getByText('This signal was merged').waitFor();
    const after = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/signals/${third.signal_id}`,
      token: s.demo.apiKey,
    });
    expect(after.json().merged_into_id).toBe(first.signal_id);
    await context.close();
  });

  it('creates an alert, pauses and resumes it', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/alerts`);
    await page.getByRole('button', { name: 'New alert' }).click();
    const form = page.getByRole('dialog', { name: 'New alert' });
    await form.getByRole('textbox', { name: 'Name' }).fill('Slow LLM calls');
    await form.getByLabel('Measure').selectOption('latency');
    await form.getByLabel('Aggregation').selectOption('p95');
    await form.getByLabel('Threshold').fill('5000');
    await form.getByRole('button', { name: '+ Add filter' }).click();
    await form.getByRole('menuitem', { name: /^Span kind/ }).click();
    await form.getByRole('group', { name: 'Span kind values' }).getByLabel('llm').check();
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByRole('button', { name: 'Create alert' }).click();
    await page.getByRole('heading', { name: /Slow LLM calls/ }).waitFor();
    await screenshot(page, 'alert');
    await page.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => page.getByTestId('alert-status').textContent()).toBe('PAUSED');
    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.getByTestId('alert-status').textContent()).not.toBe('PAUSED');
    const list = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/alerts`, token: s.demo.apiKey });
    expect(
      list.json().data.map((a: { name: string; filters: unknown[] }) => [a.name, a.filters.length]),
    ).toContainEqual(['Slow LLM calls', 1]);
    await context.close();
  });

  it("opens an evaluation run's page from its run_url and compares it with another run", async () => {
    const s = server();
    const { version } = await datasetWithVersion(s.h, s.demo.apiKey, 3);
    const runs = [];
    for (const [i, passed] of [
      [0, true],
      [1, false],
    ] as const) {
      const run = await createRun(s.h, s.demo.apiKey, version.dataset_version_id, { candidate_version: `v${i + 1}` });
      await writeResults(
        s.h,
        s.demo.apiKey,
        run.evaluation_run_id,
        version.items.map((c) => ({
          test_case_id: c.test_case_id,
          output: 'x',
          scores: [{ name: 'accuracy', value: passed ? 1 : 0.5, passed }],
        })),
      );
      const done = await complete(s.h, s.demo.apiKey, run.evaluation_run_id);
      expect(done.statusCode).toBe(200);
      runs.push(done.json() as { run_url: string; evaluation_run_id: string });
    }
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(new URL(runs[0]!.run_url).pathname);
    await page.getByTestId('run-counts').waitFor();
    await page.getByRole('heading', { name: 'Scores' }).waitFor();
    await screenshot(page, 'evaluation-run');
    await page.getByLabel('Compare with run').selectOption(runs[1]!.evaluation_run_id);
    await page.getByTestId('compare-page').waitFor();
    await page.getByRole('heading', { name: /Regressions/ }).waitFor();
    await screenshot(page, 'evaluation-compare');
    await context.close();
  });
});
