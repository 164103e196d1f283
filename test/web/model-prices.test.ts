import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

const server = useWebServer();

describe('web application: model prices in the project settings', () => {
  it('shows the default table, adds an override that prices the next span, edits and deletes it', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings`);
    await page.getByRole('tab', { name: 'Model prices' }).click();

    // The default table, dated, with a filter.
    await page.getByText(/as of \d{4}-\d{2}-\d{2}/).waitFor();
    await page.getByLabel('Find a model').fill('claude-3-5-haiku');
    const defaults = page.getByTestId('price-default');
    await defaults.first().waitFor();
    expect(await defaults.count()).toBe(1);
    expect(await defaults.first().textContent()).toContain('$0.8');
    await page.getByLabel('Find a model').fill('us.anthropic.claude-3-5-sonnet-20241022-v2:0');
    await page.getByTestId('price-match').getByText('claude-3-5-sonnet', { exact: true }).waitFor();

    // Add an override for a model of the demo's own.
    const form = page.getByRole('form', { name: 'Add a model price' });
    await form.getByLabel('Model pattern').fill('acme-chat');
    await form.getByLabel('Input $/1M', { exact: true }).fill('2');
    await form.getByLabel('Output $/1M', { exact: true }).fill('6');
    await form.getByLabel('Reasoning $/1M').fill('8');
    await form.getByRole('button', { name: 'Add price' }).click();
    const row = page.getByTestId('price-override').filter({ hasText: 'acme-chat' });
    await row.waitFor();
    await screenshot(page, 'settings-model-prices');
    const { rows } = await s.h.ctx.pg.pool.query(
      'SELECT id, input_per_million, output_per_million, reasoning_per_million FROM model_prices WHERE project_id = $1',
      [s.demo.projectId],
    );
    expect(rows).toEqual([
      { id: expect.any(String), input_per_million: 2, output_per_million: 6, reasoning_per_million: 8 },
    ]);

    // The next span of that model is priced with it: 1M input × 2 + 0.5M output × 6 = 5 USD.
    const key = (
      await call(s.h.api, {
        method: 'POST',
        url: `${PUBLIC}/projects/${s.demo.projectId}/api-keys`,
        token: await sessionToken(s),
        payload: { name: 'prices' },
      })
    ).json().key;
    const t0 = Date.now() - 1000;
    const span = {
      trace_id: 'priced-in-browser',
      span_id: 'a',
      name: 'chat',
      kind: 'llm',
      start_time: new Date(t0).toISOString(),
      model_name: 'acme-chat-2025-01-01',
      input_tokens: 1_000_000,
      output_tokens: 500_000,
    };
    expect(
      (await call(s.h.api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans: [span] } }))
        .statusCode,
    ).toBe(200);
    const read = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/traces/priced-in-browser`, token: key });
    expect(read.json().spans[0].cost).toBeCloseTo(5, 9);

    // Edit, then delete.
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('dialog').getByLabel('Output $/1M', { exact: true }).fill('7');
    await page.getByRole('button', { name: 'Save price' }).click();
    await page.getByRole('dialog').waitFor({ state: 'detached' });
    await row.getByText('$7').waitFor();
    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached' });
    const after = await s.h.ctx.pg.pool.query('SELECT count(*)::int AS n FROM model_prices WHERE project_id = $1', [
      s.demo.projectId,
    ]);
    expect(after.rows[0].n).toBe(0);
    await context.close();
  });
});

/** A session token of the demo user, for the API calls beside the browser. */
async function sessionToken(s: ReturnType<typeof server>): Promise<string> {
  const res = await call(s.h.web, {
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: s.demo.email, password: s.demo.password },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().session_token;
}
