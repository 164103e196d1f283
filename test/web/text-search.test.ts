import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';
import { iso } from '../support/ingest.js';

/**
 * Text search in the web app (issue 21, item 5): a trace found by its text opens at the matching span
 * with the terms marked, even when the match lies past the fold of a long input; the sessions page
 * searches the text of its sessions' traces, takes the trace list's filters, and shows their errors and duration.
 */

const server = useWebServer();

async function ingest(s: ReturnType<typeof server>, spans: unknown[]) {
  const res = await call(s.h.api, {
    method: 'POST',
    url: `${PUBLIC}/traces`,
    token: s.demo.apiKey,
    payload: { spans },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().rejected).toEqual([]);
}

describe('web application: text search', () => {
  it('opens a trace found by its text at the matching span, the terms marked past the fold', async () => {
    const s = server();
    const t = Date.now() - 120_000;
    // The match is deep in a long input of the 31st span of a long trace.
    const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. '.repeat(60);
    const spans = [
      {
        trace_id: 'web-deep',
        span_id: 'root',
        name: 'agent run',
        kind: 'agent',
        start_time: iso(t),
        end_time: iso(t + 9000),
      },
      ...Array.from({ length: 40 }, (_, i) => ({
        trace_id: 'web-deep',
        span_id: `step-${i}`,
        parent_span_id: 'root',
        name: `step ${i}`,
        kind: 'llm',
        start_time: iso(t + 10 + i * 100),
        end_time: iso(t + 90 + i * 100),
        input: i === 30 ? `${filler} Der Kunde schrieb: Lieferung nach Zürich verspätet. ${filler}` : `step ${i} input`,
      })),
    ];
    await ingest(s, spans);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    await page.getByTestId('trace-row').first().waitFor();
    await page.getByLabel('Search text in inputs, outputs and errors').fill('ZÜRICH verspätet');
    await page.waitForURL(/text=/);
    const rows = page.getByTestId('trace-row');
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().getByTestId('text-match').locator('mark').allInnerTexts()).resolves.toEqual([
      'Zürich',
      'verspätet',
    ]);
    await rows.first().click();
    await page.waitForURL(/span=step-30/);
    expect(new URL(page.url()).searchParams.get('text')).toBe('ZÜRICH verspätet');
    const selected = page.locator('[role="treeitem"][aria-selected="true"]');
    await expect.poll(() => selected.getAttribute('data-span-id')).toBe('step-30');
    // Scrolled to: the selected row is in the viewport.
    await expect.poll(() => selected.evaluate((el) => el.getBoundingClientRect().top < window.innerHeight)).toBe(true);
    // The input is shown whole (its match lies past the fold), the terms marked.
    const input = page.getByTestId('span-panel').getByLabel('Input', { exact: true });
    await expect(input.locator('mark').allInnerTexts()).resolves.toEqual(['Zürich', 'verspätet']);
    await expect(input.textContent()).resolves.toContain(filler.trim());
    // The box is scrolled to its first mark.
    await expect
      .poll(() =>
        input.evaluate((pre) => {
          const mark = pre.querySelector('mark')!.getBoundingClientRect();
          const box = pre.getBoundingClientRect();
          return pre.scrollTop > 0 && mark.top >= box.top && mark.bottom <= box.bottom;
        }),
      )
      .toBe(true);
    await screenshot(page, 'trace-text-match-span');
    // Another span selected keeps the search; one without the terms has nothing marked.
    await page.locator('[data-span-id="step-3"]').click();
    await page.waitForURL(/span=step-3(&|$)/);
    // The URL changes before React renders the new span (a transition): wait for its input, then count.
    const panel = page.getByTestId('span-panel');
    await expect.poll(() => panel.getByLabel('Input', { exact: true }).textContent()).toBe('step 3 input');
    await expect(panel.locator('mark').count()).resolves.toBe(0);
    await context.close();
  });

  it('searches sessions by the text of their traces, filters them by metadata, and shows their errors and duration', async () => {
    const s = server();
    const t = Date.now() - 600_000;
    const turn = (session: string, trace: string, at: number, more: Record<string, unknown>) => ({
      trace_id: trace,
      span_id: `${trace}-s`,
      name: 'turn',
      kind: 'llm',
      session_id: session,
      start_time: iso(t + at),
      end_time: iso(t + at + 2000),
      ...more,
    });
    await ingest(s, [
      turn('web-sess-a', 'wsa-1', 0, { input: 'こんにちは、注文の状況を教えてください' }),
      turn('web-sess-a', 'wsa-2', 60_000, { output: '配送中です', status: 'error', error_message: 'tool timeout' }),
      turn('web-sess-b', 'wsb-1', 120_000, { input: 'hello there', metadata: { plan: 'web-pro' } }),
    ]);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/sessions`);
    await page.getByTestId('session-row').first().waitFor();
    await page.getByLabel('Search sessions by the text of their inputs, outputs and errors').fill('注文');
    await page.waitForURL(/text=/);
    const rows = page.getByTestId('session-row');
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('web-sess-a');
    await expect(rows.first().getByTestId('session-errors').textContent()).resolves.toBe('1');
    await expect(rows.first().getByTestId('session-duration').textContent()).resolves.toBe('1m 2s');
    await screenshot(page, 'sessions-text-search');
    await page.getByLabel('Search sessions in', { exact: true }).selectOption('output');
    await page.waitForURL(/scope=output/);
    await page.getByText('No sessions match').waitFor();
    await page.getByLabel('Search sessions in', { exact: true }).selectOption('error');
    await page.getByLabel('Search sessions by the text of their inputs, outputs and errors').fill('TIMEOUT');
    await expect.poll(() => page.url()).toMatch(/text=TIMEOUT/);
    await expect.poll(() => rows.count()).toBe(1);
    // The trace list's filters, metadata too, in the URL like the traces page's.
    const filters = JSON.stringify([{ field: 'metadata', op: 'eq', key: 'plan', value: 'web-pro' }]);
    await page.goto(`/projects/${s.demo.projectId}/sessions?filters=${encodeURIComponent(filters)}`);
    await expect.poll(() => rows.count()).toBe(1);
    await expect(rows.first().textContent()).resolves.toContain('web-sess-b');
    await page.goto(
      `/projects/${s.demo.projectId}/sessions?filters=${encodeURIComponent(filters)}&text=${encodeURIComponent('注文')}`,
    );
    await page.getByText('No sessions match').waitFor();
    await context.close();
  });
});
