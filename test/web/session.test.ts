import { describe, expect, it } from 'vitest';
import { call } from '../support/harness.js';
import { newPage, screenshot, useWebServer } from '../support/browser.js';
import { browserLogin } from '../../src/cli/login.js';

const server = useWebServer();

describe('web application: login, session cookie, deep links', () => {
  it('sends a logged-out visit of a deep link to /login and back to it after logging in', async () => {
    const s = server();
    const { context, page } = await newPage(s);
    const target = `/projects/${s.demo.projectId}/sessions`;
    await page.goto(target);
    await page.waitForURL(/\/login\?next=/);
    await screenshot(page, 'login');
    await page.getByLabel('E-mail').fill(s.demo.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong e-mail or password' }).waitFor();

    await page.getByLabel('Password').fill(s.demo.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL((url) => url.pathname === target);
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();

    // The session rides in an HttpOnly, SameSite=Lax cookie that scripts can't read.
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'sightline_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await page.evaluate(() => document.cookie)).not.toContain('sightline_session');

    // The project switcher lists the demo project; unknown ids show a not-found page.
    await expect(page.getByTestId('project-switcher').locator('option:checked').textContent()).resolves.toBe(
      'Demo project',
    );
    await page.goto(`/projects/${s.demo.projectId}/traces/no-such-trace`);
    await page.getByTestId('not-found').waitFor();
    await page.goto('/projects/00000000-0000-4000-8000-000000000000/traces');
    await page.getByText('This project was not found').waitFor();
    await screenshot(page, 'not-found');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/);
    expect((await context.cookies()).find((c) => c.name === 'sightline_session')).toBeUndefined();
    await context.close();
  });

  it('signs up a new account, which lands on the new-project form, then in the new project', async () => {
    const s = server();
    const { context, page } = await newPage(s, { width: 390, height: 844 });
    await page.goto('/signup');
    await page.getByLabel('Name').fill('Browser Person');
    await page.getByLabel('E-mail').fill(`browser-${Date.now()}@example.test`);
    await page.getByLabel('Password').fill('long enough password');
    await page.getByRole('button', { name: 'Sign up' }).click();
    await page.getByRole('heading', { name: 'New project' }).waitFor();
    await page.getByLabel('Name').fill('Phone project');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('heading', { name: 'Traces' }).waitFor();
    await page.getByText('No traces match').waitFor();
    await screenshot(page, 'signup-phone');
    await context.close();
  });

  it("completes `sightline login` in the browser under the login page's CSP: the form, then the redirect to the CLI's loopback listener", async () => {
    const s = server();
    // The CLI's own listener (src/cli/login.ts); the test is the user who opens the printed address.
    let address = '';
    const login = browserLogin(
      { apiUrl: s.url, webUrl: s.url },
      {
        openBrowser: false,
        timeoutMs: 60_000,
        print: (line) => (address ||= /http\S+\/cli\/login\?\S+/.exec(line)?.[0] ?? ''),
      },
    );
    await expect.poll(() => address).not.toBe('');
    const { context, page } = await newPage(s);
    const violations: string[] = [];
    page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && violations.push(m.text())));
    await page.goto(address);
    await page.getByLabel('E-mail').fill(s.demo.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong e-mail or password' }).waitFor();
    // The inline style is allowed by its hash: the page is drawn as designed, not unstyled.
    expect(await page.locator('button').evaluate((b) => getComputedStyle(b).backgroundColor)).toBe('rgb(91, 141, 239)');
    await page.getByLabel('Password').fill(s.demo.password);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Logged in' }).waitFor();
    expect(new URL(page.url()).host).toMatch(/^127\.0\.0\.1:\d+$/);
    const token = await login;
    expect(token).toMatch(/^sls_/);
    const whoami = await call(s.h.api, { method: 'GET', url: '/api/v1/public/workspaces', token });
    expect(whoami.statusCode).toBe(200);
    expect(violations).toEqual([]);
    await context.close();
  });

  it('lets a cookie authenticate writes only with the CSRF header, and issues it only to the web app', async () => {
    const s = server();
    const login = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: s.demo.email, password: s.demo.password },
    });
    expect(login.statusCode).toBe(200);
    expect(login.headers['set-cookie']).toBeUndefined();
    expect(Object.keys(login.json()).sort()).toEqual(['session_token', 'user']);
    const web = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      headers: { 'x-sightline-csrf': '1' },
      payload: { email: s.demo.email, password: s.demo.password },
    });
    expect(String(web.headers['set-cookie'])).toMatch(
      /^sightline_session=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const cookie = `sightline_session=${web.json().session_token}`;

    const read = await call(s.h.web, { method: 'GET', url: '/app-api/projects', headers: { cookie } });
    expect(read.statusCode).toBe(200);
    const body = { name: 'csrf-check', workspace_id: s.demo.workspaceId };
    const forged = await call(s.h.web, {
      method: 'POST',
      url: '/app-api/projects',
      headers: { cookie },
      payload: body,
    });
    expect(forged.statusCode).toBe(401);
    const real = await call(s.h.web, {
      method: 'POST',
      url: '/app-api/projects',
      headers: { cookie, 'x-sightline-csrf': '1' },
      payload: body,
    });
    expect(real.statusCode).toBe(201);

    // Deep links are the application's page; unknown server paths stay JSON 404s.
    const deep = await call(s.h.web, { method: 'GET', url: `/projects/${s.demo.projectId}/traces/abc` });
    expect(deep.statusCode).toBe(200);
    expect(deep.headers['content-type']).toMatch(/text\/html/);
    const api404 = await call(s.h.web, { method: 'GET', url: '/app-api/nope' });
    expect(api404.statusCode).toBe(404);
    expect(api404.json()).toEqual({ detail: 'Not Found' });
  });
});
