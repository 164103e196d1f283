import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

/**
 * The prompt pages (issue 34, docs/prompts.md): folders, a new prompt from the editor with its
 * variables marked, a version from code, labels promoted, the compile preview, versions compared
 * with their scores, the diff of two versions, and a span's link to the version it used.
 */
const server = useWebServer();
const NAME = 'support/answer';
const MIN = 60_000;

describe('web application: prompts', () => {
  it('creates, versions, promotes, compiles, compares and diffs a prompt, and a span links to it', async () => {
    const s = server();
    const token = s.demo.apiKey;
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/prompts`);
    await page.getByText('No prompts yet').waitFor();

    // A new prompt from the editor: its variables are named as they are typed.
    await page.getByRole('button', { name: 'New prompt' }).click();
    await page.getByLabel('Name').fill(NAME);
    await page.getByLabel('Prompt text').fill('Answer the question: {{question}}\nBe brief.');
    await expect(page.getByTestId('editor-variables').textContent()).resolves.toContain('{{question}}');
    await page.getByLabel('Labels (space separated)').fill('staging');
    await page.getByLabel('Commit message').fill('first draft');
    await page.getByRole('button', { name: 'Save version' }).click();
    await page.getByRole('heading', { level: 1, name: NAME }).waitFor();
    await expect(page.getByTestId('prompt-variable').first().textContent()).resolves.toBe('{{question}}');

    // A second version from code, and spans naming each version, with scores.
    const v2 = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/prompts`,
      token,
      payload: { name: NAME, type: 'text', prompt: 'Answer the question: {{question}}\nBe kind and brief.' },
    });
    expect(v2.statusCode, v2.body).toBe(201);
    const at = Date.now() - 10 * MIN;
    await ingestSpans(s.h, token, [
      ...[1, 2].map((version) => ({
        trace_id: `prompt-web-${version}`,
        span_id: `llm-${version}`,
        name: 'answer',
        kind: 'llm',
        start_time: iso(at + version * 1000),
        end_time: iso(at + version * 1000 + 100 * version),
        prompt_name: NAME,
        prompt_version: version,
      })),
    ]);
    const scored = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/scores`,
      token,
      payload: {
        scores: [
          { trace_id: 'prompt-web-1', name: 'helpfulness', value: 0.25 },
          { trace_id: 'prompt-web-2', name: 'helpfulness', value: 0.75 },
        ],
      },
    });
    expect(scored.json().accepted, scored.body).toBe(2);

    // The history lists both; promoting v2 to production moves the label (the demo user is ADMIN).
    await page.reload();
    await expect.poll(() => page.getByTestId('prompt-version').count()).toBe(2);
    await page.getByTestId('prompt-version').filter({ hasText: 'v2' }).click();
    await page.getByRole('button', { name: 'Promote to production' }).click();
    await page.getByRole('button', { name: 'Remove production' }).waitFor();
    const fetched = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/prompts/${encodeURIComponent(NAME)}`, token });
    expect(fetched.json().version).toBe(2);

    // The compile preview fills the variable.
    await page.getByLabel('Variable question').fill('Where is my order?');
    await page.getByRole('button', { name: 'Compile' }).click();
    await expect(page.getByTestId('compiled').textContent()).resolves.toContain(
      'Answer the question: Where is my order?',
    );
    await screenshot(page, 'prompt-version');

    // The versions side by side, scores included.
    await page.getByRole('tab', { name: 'Compare versions' }).click();
    const table = page.getByRole('table', { name: 'Versions compared' });
    await table.waitFor();
    const scoreRow = table.getByRole('row').filter({ hasText: 'Score: helpfulness' });
    await expect(scoreRow.textContent()).resolves.toMatch(/0\.75.*0\.25/);
    await screenshot(page, 'prompt-compare');

    // The diff of v1 and v2: the changed line removed and added, the rest kept.
    await page.getByRole('tab', { name: 'Diff' }).click();
    const diff = page.getByTestId('prompt-diff').first();
    await expect(diff.locator('[data-diff="removed"]').textContent()).resolves.toContain('Be brief.');
    await expect(diff.locator('[data-diff="added"]').textContent()).resolves.toContain('Be kind and brief.');
    await expect(diff.locator('[data-diff="same"]').first().textContent()).resolves.toContain('Answer the question');

    // The list shows the folder; inside it, the prompt with its labels.
    await page.goto(`/projects/${s.demo.projectId}/prompts`);
    await page.getByTestId('prompt-folder').filter({ hasText: 'support/' }).click();
    const row = page.getByRole('row').filter({ hasText: 'answer' });
    await expect(row.textContent()).resolves.toMatch(/production/);

    // A span that used the prompt links to its version.
    await page.goto(`/projects/${s.demo.projectId}/traces/prompt-web-2`);
    await page.locator('[role="treeitem"]').first().click();
    const link = page.getByTestId('span-prompt');
    await expect(link.textContent()).resolves.toBe(`${NAME} v2`);
    await link.click();
    await page.getByRole('heading', { level: 1, name: NAME }).waitFor();
    await expect(page.locator('.prompt-version[aria-current="true"]').textContent()).resolves.toContain('v2');
    await context.close();
  });

  it('shows a chat prompt as its messages, variables marked, and a name without folder at the root', async () => {
    const s = server();
    const member = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/prompts`,
      token: s.demo.apiKey,
      payload: { name: 'plain', type: 'chat', prompt: [{ role: 'system', content: 'Hi {{name}}' }] },
    });
    expect(member.statusCode).toBe(201);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/prompts/plain`);
    await page.getByTestId('prompt-messages').waitFor();
    await expect(page.getByTestId('prompt-variable').textContent()).resolves.toBe('{{name}}');
    await page.goto(`/projects/${s.demo.projectId}/prompts`);
    await page.getByRole('link', { name: 'plain' }).waitFor();
    await context.close();
  });
});
