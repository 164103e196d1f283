import { describe, expect, it } from 'vitest';
import { call, PUBLIC } from '../support/harness.js';
import { logIn, newPage, screenshot, useWebServer } from '../support/browser.js';

const server = useWebServer();

describe('web application: account settings', () => {
  it('changes the password (other sessions end) and logs out everywhere', async () => {
    const s = server();
    const elsewhere = await call(s.h.web, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: s.demo.email, password: s.demo.password },
    });
    expect(elsewhere.statusCode).toBe(200);
    const otherSession = elsewhere.json().session_token as string;

    const { context, page } = await newPage(s);
    await logIn(page, s.demo.email, s.demo.password);
    await page.goto(`/projects/${s.demo.projectId}/settings?tab=account`);
    await page.getByLabel('Current password').fill(s.demo.password);
    await page.getByLabel('New password (at least 8 characters)').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText(/Password changed; 1 other session\(s\) logged out\./).waitFor();
    await screenshot(page, 'settings-account');
    expect((await call(s.h.api, { method: 'GET', url: `${PUBLIC}/workspaces`, token: otherSession })).statusCode).toBe(
      401,
    );

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Log out everywhere' }).click();
    await page.waitForURL(/\/login/);
    const { rows } = await s.h.ctx.pg.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1 AND s.revoked_at IS NULL',
      [s.demo.email],
    );
    expect(rows[0]!.n).toBe(0);
    await context.close();
  });
});
