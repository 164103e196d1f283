import { describe, expect, it } from 'vitest';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

const server = useWebServer();

describe('web application: dashboards', () => {
  it('draws the Overview dashboard with sized charts, and adds a widget through the editor with a live preview', async () => {
    const s = server();
    const { context, page } = await newPage(s, { width: 1280, height: 1000 });
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/dashboards`);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: /Overview/ }).waitFor();
    const widgets = page.getByTestId('widget');
    await expect.poll(() => widgets.count()).toBe(9);
    // Every chart is a canvas of real size (uPlot draws on canvas).
    await expect.poll(() => page.locator('[data-testid="time-chart"] canvas').count()).toBe(7);
    for (const canvas of await page.locator('[data-testid="time-chart"] canvas').all()) {
      const box = await canvas.boundingBox();
      expect(box!.width).toBeGreaterThan(200);
      expect(box!.height).toBeGreaterThan(100);
    }
    await screenshot(page, 'dashboard');

    await page.getByRole('button', { name: '7d' }).click();
    await page.waitForURL(/range=7d/);

    await page.getByRole('button', { name: 'Add widget' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a widget' });
    await dialog.getByLabel('Title').fill('Spans by kind');
    await dialog.getByLabel('Type').selectOption('bar');
    await dialog.getByLabel('Add a group').selectOption('kind');
    // The preview answers the spec as it is edited: bars per kind (llm, tool, ...).
    const previewBars = dialog.getByTestId('widget-preview').locator('.bar-label');
    await expect.poll(async () => (await previewBars.allTextContents()).includes('llm')).toBe(true);
    await screenshot(page, 'widget-editor');
    await dialog.getByRole('button', { name: 'Add widget' }).click();
    await dialog.waitFor({ state: 'detached' });
    await expect.poll(() => widgets.count()).toBe(10);
    const added = page.getByRole('region', { name: 'Spans by kind' });
    await added.getByTestId('bar-chart').waitFor();
    expect(await added.locator('.bar-row').count()).toBeGreaterThan(2);

    // Edit it into a single number, then delete it.
    await added.getByRole('button', { name: 'Edit Spans by kind' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit widget' });
    await edit.getByLabel('Type').selectOption('stat');
    await edit.getByRole('button', { name: 'Save widget' }).click();
    await added.getByTestId('stat-value').waitFor();
    page.once('dialog', (d) => void d.accept());
    await added.getByRole('button', { name: 'Delete Spans by kind' }).click();
    await expect.poll(() => widgets.count()).toBe(9);
    await context.close();
  });

  it('shows an unknown dashboard as not found', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/dashboards/00000000-0000-4000-8000-000000000000`);
    await page.getByText('This dashboard was not found').waitFor();
    await context.close();
  });
});
