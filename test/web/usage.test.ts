import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer, type WebServer } from '../support/browser.js';
import { usageMeterOf } from '../../src/controls/usage.js';

/**
 * The usage page (issue 35): the project's usage per UTC day in a chart and a table, its storage, and the
 * workspace's total with each project's share; the settings tabs of masking, quotas and sampling; and the
 * sampled banner on the dashboards and alerts pages.
 */

const server = useWebServer();

async function sessionToken(s: WebServer): Promise<string> {
  const res = await call(s.h.web, {
    method: 'POST',
    url: '/api/auth/login',
    payload: { email: s.demo.email, password: s.demo.password },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().session_token;
}

/** Sends `count` spans of one trace to the project with a new key of its own; answers that key. */
async function ingest(s: WebServer, token: string, projectId: string, count: number, trace: string) {
  const created = await call(s.h.api, {
    method: 'POST',
    url: `${PUBLIC}/projects/${projectId}/api-keys`,
    token,
    payload: { name: `usage ${trace}` },
  });
  expect(created.statusCode, created.body).toBe(201);
  const key = created.json().key as string;
  const start = Date.now() - 60_000;
  const spans = Array.from({ length: count }, (_, i) => ({
    trace_id: trace,
    span_id: `s${i}`,
    name: 'chat',
    kind: 'llm',
    start_time: new Date(start + i).toISOString(),
    input: `question ${i} from ann@example.com`,
  }));
  const res = await call(s.h.api, { method: 'POST', url: `${PUBLIC}/traces`, token: key, payload: { spans } });
  expect(res.statusCode, res.body).toBe(200);
  return key;
}

describe('web application: usage and producer controls', () => {
  it('shows the project’s usage per day in a chart and a table, and the workspace’s total per project', async () => {
    const s = server();
    const token = await sessionToken(s);
    const other = await call(s.h.api, {
      method: 'POST',
      url: `${PUBLIC}/projects`,
      token,
      payload: { name: 'usage-other', workspace_id: (await workspaceOf(s, token)) as string },
    });
    expect(other.statusCode, other.body).toBe(201);
    const otherId = other.json().id as string;
    await ingest(s, token, s.demo.projectId, 7, 'usage-demo');
    await ingest(s, token, otherId, 5, 'usage-other');
    // The meter writes every few seconds; written now, the page reads what was sent.
    await usageMeterOf(s.h.ctx).flush();
    const usage = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${s.demo.projectId}/usage`,
      token,
    });
    const today = new Date().toISOString().slice(0, 10);
    const todays = (usage.json().data as { date: string; spans: number }[]).find((d) => d.date === today)!;
    expect(todays.spans).toBeGreaterThanOrEqual(7);

    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/traces`);
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage' }).waitFor();
    // The chart: uPlot's canvas, drawn from the answer's days.
    await page.getByTestId('time-chart').locator('canvas').first().waitFor();
    const row = page.getByTestId('usage-table').locator('tbody tr').first();
    await expect.poll(() => row.locator('td').first().textContent()).toBe(today);
    expect(await row.locator('td').nth(1).textContent()).toBe(todays.spans.toLocaleString('en-US'));
    await page.getByTestId('usage-storage').waitFor();
    await page.getByLabel('Measure').selectOption('bytes');
    await expect.poll(() => page.getByTestId('usage-total').textContent()).toMatch(/\d+(\.\d)? (B|KB|MB) in 30 days/);

    // The workspace: each project's spans and the total of both.
    const projects = page.getByTestId('workspace-usage-project');
    await projects.filter({ hasText: 'usage-other' }).waitFor();
    expect(await projects.filter({ hasText: 'usage-other' }).locator('td').nth(1).textContent()).toBe('5');
    const totalSpans = await page.getByTestId('workspace-usage-total').locator('td').nth(1).textContent();
    expect(Number(totalSpans!.replace(/,/g, ''))).toBe(todays.spans + 5);
    await screenshot(page, 'usage-page', true);
    await context.close();
  });

  it('saves masking and quotas in the settings; a pattern the engine can’t run is refused with its reason', async () => {
    const s = server();
    const token = await sessionToken(s);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings`);

    await page.getByRole('tab', { name: 'Masking' }).click();
    const masking = page.getByTestId('masking-form');
    await masking.getByLabel('E-mail addresses').check();
    await masking.getByLabel('Payment cards (Luhn-checked)').check();
    await masking.getByRole('button', { name: 'Add a pattern' }).click();
    const pattern = masking.getByTestId('masking-pattern').first();
    await pattern.getByLabel('Name').fill('order');
    await pattern.getByLabel('Pattern').fill('(ORD)-\\1');
    await masking.getByRole('button', { name: 'Save masking' }).click();
    await masking.locator('.form-error').waitFor();
    expect(await masking.locator('.form-error').textContent()).toMatch(/linear-time engine/);
    await pattern.getByLabel('Pattern').fill('ORD-[0-9]{5}');
    await masking.getByLabel('What a match becomes').selectOption('hash');
    await masking.getByRole('button', { name: 'Save masking' }).click();
    await masking.getByText('Saved.', { exact: false }).waitFor();
    await screenshot(page, 'settings-masking');
    const saved = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${s.demo.projectId}/masking`,
      token,
    });
    expect(saved.json()).toEqual({
      detectors: ['email', 'payment_card'],
      patterns: [{ name: 'order', pattern: 'ORD-[0-9]{5}' }],
      action: 'hash',
    });
    // Spans sent from now on are masked so.
    const key = await ingest(s, token, s.demo.projectId, 1, 'usage-masked');
    const span = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/traces/usage-masked`, token: key });
    const input = JSON.stringify(span.json().spans[0].input);
    expect(input).toMatch(/question 0 from \[EMAIL:[0-9a-f]{8}\]/);
    expect(input).not.toContain('ann@example.com');

    await page.getByRole('tab', { name: 'Quotas' }).click();
    const quotas = page.getByTestId('quotas-form');
    await quotas.getByLabel('Spans per day').fill('1000000');
    await quotas.getByRole('button', { name: 'Save quotas' }).click();
    await quotas.getByText('Saved.').waitFor();
    const read = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/projects/${s.demo.projectId}/quotas`, token });
    expect(read.json()).toEqual({ spans_per_day: 1000000 });
    await quotas.getByLabel('Spans per day').fill('');
    await quotas.getByRole('button', { name: 'Save quotas' }).click();
    await expect
      .poll(async () =>
        (await call(s.h.api, { method: 'GET', url: `${PUBLIC}/projects/${s.demo.projectId}/quotas`, token })).json(),
      )
      .toEqual({});
    await context.close();
  });

  it('saves sampling in the settings, and the dashboards and alerts pages say the project is sampled', async () => {
    const s = server();
    const token = await sessionToken(s);
    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings`);
    await page.getByRole('tab', { name: 'Sampling' }).click();
    await page.getByLabel('Keep (% of traces)').fill('25');
    await page.getByRole('button', { name: 'Add: keep errors' }).click();
    // A rule whose value is hostile text: shown as text on the banner.
    const rules = page.getByLabel(/^Always keep traces/);
    const withHostile = JSON.parse(await rules.inputValue());
    withHostile.push({ field: 'metadata', key: 'tier', op: 'eq', value: HOSTILE });
    await rules.fill(JSON.stringify(withHostile));
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved.', { exact: false }).waitFor();
    const saved = await call(s.h.api, {
      method: 'GET',
      url: `${PUBLIC}/projects/${s.demo.projectId}/sampling`,
      token,
    });
    expect(saved.json()).toEqual({
      rate: 0.25,
      keep: [
        { field: 'status', op: 'in', value: ['error'] },
        { field: 'metadata', key: 'tier', op: 'eq', value: HOSTILE },
      ],
    });
    for (const path of ['dashboards', 'alerts']) {
      await page.goto(`/projects/${s.demo.projectId}/${path}`);
      const banner = page.getByTestId('sampled-banner');
      await banner.waitFor();
      const text = await banner.textContent();
      expect(text).toContain('25% of traces are kept');
      expect(text).toContain('status in error');
      expect(text).toContain(HOSTILE);
    }
    await screenshot(page, 'sampled-banner');
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img[src="x"]').count()).toBe(0);
    // Back to keeping every trace: no banner.
    const reset = await call(s.h.api, {
      method: 'PUT',
      url: `${PUBLIC}/projects/${s.demo.projectId}/sampling`,
      token,
      payload: { rate: 1, keep: [] },
    });
    expect(reset.statusCode, reset.body).toBe(200);
    await page.reload();
    await page.getByRole('heading').first().waitFor();
    expect(await page.getByTestId('sampled-banner').count()).toBe(0);
    await context.close();
  });
});

const HOSTILE = '<img src=x onerror="window.__pwned=1">';

async function workspaceOf(s: WebServer, token: string): Promise<string> {
  const res = await call(s.h.api, { method: 'GET', url: `${PUBLIC}/projects/${s.demo.projectId}`, token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().workspace_id;
}
