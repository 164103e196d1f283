import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import { seedDemoAccount, seedDemoTraces, type DemoAccount } from '../../src/demo/seed.js';
import { useHarness, type Harness } from './harness.js';

/**
 * Browser tests: the web process on embedded stores (as `npm start` runs it), listening on a loopback
 * port, driven by playwright-core through Debian's Chromium (no browser download). Screenshots go to
 * test-output/web/, which git ignores.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT_DIR, 'test-output', 'web');

/** `cspViolations`: every Content-Security-Policy refusal any page of the file logged; the file fails on one. */
export type WebServer = { h: Harness; url: string; demo: DemoAccount; browser: Browser; cspViolations: string[] };

/** The built application is what the server serves; build it when a fresh checkout has none. */
function ensureBuilt(): void {
  const result = spawnSync(process.execPath, [path.join(ROOT_DIR, 'scripts/build-web.mjs')], {
    cwd: ROOT_DIR,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`web build failed:\n${result.stdout}\n${result.stderr}`);
}

/** `env`: more settings for the server (e.g. LLM_CONNECTION_ALLOW_PRIVATE for a judge on loopback). */
export function useWebServer(env: Record<string, string> = {}): () => WebServer {
  // Embedded stores, whatever DATABASE_URL/REDIS_URL say: a fresh store gets the demo account.
  const h = useHarness({
    ...env,
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    WEB_URL: undefined,
    BASE_URL: undefined,
  });
  let server: WebServer | undefined;
  beforeAll(async () => {
    ensureBuilt();
    const harness = h();
    const demo = await seedDemoAccount(harness.ctx);
    if (!demo) throw new Error('the embedded store already had users');
    await seedDemoTraces(harness.ctx, demo.projectId);
    // A second app instance bound to a port: the harness's is used through inject() elsewhere.
    await harness.web.listen({ host: '127.0.0.1', port: 0 });
    const address = harness.web.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
    server = { h: harness, url: `http://127.0.0.1:${port}`, demo, browser, cspViolations: [] };
  }, 240_000);
  afterAll(async () => {
    await server?.browser.close();
    // The web origin's CSP (src/web/security-headers.ts) must let every page the tests drove work.
    if (server?.cspViolations.length)
      throw new Error(`Content-Security-Policy violations:\n${server.cspViolations.join('\n')}`);
  });
  return () => {
    if (!server) throw new Error('web server not ready');
    return server;
  };
}

export async function newPage(
  server: WebServer,
  viewport = { width: 1280, height: 860 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await server.browser.newContext({ viewport, baseURL: server.url });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) server.cspViolations.push(`${page.url()}: ${message.text()}`);
  });
  return { context, page };
}

export async function screenshot(page: Page, name: string, fullPage = false): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** Logs in through the login page and waits for the application to show. */
export async function logIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('button', { name: 'Log out' }).waitFor();
}
