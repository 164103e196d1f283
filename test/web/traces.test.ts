import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';
import { iso } from '../support/ingest.js';

const server = useWebServer();

describe('web application: traces', () => {
  it('lists traces, narrows them with a filter chip and a search, and keeps both in the URL', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    const rows = page.getByTestId('trace-row');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(50);
    await expect(page.getByTestId('page-summary').textContent()).resolves.toMatch(/^1–50 of [1-9]\d\d$/);
    await screenshot(page, 'traces');

    await page.getByRole('button', { name: '+ Add filter' }).click();
    await page.getByRole('menuitem', { name: /^Status/ }).click();
    await page.getByRole('group', { name: 'Status values' }).getByLabel('error').check();
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByTestId('filter-chip').filter({ hasText: 'Status is error' }).waitFor();
    await page.waitForURL(/filters=/);
    await expect.poll(async () => page.locator('[data-testid="trace-row"]:not(:has(.badge.error))').count()).toBe(0);
    const errorTotal = await page.getByTestId('page-summary').textContent();

    const name = (await rows.first().locator('td').nth(1).locator('a').textContent())!;
    await page.getByLabel('Search traces').fill(name);
    await page.waitForURL(/q=/);
    await expect.poll(async () => (await rows.allInnerTexts()).every((t) => t.includes(name))).toBe(true);
    expect(await page.getByTestId('page-summary').textContent()).not.toBe(errorTotal);
    await screenshot(page, 'traces-filtered');

    // The URL alone reproduces the view.
    const shared = page.url();
    const other = await context.newPage();
    await other.goto(shared);
    await other.getByTestId('filter-chip').filter({ hasText: 'Status is error' }).waitFor();
    await expect(other.getByLabel('Search traces').inputValue()).resolves.toBe(name);
    await context.close();
  });

  it('opens a trace_url, draws the span tree and timeline, and shows a failed span', async () => {
    const s = server();
    const listed = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/traces?limit=1&filters=${encodeURIComponent(JSON.stringify([{ field: 'status', op: 'in', value: ['error'] }]))}`,
      token: s.demo.apiKey,
    });
    const trace = listed.json().data[0];
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(new URL(trace.trace_url).pathname);
    await page.getByTestId('waterfall').waitFor();
    const spans = page.locator('[role="treeitem"]');
    await expect.poll(() => spans.count()).toBe(trace.span_count);
    const failed = page.locator('[role="treeitem"][data-status="error"]').last();
    await failed.click();
    await page.getByTestId('span-error').waitFor();
    const panel = page.getByTestId('span-panel');
    await expect(panel.getByRole('heading', { level: 3, name: 'Input' }).isVisible()).resolves.toBe(true);
    const bar = await failed.locator('.span-bar').boundingBox();
    expect(bar!.width).toBeGreaterThan(0);
    await screenshot(page, 'trace');
    const failedId = (await failed.getAttribute('data-span-id'))!;
    await context.close();

    // Usable at phone width: the tree and the panel stack.
    const phone = await newPage(s, { width: 390, height: 844 });
    await logIn(phone.page, s.demo.email, s.demo.password);
    await phone.page.goto(`${new URL(trace.trace_url).pathname}?span=${encodeURIComponent(failedId)}`);
    await phone.page.getByTestId('span-error').waitFor();
    await screenshot(phone.page, 'trace-phone', true);
    await phone.context.close();
  });
  it('shows a span’s cost source, cache and reasoning tokens, streaming timings, events, links, attributes and resource', async () => {
    const s = server();
    const t = Date.now() - 60_000;
    const stack = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nValueError: bad value';
    const spans = [
      {
        trace_id: 'web-details',
        span_id: 'root',
        name: 'agent',
        kind: 'agent',
        start_time: iso(t),
        end_time: iso(t + 3000),
        metadata: { release: 'v1.4.0', version: 'flow-2' },
      },
      {
        trace_id: 'web-details',
        span_id: 'llm',
        parent_span_id: 'root',
        name: 'chat',
        kind: 'llm',
        model_name: 'demo-model',
        start_time: iso(t + 100),
        end_time: iso(t + 2100),
        status: 'error',
        error_type: 'ValueError',
        error_message: 'bad value',
        cost: 0.0125,
        input_tokens: 2000,
        output_tokens: 300,
        cache_read_tokens: 1500,
        cache_write_tokens: 64,
        reasoning_tokens: 120,
        time_to_first_token_ms: 500,
        events: [
          {
            name: 'exception',
            time: iso(t + 1500),
            attributes: {
              'exception.type': 'ValueError',
              'exception.message': 'bad value',
              'exception.stacktrace': stack,
            },
          },
        ],
        links: [{ trace_id: 'web-batch', span_id: 'b-1', attributes: { 'link.kind': 'follows_from' } }],
        resource: { 'service.name': 'chat-svc', 'host.name': 'web-1' },
        attributes: { 'gen_ai.response.id': 'resp-77' },
        metadata: { tenant: 'acme' },
      },
    ];
    const res = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: s.demo.apiKey,
      payload: { spans },
    });
    expect(res.json()).toMatchObject({ accepted: 2, rejected: [] });
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces/web-details?span=llm`);
    const panel = page.getByTestId('span-panel');
    await panel.getByTestId('span-events').waitFor();
    await expect(panel.getByTestId('span-cost').textContent()).resolves.toMatch(/\$0\.0125 · sent by the producer/);
    await expect(panel.getByTestId('span-cache').textContent()).resolves.toMatch(/1[,.\u202f ]?500 read · 64 written/);
    await expect(panel.getByTestId('span-ttft').textContent()).resolves.toBe('after 500 ms');
    // Computed at ingest: 300 tokens over the 1.5 s after the first token.
    await expect(panel.getByTestId('span-tps').textContent()).resolves.toBe('200 tokens/s');
    await expect(panel.getByLabel('Stack trace').textContent()).resolves.toBe(stack);
    await expect(
      panel.getByTestId('span-links').getByRole('link', { name: 'web-batch / b-1' }).isVisible(),
    ).resolves.toBe(true);
    // Resource attributes sit apart from the metadata, folded.
    await panel.getByTestId('span-resource').locator('summary').click();
    await expect(panel.getByLabel('Resource attributes').textContent()).resolves.toContain('chat-svc');
    await expect(panel.getByRole('table').first().textContent()).resolves.not.toContain('chat-svc');
    // The instrumentation's attributes sit apart from the metadata too (docs/traces.md, "Metadata and attributes").
    await expect(panel.getByLabel('Attributes', { exact: true }).textContent()).resolves.toContain('resp-77');
    await expect(panel.getByLabel('Metadata', { exact: true }).textContent()).resolves.not.toContain('resp-77');
    // The app's release and version (the user's metadata) in the trace header.
    const summary = page.getByTestId('trace-summary');
    await expect(summary.textContent()).resolves.toMatch(/Release\s*v1\.4\.0/);
    await expect(summary.textContent()).resolves.toMatch(/Version\s*flow-2/);
    await screenshot(page, 'trace-span-details');
    await context.close();
  });

  it('searches the text of inputs and outputs, highlights the match and opens the trace at the matching span', async () => {
    const s = server();
    const t = Date.now() - 60_000;
    const spans = [
      {
        trace_id: 'web-text-1',
        span_id: 'wt-root',
        name: 'support chat',
        kind: 'agent',
        start_time: iso(t),
        end_time: iso(t + 3000),
        input: 'hello',
      },
      {
        trace_id: 'web-text-1',
        span_id: 'wt-llm',
        parent_span_id: 'wt-root',
        name: 'answer',
        kind: 'llm',
        start_time: iso(t + 10),
        end_time: iso(t + 2000),
        output: '您的订单已发货，请查收 Ваш ЗАКАЗ готов',
      },
    ];
    const ingested = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: s.demo.apiKey,
      payload: { spans },
    });
    expect(ingested.statusCode).toBe(200);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    await page.getByTestId('trace-row').first().waitFor();
    await page.getByLabel('Search text in inputs, outputs and errors').fill('订单 заказ');
    await page.waitForURL(/text=/);
    const rows = page.getByTestId('trace-row');
    await expect.poll(() => rows.count()).toBe(1);
    const match = rows.first().getByTestId('text-match');
    await expect(match.locator('mark').allInnerTexts()).resolves.toEqual(['订单', 'ЗАКАЗ']);
    await expect(match.textContent()).resolves.toContain('output');
    await screenshot(page, 'traces-text-search');
    // Scoped to inputs, the output's words are not found.
    await page.getByLabel('Search text in', { exact: true }).selectOption('input');
    await page.waitForURL(/scope=input/);
    await page.getByText('No traces match').waitFor();
    await page.getByLabel('Search text in', { exact: true }).selectOption('all');
    await rows.first().waitFor();
    await rows.first().click();
    await page.waitForURL(/span=wt-llm/);
    await expect
      .poll(() => page.locator('[role="treeitem"][aria-selected="true"]').getAttribute('data-span-id'))
      .toBe('wt-llm');
    await context.close();
  });
});
