import { describe, expect, it } from 'vitest';
import { call, createProject, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';
import { runVercelAi } from './scenarios/vercel-ai.js';
import { listenOnLoopback, waitForTrace } from './support/read-back.js';
import { waitUntil } from '../support/wait.js';
import { ingestSpans, iso } from '../support/ingest.js';
import { AGENT_NAME, FAILING_TOOL_NAME, TOOL_NAME } from './support/scenario.js';

/**
 * What a new user met (issue 37), in the browser: a Vercel AI SDK trace is named after its
 * functionId, its tool spans after their tools, and its parent rows show their children's cost; the
 * Evaluations empty state promises nothing that doesn't exist; the API docs are linked; an API key
 * that was used says when.
 */

const server = useWebServer();

describe('web application, as a new user meets it', () => {
  it('shows a Vercel AI SDK trace by its functionId, tools by name, and the cost of its children on parent rows', async () => {
    const s = server();
    const origin = await listenOnLoopback(s.h);
    // The mock model of ai/test: no provider is called.
    const { traceId } = await runVercelAi({
      origin,
      apiKey: s.demo.apiKey,
      openaiBaseUrl: 'http://127.0.0.1:9/unused',
    });
    const trace = await waitForTrace(s.h, s.demo.apiKey, traceId, 5);
    const childCost = trace.spans.filter((x) => x.parent_span_id !== null).reduce((n, x) => n + x.cost, 0);
    expect(childCost).toBeGreaterThan(0);

    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces/${traceId}`);
    await expect.poll(() => page.locator('h1').textContent()).toBe(AGENT_NAME);
    const rows = page.getByRole('treeitem');
    await rows.filter({ hasText: TOOL_NAME }).first().waitFor();
    await rows.filter({ hasText: FAILING_TOOL_NAME }).first().waitFor();
    expect(await rows.filter({ hasText: 'ai.toolCall' }).count()).toBe(0);

    // The root row: $0 of its own, its children's cost shown as its roll-up.
    const root = trace.spans.find((x) => x.parent_span_id === null)!;
    expect(root.cost).toBe(0);
    const rootRow = page.locator(`[data-span-id="${root.span_id}"]`);
    await expect.poll(() => rootRow.getByTestId('span-row-cost').textContent()).toMatch(/^Σ \$\d/);
    await rootRow.click();
    const panel = page.getByTestId('span-panel');
    await expect.poll(() => panel.getByTestId('span-rollup').textContent()).toMatch(/^\$\d/);
    expect(await panel.getByTestId('span-cost').textContent()).toMatch(/^\$0 /);
    // OTel's unset status is no status: no badge says "unset".
    expect(root.status).toBe('unset');
    expect(await panel.getByText('unset', { exact: true }).count()).toBe(0);
    await screenshot(page, 'trace-vercel-rollup');
    await context.close();
  });

  it('links the API docs, shows an honest Evaluations empty state, and when a key was last used', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    const link = page.getByRole('link', { name: 'API docs' });
    expect(await link.getAttribute('href')).toBe('/docs');
    const docs = await page.request.get('/docs', { maxRedirects: 0 });
    expect(docs.status()).toBe(302);
    expect(docs.headers().location).toMatch(/\/docs$/);

    // A project with no evaluation: the empty state names the API, not an SDK or CLI that don't exist.
    const session = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: s.demo.email, password: s.demo.password },
    });
    const token = session.json().session_token as string;
    const project = await createProject(s.h, token, s.demo.workspaceId);
    await page.goto(`/projects/${project.id}/evaluations`);
    const empty = page.getByText('No evaluations yet');
    await empty.waitFor();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain('POST /evaluation-runs');
    expect(text).not.toMatch(/SDK or CLI/);

    // The demo key was used above (and in the previous test): its row says when.
    expect((await call(s.h.api, { method: 'GET', url: `${PUBLIC}/whoami`, token: s.demo.apiKey })).statusCode).toBe(
      200,
    );
    await waitUntil(
      async () =>
        (await s.h.ctx.pg.pool.query('SELECT last_used_at FROM api_keys WHERE project_id = $1', [s.demo.projectId]))
          .rows[0]?.last_used_at != null,
      'the demo key marked used',
    );
    await page.goto(`/projects/${s.demo.projectId}/settings`);
    const row = page.getByTestId('key-row').first();
    await row.waitFor();
    await expect.poll(async () => (await row.locator('td').nth(4).textContent())?.trim()).not.toBe('–');
    await context.close();
  });

  it('sorts the trace list by a column, lets columns be chosen, and shows model and tags columns', async () => {
    const s = server();
    const now = Date.now();
    await ingestSpans(s.h, s.demo.apiKey, [
      {
        trace_id: 'nu-tagged',
        span_id: 'root',
        name: 'tagged-trace',
        start_time: iso(now - 60_000),
        end_time: iso(now - 59_000),
        tags: ['vip'],
        model_name: 'gpt-4o',
        cost: 1234,
      },
    ]);
    const { context, page } = await newPage(s, { width: 1440, height: 900 });
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    const table = page.getByTestId('trace-table');
    await table.waitFor();
    const headers = async () =>
      (await table.locator('thead th').allTextContents()).map((t) => t.replace(/[▲▼]/g, '').trim());
    expect(await headers()).toEqual(expect.arrayContaining(['Model', 'Tags']));
    expect(await headers()).not.toContain('Metadata');

    // Sorted by cost, most expensive first: the tagged trace (cost 1234) leads.
    await table.getByRole('button', { name: 'Cost' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('sort')).toBe('total_cost');
    const first = page.getByTestId('trace-row').first();
    await expect.poll(() => first.locator('[data-column="name"] a').textContent()).toBe('tagged-trace');
    expect(await first.locator('[data-column="model"]').textContent()).toBe('gpt-4o');
    // Ascending on a second click.
    await table.getByRole('button', { name: /Cost/ }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('order')).toBe('asc');

    // Choosing a column shows it, and the choice outlives a reload.
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('group', { name: 'Columns' }).getByLabel('Metadata').check();
    await expect.poll(headers).toContain('Metadata');
    await page.reload();
    await table.waitFor();
    await expect.poll(headers).toContain('Metadata');

    // A tag filters the list to its traces.
    await page.goto(`/projects/${s.demo.projectId}/traces?sort=total_cost`);
    await page
      .getByTestId('trace-row')
      .first()
      .locator('[data-column="tags"]')
      .getByRole('button', { name: 'vip' })
      .click();
    await expect.poll(() => new URL(page.url()).searchParams.get('filters')).toContain('"tags"');
    await expect.poll(() => page.getByTestId('trace-row').count()).toBe(1);
    await screenshot(page, 'trace-list-columns');
    await context.close();
  });
});
