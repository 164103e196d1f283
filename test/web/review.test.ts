import { describe, expect, it } from 'vitest';
import { call, PUBLIC, signUp } from '../support/harness.js';
import { iso } from '../support/ingest.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

/**
 * The review screen (docs/annotation.md): a queue made from a trace-list filter, two reviewers on
 * different items, a review done with the keyboard alone (a category, a number, a comment), its
 * scores and comment on the trace and as a filter of the trace list, an expired hold freeing its item,
 * and an item added to a dataset's next version. Hostile text in a trace and a comment shows as text.
 */
const server = useWebServer();

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

describe('web application: annotation', () => {
  it('creates a queue from a filter, reviews with the keyboard, and adds an item to a dataset', async () => {
    const s = server();
    const key = s.demo.apiKey;
    const api = (method: 'GET' | 'POST', path: string, payload?: unknown, token = key) =>
      call(s.h.api, {
        method,
        url: `${PUBLIC}${path}`,
        token,
        ...(payload === undefined ? {} : { payload: payload as object }),
      });

    // Three traces of their own environment; the configs and a dataset, with the project's key.
    const t0 = Date.now() - 60_000;
    const spans = [1, 2, 3].map((n) => ({
      trace_id: `review-${n}`,
      span_id: `review-${n}-root`,
      name: 'answer',
      kind: 'llm',
      environment: 'review-env',
      start_time: iso(t0 + n * 1000),
      end_time: iso(t0 + n * 1000 + 50),
      input: n === 3 ? HOSTILE : `question ${n}`,
      output: `answer ${n}`,
    }));
    expect((await api('POST', '/traces', { spans })).json()).toEqual({ accepted: 3, rejected: [] });
    for (const config of [
      {
        name: 'quality',
        data_type: 'categorical',
        categories: [
          { label: 'good', value: 1 },
          { label: 'bad', value: 0 },
        ],
      },
      { name: 'accuracy', data_type: 'numeric', min_value: 0, max_value: 10 },
    ])
      expect((await api('POST', '/score-configs', config)).statusCode).toBe(201);
    const dataset = (await api('POST', '/datasets', { name: 'golden' })).json();
    const v1 = await api('POST', `/datasets/${dataset.id}/versions`, {
      test_cases: [{ input: 'seed', expected: 'x' }],
    });
    expect(v1.statusCode, v1.body).toBe(201);

    // A second reviewer, MEMBER of the demo workspace.
    const demoLogin = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: s.demo.email, password: s.demo.password },
    });
    const reviewer = await signUp(s.h, 'reviewer');
    const added = await api(
      'POST',
      `/workspaces/${s.demo.workspaceId}/members`,
      { email: reviewer.user.email, role: 'MEMBER' },
      demoLogin.json().session_token,
    );
    expect(added.statusCode, added.body).toBe(201);

    // Create the queue from a filter in the browser.
    const { page } = await newPage(s);
    page.on('dialog', (d) => void d.dismiss());
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/annotation`);
    await page.getByRole('button', { name: 'New queue' }).click();
    const form = page.getByRole('form', { name: 'New annotation queue' });
    await form.getByLabel('Name').fill('Review env');
    await form.getByLabel(/^quality/).check();
    await form.getByLabel(/^accuracy/).check();
    await form.getByRole('button', { name: '+ Add filter' }).click();
    await form.getByRole('menuitem', { name: /^Environment/ }).click();
    await form.getByLabel('Other values').fill('review-env');
    await form.getByRole('button', { name: 'Apply' }).click();
    await form.getByTestId('filter-chip').waitFor();
    await form.getByRole('button', { name: 'Create queue' }).click();
    await page.waitForURL(/\/annotation\/[0-9a-f-]{36}$/);
    const queueId = page.url().split('/').pop()!;
    const progress = page.getByTestId('progress');
    await expect.poll(() => progress.textContent()).toBe('Done 0·Left 3');
    const item = page.getByTestId('review-item');
    await item.waitFor();
    const first = await item.getAttribute('data-item-id');
    // The filter's traces, newest first: the hostile one first, shown as text.
    await expect.poll(() => page.getByTestId('review-trace-id').textContent()).toBe('review-3');
    await expect.poll(() => page.getByTestId('review-trace').textContent()).toContain(HOSTILE);
    await screenshot(page, 'review');

    // The second reviewer gets another item.
    const second = await newPage(s);
    await logIn(second.page, reviewer.user.email, reviewer.password);
    await second.page.goto(`/projects/${s.demo.projectId}/annotation/${queueId}`);
    const otherItem = second.page.getByTestId('review-item');
    await otherItem.waitFor();
    const secondId = await otherItem.getAttribute('data-item-id');
    expect(secondId).not.toBe(first);
    await expect.poll(() => second.page.getByTestId('review-trace-id').textContent()).toBe('review-2');

    // Keyboard alone: 1 = good, ↓ to accuracy, 7, then c and a comment, Enter submits.
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('1');
    await expect.poll(() => page.getByRole('button', { name: '1 good' }).getAttribute('aria-pressed')).toBe('true');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('7');
    await expect.poll(() => page.getByLabel('accuracy').inputValue()).toBe('7');
    await page.keyboard.press('Escape');
    await page.keyboard.press('c');
    await page.keyboard.type(`reviewed ${HOSTILE}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => progress.textContent()).toBe('Done 1·Left 2');
    // The next item for this reviewer: the oldest one nobody holds.
    await expect.poll(() => page.getByTestId('review-trace-id').textContent()).toBe('review-1');

    const scores = (await api('GET', '/scores?trace_id=review-3')).json().data;
    expect(
      scores
        .map((x: { name: string; value: number; string_value: string | null; source: string }) => [
          x.name,
          x.value,
          x.string_value,
          x.source,
        ])
        .sort(),
    ).toEqual([
      ['accuracy', 7, null, 'annotation'],
      ['quality', 1, 'good', 'annotation'],
    ]);

    // The dataset: this item's input, the output edited as the expected one, in a new version.
    const panel = page.getByTestId('add-to-dataset');
    await panel.locator('summary').click();
    await panel.getByLabel('Dataset').selectOption(dataset.id);
    await panel.getByLabel('Expected output').fill('a better answer');
    await panel.getByRole('button', { name: 'Add as a new version' }).click();
    await expect.poll(() => panel.getByTestId('dataset-added').textContent()).toBe('Added: version 2 (2 cases)');
    const versions = (await api('GET', `/datasets/${dataset.id}`)).json().versions;
    const v2 = (await api('GET', `/dataset-versions/${versions[0].dataset_version_id}`)).json();
    expect(v2.items.map((c: { input: unknown; expected: unknown }) => [c.input, c.expected])).toEqual([
      ['seed', 'x'],
      ['question 1', 'a better answer'],
    ]);

    // An expired hold frees its item: the second reviewer walked away from review-2, and once that hold
    // has run out (moved into the past here rather than waited for), skipping review-1 brings review-2.
    await s.h.ctx.pg.pool.query(
      `UPDATE annotation_queue_items SET held_until = now() - interval '1 second' WHERE id = $1`,
      [secondId],
    );
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('s');
    await expect.poll(() => page.getByTestId('review-trace-id').textContent()).toBe('review-2');
    expect(await page.getByTestId('review-item').getAttribute('data-item-id')).toBe(secondId);

    // The reviewed trace shows its scores and the comment with its author, as text.
    await page.goto(`/projects/${s.demo.projectId}/traces/review-3`);
    await page.getByTestId('trace-scores').waitFor();
    const rows = page.getByTestId('trace-scores').getByTestId('score-row');
    await expect.poll(() => rows.count()).toBe(2);
    const quality = rows.filter({ hasText: 'quality' });
    expect(await quality.getByTestId('score-value').textContent()).toBe('good');
    expect((await quality.innerText()).toLowerCase()).toContain('annotation');
    const accuracy = rows.filter({ hasText: 'accuracy' });
    expect(await accuracy.getByTestId('score-value').textContent()).toBe('7');
    await expect.poll(() => page.getByTestId('comment-text').first().textContent()).toBe(`reviewed ${HOSTILE}`);
    expect(await page.getByTestId('comment-author').first().textContent()).toBeTruthy();
    // Another comment from the trace view.
    await page.getByLabel('New comment').fill('second look');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await expect.poll(() => page.getByTestId('comment').count()).toBe(2);
    await screenshot(page, 'trace-comments', true);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);

    // The review's scores filter the trace list: quality is good leaves the reviewed trace alone.
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    const traceRows = page.getByTestId('trace-row');
    await traceRows.first().waitFor();
    await page.getByRole('button', { name: '+ Add filter' }).click();
    await page.getByRole('menuitem', { name: /^Score/ }).click();
    const editor = page.getByTestId('score-filter-editor');
    await editor.getByLabel('Score name').fill('quality');
    await editor.getByLabel('Operator').selectOption('in');
    await editor.getByLabel('Score labels').fill('good');
    await editor.getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('filter-chip').filter({ hasText: 'Score quality is good' }).waitFor();
    await expect.poll(() => traceRows.count()).toBe(1);
    await expect(traceRows.first().textContent()).resolves.toContain('review-3');
    await second.context.close();
  }, 240_000);
});
