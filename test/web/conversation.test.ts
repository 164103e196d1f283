import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer, type WebServer } from '../support/browser.js';
import { iso } from '../support/ingest.js';
import { loadOtlpFixture } from '../support/otlp-fixtures.js';

/**
 * The trace view reads an LLM call as the conversation it was (issue 33 item 4, docs/trace-view.md):
 * the recorded traces of five instrumentation libraries show every message by role and every tool call
 * beside its result; hostile message text, links and tool names render as inert text; the raw-JSON
 * toggle and the text-search marks keep working.
 */

const server = useWebServer();

type StoredSpan = { span_id: string; parent_span_id: string | null; kind: string; input: string | null };

/** Each recording is sent once (its ids are fixed) and read back as stored. */
const ingested = new Map<string, Promise<{ traceId: string; spans: StoredSpan[] }>>();
function ingestFixture(s: WebServer, file: string): Promise<{ traceId: string; spans: StoredSpan[] }> {
  if (!ingested.has(file)) ingested.set(file, sendFixture(s, file));
  return ingested.get(file)!;
}

async function sendFixture(s: WebServer, file: string): Promise<{ traceId: string; spans: StoredSpan[] }> {
  const { body, traceIds } = loadOtlpFixture(file);
  const res = await call(s.h.api, {
    method: 'POST',
    url: `${PUBLIC}/otel/v1/traces`,
    token: s.demo.apiKey,
    payload: body,
    headers: { 'content-type': 'application/json' },
  });
  expect(res.statusCode, res.body).toBe(200);
  const detail = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/traces/${traceIds[0]}`, token: s.demo.apiKey });
  expect(detail.statusCode).toBe(200);
  return { traceId: traceIds[0]!, spans: detail.json().spans };
}

const section = (page: Page, label: 'Input' | 'Output') =>
  page.getByTestId('span-panel').getByRole('list', { name: label, exact: true });

/** The rendered bubbles' roles, and each tool call as [name, its result's text or null]. */
async function rendered(page: Page, label: 'Input' | 'Output') {
  const list = section(page, label);
  await list.waitFor();
  const roles = await list
    .locator(':scope > [data-testid="message"]')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
  const calls = await list
    .getByTestId('tool-call')
    .evaluateAll((els) =>
      els.map((e) => [
        e.querySelector('[data-testid="tool-name"]')?.textContent,
        e.querySelector('[data-testid="tool-result"] pre')?.textContent ?? null,
      ]),
    );
  return { roles, calls };
}

const WEATHER = /"temperature_c": 18/;
const ANSWER = 'It is 18°C and sunny in Paris.';

describe('web application: the conversation view', () => {
  it.each([
    ['langfuse.json', 'Langfuse SDK'],
    ['openinference-openai.json', 'OpenInference'],
    ['traceloop.json', 'OpenLLMetry'],
    ['otel-genai.json', 'OTel GenAI'],
    ['vercel-ai.json', 'Vercel AI SDK'],
  ])('%s: every message by role, every tool call beside its result', async (file) => {
    const s = server();
    const { traceId, spans } = await ingestFixture(s, file);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    // The model call that got the tool's result back.
    const second = spans.find((x) => x.kind === 'llm' && x.input?.includes('temperature_c'))!;
    await page.goto(`/projects/${s.demo.projectId}/traces/${traceId}?span=${second.span_id}`);
    const input = await rendered(page, 'Input');
    // The tool's message is drawn beside the call it answers, so the bubbles are these three.
    expect(input.roles).toEqual(['system', 'user', 'assistant']);
    const weather = input.calls.find(([name]) => name === 'get_weather')!;
    expect(weather[1]).toMatch(WEATHER);
    if (file === 'vercel-ai.json') {
      expect(input.calls).toHaveLength(2);
      expect(input.calls.find(([name]) => name === 'book_table')![1]).toBe('No table free at 20:00');
      await section(page, 'Input').locator('[data-testid="tool-result"].error').waitFor();
    } else expect(input.calls).toHaveLength(1);
    const output = await rendered(page, 'Output');
    expect(output.roles).toEqual(['assistant']);
    await expect(section(page, 'Output').textContent()).resolves.toContain(ANSWER);
    await screenshot(page, `conversation-${file.replace('.json', '')}`);

    // The call that asked for the tool: its calls, no result in this span.
    const first = spans.find((x) => x.kind === 'llm' && x.input && x !== second && !x.input.includes('Klingon'));
    if (first) {
      await page.locator(`[data-span-id="${first.span_id}"]`).click();
      await page.waitForURL(new RegExp(`span=${first.span_id}`));
      await expect
        .poll(async () => (await rendered(page, 'Output')).calls.map(([name]) => name))
        .toContain('get_weather');
      await expect(section(page, 'Output').getByText('No result in this span.').count()).resolves.toBeGreaterThan(0);
    }

    // Raw JSON and back.
    await page.locator(`[data-span-id="${second.span_id}"]`).click();
    await page.waitForURL(new RegExp(`span=${second.span_id}`));
    const panel = page.getByTestId('span-panel');
    await panel.getByRole('button', { name: 'Raw JSON' }).first().click();
    await expect.poll(() => panel.getByLabel('Input', { exact: true }).evaluate((e) => e.tagName)).toBe('PRE');
    await expect(panel.getByLabel('Input', { exact: true }).textContent()).resolves.toContain('"role": "system"');
    await panel.getByRole('button', { name: 'Conversation' }).click();
    await section(page, 'Input').waitFor();
    await context.close();
  });

  it('reads the trace root as a conversation when it is one, and leaves other roots as they were', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    const vercel = await ingestFixture(s, 'vercel-ai.json');
    await page.goto(`/projects/${s.demo.projectId}/traces/${vercel.traceId}`);
    expect((await rendered(page, 'Input')).roles).toEqual(['system', 'user']);
    expect((await rendered(page, 'Output')).roles).toEqual(['assistant']);
    const genai = await ingestFixture(s, 'otel-genai.json');
    await page.goto(`/projects/${s.demo.projectId}/traces/${genai.traceId}`);
    expect((await rendered(page, 'Input')).roles).toEqual(['user']);
    // Langfuse's agent root takes {"question": ...}: no conversation, the JSON as before.
    const langfuse = await ingestFixture(s, 'langfuse.json');
    await page.goto(`/projects/${s.demo.projectId}/traces/${langfuse.traceId}`);
    const input = page.getByTestId('span-panel').getByLabel('Input', { exact: true });
    await expect.poll(() => input.evaluate((e) => e.tagName)).toBe('PRE');
    await expect(input.textContent()).resolves.toContain('"question": "What is the weather in Paris today?"');
    await context.close();
  });

  it('marks a text search’s terms in message text, tool arguments and results', async () => {
    const s = server();
    const { traceId, spans } = await ingestFixture(s, 'vercel-ai.json');
    const second = spans.find((x) => x.kind === 'llm' && x.input?.includes('temperature_c'))!;
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces/${traceId}?span=${second.span_id}&text=paris`);
    const list = section(page, 'Input');
    await list.waitFor();
    // "Paris" in the user's question, the call's arguments and the result.
    await expect.poll(() => list.locator('mark').allInnerTexts()).toEqual(['Paris', 'Paris', 'Paris']);
    await expect(list.getByTestId('message').nth(1).locator('.markdown mark').count()).resolves.toBe(1);
    await context.close();
  });

  it('renders hostile message text, links, images and tool names as inert text', async () => {
    const s = server();
    const t = Date.now() - 60_000;
    const long = `${'A long answer line. '.repeat(100)}\n\nThe end with **bold**.`;
    const res = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/traces`,
      token: s.demo.apiKey,
      payload: {
        spans: [
          {
            trace_id: 'conv-hostile',
            span_id: 'llm-1',
            name: 'chat',
            kind: 'llm',
            start_time: iso(t),
            end_time: iso(t + 1000),
            input: [
              { role: 'system', content: 'Be nice <script>window.__xss = 1</script>' },
              {
                role: 'user',
                content:
                  'Look <img src=x onerror="window.__xss = 2"> and [click me](javascript:window.__xss=3) ' +
                  '<a href="javascript:window.__xss=4">raw link</a> ![pic](https://evil.test/x.png) ' +
                  '[docs](https://example.com/docs) <iframe src="javascript:window.__xss=5"></iframe>',
              },
              {
                role: 'assistant',
                content: [{ type: 'image_url', image_url: { url: 'https://evil.test/part.png' } }],
                tool_calls: [
                  {
                    id: 'c1',
                    type: 'function',
                    function: {
                      name: '<img src=x onerror="window.__xss = 6">',
                      arguments: '{"q":"<script>window.__xss=7</script>"}',
                    },
                  },
                ],
              },
              { role: 'tool', tool_call_id: 'c1', content: '<svg onload="window.__xss = 8"></svg>' },
            ],
            output: { role: 'assistant', content: long },
          },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().rejected).toEqual([]);
    const { context, page } = await newPage(s);
    const dialogs: string[] = [];
    const requests: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('request', (r) => requests.push(r.url()));
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces/conv-hostile?span=llm-1`);
    const input = section(page, 'Input');
    const { roles, calls } = await rendered(page, 'Input');
    expect(roles).toEqual(['system', 'user', 'assistant']);
    // The HTML shows as the text it is.
    await expect(input.getByTestId('message').nth(0).textContent()).resolves.toContain(
      '<script>window.__xss = 1</script>',
    );
    await expect(input.getByTestId('message').nth(1).textContent()).resolves.toContain(
      '<img src=x onerror="window.__xss = 2">',
    );
    expect(calls).toEqual([['<img src=x onerror="window.__xss = 6">', '<svg onload="window.__xss = 8"></svg>']]);
    // No element the text names was made, no javascript: address survives, safe links open apart.
    const panel = page.getByTestId('span-panel');
    for (const selector of ['script', 'iframe', 'svg', 'img', '[onerror]', '[onload]', 'a[href^="javascript"]'])
      await expect(panel.locator(selector).count(), selector).resolves.toBe(0);
    await expect(input.getByText('click me').evaluate((e) => e.tagName)).resolves.toBe('SPAN');
    const docs = input.getByRole('link', { name: 'docs' });
    await expect(docs.getAttribute('href')).resolves.toBe('https://example.com/docs');
    await expect(docs.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(docs.getAttribute('target')).resolves.toBe('_blank');
    // Images are buttons; a click on a remote one gives a link to open it, never an image load here.
    const loads = input.getByTestId('load-image');
    await expect(loads.count()).resolves.toBe(2);
    await loads.first().click();
    const open = input.getByRole('link', { name: /Open image/ });
    await expect(open.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    expect(requests.filter((u) => u.includes('evil.test'))).toEqual([]);
    // The long answer is folded until asked.
    const output = section(page, 'Output');
    await expect(output.textContent()).resolves.not.toContain('The end with');
    await output.getByRole('button', { name: /Show all/ }).click();
    await expect(output.locator('strong').textContent()).resolves.toBe('bold');
    await screenshot(page, 'conversation-hostile');
    expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await context.close();
  });
});
