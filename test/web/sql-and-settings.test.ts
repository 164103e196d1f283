import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

const server = useWebServer();

describe('web application: SQL console and settings', () => {
  it('runs SQL with Ctrl+Enter and shows rows, and shows the guard refusing a query', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/sql`);
    const editor = page.getByLabel('SQL query');
    await editor.fill('SELECT name, count() AS traces FROM traces GROUP BY name ORDER BY traces DESC');
    await editor.press('Control+Enter');
    await page.getByTestId('sql-result').waitFor();
    expect(await page.locator('[data-testid="sql-result"] tbody tr').count()).toBeGreaterThan(1);
    await expect(page.getByTestId('sql-summary').textContent()).resolves.toMatch(/\d+ rows · /);
    await screenshot(page, 'sql');

    await editor.fill('DROP TABLE spans');
    await page.getByRole('button', { name: 'Run' }).click();
    await page.getByTestId('sql-refusal').waitFor();
    await context.close();
  });

  it('creates an API key shown once, which then works, and revokes it', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings`);
    await page.getByLabel('Key name').fill('browser key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!.trim();
    expect(key).toMatch(/^sl_[0-9a-f-]{36}$/);
    await screenshot(page, 'settings-new-key');
    const who = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key });
    expect(who.statusCode).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();

    const row = page.getByTestId('key-row').filter({ hasText: 'browser key' });
    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.waitFor({ state: 'detached' });
    expect((await call(s.h.api, { method: 'GET', url: `${PUBLIC}/whoami`, token: key })).statusCode).toBe(401);

    // Members and retention.
    await page.getByRole('tab', { name: 'Members' }).click();
    await page.getByRole('cell', { name: s.demo.email }).waitFor();
    await page.getByRole('tab', { name: 'Project' }).click();
    const ttl = page.getByLabel('Retention: keep traces for (days)');
    await ttl.fill('45');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const { rows } = await s.h.ctx.pg.pool.query('SELECT trace_ttl_days FROM projects WHERE id = $1', [
      s.demo.projectId,
    ]);
    expect(rows[0].trace_ttl_days).toBe(45);
    await screenshot(page, 'settings-project');
    await context.close();
  });
});
