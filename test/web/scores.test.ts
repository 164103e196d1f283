import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { startFakeJudge, type FakeJudge } from '../support/fake-judge.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

/**
 * Scores in the web app (docs/scores.md, "In the web app"): on the trace view with the judge's
 * reasoning, in the trace list (a column and the `score` filter), on a session, score configs and LLM
 * connections in settings, and the SCORES view in the widget editor. Hostile names and comments
 * render as text.
 */
const server = useWebServer({ LLM_CONNECTION_ALLOW_PRIVATE: 'true', LLM_CONNECTION_TIMEOUT_MS: '2000' });

const tag = crypto.randomBytes(3).toString('hex');
const scored = `tr-scored-${tag}`;
const unscored = `tr-plain-${tag}`;
const session = `sess-${tag}`;
const HOSTILE = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
const REASONING = `The answer names the exact menu.\nIt also links the help page, which the user asked for.\n${HOSTILE}`;

let judge: FakeJudge;
beforeAll(async () => {
  judge = await startFakeJudge();
  const s = server();
  const t = Date.now() - 10 * 60_000;
  const span = (trace: string, id: string, over: Record<string, unknown> = {}) => ({
    trace_id: trace,
    span_id: id,
    name: `score-ui-${trace}`,
    start_time: iso(t),
    end_time: iso(t + 500),
    input: 'How do I reset my password?',
    output: 'Open Settings → Security → Reset.',
    session_id: session,
    ...over,
  });
  await ingestSpans(s.h, s.demo.apiKey, [
    span(scored, 'root'),
    span(scored, 'llm', { parent_span_id: 'root', name: 'chat', kind: 'llm', model_name: 'gpt-4o' }),
    span(unscored, 'root', { start_time: iso(t + 1000), end_time: iso(t + 1500) }),
  ]);
  const res = await call(s.h.api, {
    method: 'POST',
    url: `${PUBLIC}/scores`,
    token: s.demo.apiKey,
    payload: {
      scores: [
        { score_id: `help-${tag}`, trace_id: scored, name: 'helpfulness', value: 0.9, comment: REASONING },
        {
          score_id: `tone-${tag}`,
          trace_id: scored,
          span_id: 'llm',
          name: 'tone',
          data_type: 'categorical',
          string_value: 'friendly',
          comment: 'warm and short',
        },
        { score_id: `hostile-${tag}`, trace_id: scored, name: `<b>bold</b>`, value: 1, comment: HOSTILE },
        { score_id: `sess-${tag}`, session_id: session, name: 'resolved', data_type: 'boolean', value: 1 },
      ],
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().rejected).toEqual([]);
});
afterAll(() => judge?.close());

describe('web application: scores', () => {
  it('shows trace and span scores on the trace view, with the reasoning expandable and hostile text as text', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces/${scored}`);
    const table = page.getByTestId('trace-scores');
    await table.waitFor();
    const rows = table.getByTestId('score-row');
    await expect.poll(() => rows.count()).toBe(3);

    const help = rows.filter({ hasText: 'helpfulness' });
    await expect(help.getByTestId('score-value').textContent()).resolves.toBe('0.9');
    await expect(help.textContent()).resolves.toContain('API');
    // The reasoning's first line shows; the rest opens on a click.
    const reasoning = help.getByTestId('score-comment');
    await reasoning.locator('summary').getByText('The answer names the exact menu.').waitFor();
    expect(await reasoning.getByText('It also links the help page').isVisible()).toBe(false);
    await reasoning.locator('summary').click();
    await reasoning.getByText('It also links the help page', { exact: false }).waitFor();

    // A span score names its span; clicking it selects that span.
    const tone = rows.filter({ hasText: 'tone' });
    await expect(tone.getByTestId('score-value').textContent()).resolves.toBe('friendly');
    await tone.getByRole('button', { name: 'chat' }).click();
    await page.waitForURL(/span=llm/);
    await expect(page.getByTestId('span-panel').getByRole('heading').first().textContent()).resolves.toBe('chat');

    // Hostile name and comment: shown as the characters they are, never as markup.
    const hostile = rows.filter({ hasText: '<b>bold</b>' });
    await hostile.getByText('<img src=x', { exact: false }).first().waitFor();
    expect(await page.locator('[data-testid="trace-scores"] img, [data-testid="trace-scores"] b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await screenshot(page, 'trace-scores');
    await context.close();
  });

  it('shows score summaries in the list, narrows it with a score filter, and offers a per-name column', async () => {
    const s = server();
    const { context, page } = await newPage(s, { width: 1500, height: 900 });
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces?q=${encodeURIComponent(`-${tag}`)}`);
    const rows = page.getByTestId('trace-row');
    await expect.poll(() => rows.count()).toBe(2);
    const scoredRow = rows.filter({ hasText: scored });
    const chips = scoredRow.locator('td[data-column="scores"] .score-chip');
    await expect.poll(() => chips.count()).toBe(3);
    await expect(scoredRow.locator('[data-score-name="helpfulness"]').textContent()).resolves.toContain('avg 0.9 · 1');
    await expect(scoredRow.locator('[data-score-name="tone"]').textContent()).resolves.toContain('friendly (1/1)');
    await expect(rows.filter({ hasText: unscored }).locator('td[data-column="scores"]').textContent()).resolves.toBe(
      '–',
    );

    // The filter bar's score predicate: helpfulness ≥ 0.5 leaves the scored trace only.
    await page.getByRole('button', { name: '+ Add filter' }).click();
    await page.getByRole('menuitem', { name: /^Score/ }).click();
    const editor = page.getByTestId('score-filter-editor');
    await editor.getByLabel('Score name').fill('helpfulness');
    await editor.getByLabel('Operator').selectOption('gte');
    await editor.getByLabel('Score value').fill('0.5');
    await editor.getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('filter-chip').filter({ hasText: 'Score helpfulness ≥ 0.5' }).waitFor();
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain(scored);

    // is_not_set: the other one.
    await page.getByTestId('filter-chip').locator('.chip-text').click();
    await page.getByTestId('score-filter-editor').getByLabel('Operator').selectOption('is_not_set');
    await page.getByTestId('score-filter-editor').getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('filter-chip').filter({ hasText: 'Score helpfulness is not set' }).waitFor();
    await expect.poll(async () => (await rows.allTextContents()).join(' ')).toContain(unscored);
    expect(await rows.count()).toBe(1);

    // A label filter (`in`) on a span-level score matches its trace.
    await page.getByTestId('filter-chip').locator('.chip-text').click();
    const labelEditor = page.getByTestId('score-filter-editor');
    await labelEditor.getByLabel('Score name').fill('tone');
    await labelEditor.getByLabel('Operator').selectOption('in');
    await labelEditor.getByLabel('Score labels').fill('friendly');
    await labelEditor.getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('filter-chip').filter({ hasText: 'Score tone is friendly' }).waitFor();
    await expect.poll(async () => (await rows.allTextContents()).join(' ')).toContain(scored);
    expect(await rows.count()).toBe(1);

    // A column of one score name, chosen like the others.
    await page.locator('summary', { hasText: 'Columns' }).click();
    await page.getByRole('group', { name: 'Columns' }).getByLabel('Score: helpfulness').check();
    await expect(rows.first().locator('td[data-column="score:helpfulness"]').textContent()).resolves.toBe(
      'avg 0.9 · 1',
    );
    await screenshot(page, 'traces-scores');
    await context.close();
  });

  it('shows a session score on the session page', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/sessions/${session}`);
    const row = page.getByTestId('trace-scores').getByTestId('score-row');
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('resolved');
    await expect(row.getByTestId('score-value').textContent()).resolves.toBe('true');
    await context.close();
  });

  it('creates and archives a categorical score config in settings, and refuses one that breaks the rules', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings?tab=score-configs`);
    const form = page.getByRole('form', { name: 'New score config' });
    await form.getByLabel('Score name').fill('correctness');
    await form.getByLabel('Score type').selectOption('categorical');
    await form.getByLabel('Category 1 label').fill('correct');
    await form.getByLabel('Category 1 value').fill('1');
    await form.getByLabel('Category 2 label').fill('wrong');
    await form.getByLabel('Category 2 value').fill('0');
    await form.getByRole('button', { name: '+ Category' }).click();
    await form.getByLabel('Category 3 label').fill('partly');
    await form.getByLabel('Category 3 value').fill('0.5');
    await form.getByRole('button', { name: 'Create config' }).click();
    const row = page.getByTestId('score-config-row').filter({ hasText: 'correctness' });
    await row.waitFor();
    await expect(row.textContent()).resolves.toContain('correct (1), wrong (0), partly (0.5)');
    const listed = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/score-configs`, token: s.demo.apiKey });
    const config = listed.json().data.find((c: { name: string }) => c.name === 'correctness');
    expect(config.categories).toEqual([
      { label: 'correct', value: 1 },
      { label: 'wrong', value: 0 },
      { label: 'partly', value: 0.5 },
    ]);

    // The same name again: the server's sentence, and nothing half-made.
    await form.getByLabel('Score name').fill('correctness');
    await form.getByLabel('Score type').selectOption('boolean');
    await form.getByRole('button', { name: 'Create config' }).click();
    await form.locator('.form-error').waitFor();
    expect(await page.getByTestId('score-config-row').filter({ hasText: 'correctness' }).count()).toBe(1);

    await row.getByRole('button', { name: 'Archive' }).click();
    await row.getByText('archived').waitFor();
    await screenshot(page, 'settings-score-configs');
    await context.close();
  });

  it('adds an LLM connection whose key is never shown back, tests it against a judge on loopback, and deletes it', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings?tab=llm-connections`);
    const secret = `sk-web-${crypto.randomBytes(12).toString('hex')}`;
    const form = page.getByRole('form', { name: 'New LLM connection' });
    await form.getByLabel('Connection name').fill('loopback judge');
    await form.getByLabel('Provider').selectOption('openai_compatible');
    await form.getByLabel('Base URL').fill(judge.baseUrl);
    await form.getByLabel('API key').fill(secret);
    await form.getByLabel('Default model').fill('judge-model');
    await form.getByRole('button', { name: 'Add connection' }).click();
    const row = page.getByTestId('connection-row').filter({ hasText: 'loopback judge' });
    await row.waitFor();
    await expect(row.getByTestId('key-preview').textContent()).resolves.toBe(`…${secret.slice(-4)}`);
    // Write-only: the form is emptied and the key is nowhere on the page.
    await expect(form.getByLabel('API key').inputValue()).resolves.toBe('');
    expect(await page.content()).not.toContain(secret);

    await row.getByRole('button', { name: 'Test' }).click();
    await expect.poll(async () => row.getByTestId('connection-test').textContent()).toMatch(/ok judge-model · \d/);
    expect(judge.requests.at(-1)!.headers.authorization).toBe(`Bearer ${secret}`);

    // A provider that refuses: the status and the fixed sentence, never its body.
    judge.script({ kind: 'status', status: 401, message: 'secret provider detail' });
    await row.getByRole('button', { name: 'Test' }).click();
    await expect.poll(async () => row.getByTestId('connection-test').textContent()).toMatch(/failed.*401/);
    expect(await row.textContent()).not.toContain('secret provider detail');
    await screenshot(page, 'settings-llm-connections');

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    await context.close();
  });

  it('offers the SCORES view in the widget editor with a score name picker and sends its spec', async () => {
    const s = server();
    const { context, page } = await newPage(s, { width: 1280, height: 1000 });
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/dashboards`);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('button', { name: 'Add widget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a widget' });
    await dialog.getByLabel('Title').fill('Helpfulness');
    await dialog.getByLabel('Type').selectOption('stat');
    const sent = page.waitForRequest(
      (r) => r.url().endsWith('/widgets/query') && JSON.stringify(r.postDataJSON()).includes('"SCORES"'),
    );
    sent.catch(() => undefined);
    await dialog.getByLabel(/^View/).selectOption('SCORES');
    await expect(dialog.getByLabel('Measure').inputValue()).resolves.toBe('value');
    await expect(dialog.getByLabel('Aggregation').inputValue()).resolves.toBe('avg');
    // The known score names are offered.
    const offered = await dialog
      .locator('#widget-score-names option')
      .evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(offered).toEqual(expect.arrayContaining(['helpfulness', 'tone']));
    await dialog.getByLabel('Score name').fill('helpfulness');
    const body = (await sent).postDataJSON();
    expect(body.spec).toEqual({ view: 'SCORES', score_name: 'helpfulness', measure: 'value', aggregation: 'avg' });
    // The server answers the view (docs/scores.md): the average of the one score, with its count.
    await expect.poll(async () => dialog.getByTestId('stat-value').textContent()).toMatch(/^0\.9/);
    await screenshot(page, 'widget-editor-scores');
    await context.close();
  });
});
