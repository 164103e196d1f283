import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import { CliError } from './errors.js';
import type { Target } from './settings.js';

/**
 * The browser half of `sightline login` (docs/authentication.md, "CLI login flow"): listen on a loopback port, send the user
 * to `{web_url}/cli/login?redirect_uri=...&state=...`, and take the session token the login page
 * redirects back with. The state, random per login, must come back unchanged: a token from any
 * other page is refused.
 */

const DONE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sightline</title></head>
<body style="font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto"><h1>Logged in</h1>
<p>The <code>sightline</code> command has your session. You can close this window.</p></body></html>`;

export type LoginOptions = { openBrowser: boolean; timeoutMs: number; print: (line: string) => void };

export async function browserLogin(target: Target, options: LoginOptions): Promise<string> {
  const state = crypto.randomBytes(16).toString('hex');
  let settle!: { resolve: (token: string) => void; reject: (error: Error) => void };
  const received = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    const token = url.searchParams.get('session_token');
    if (url.searchParams.get('state') !== state || !token) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('This login link is not the one the command started; run `sightline login` again.');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(DONE_PAGE);
    settle.resolve(token);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const loginUrl = new URL('/cli/login', target.webUrl);
  loginUrl.searchParams.set('redirect_uri', `http://127.0.0.1:${port}/callback`);
  loginUrl.searchParams.set('state', state);
  options.print(`Open this address to log in:\n  ${loginUrl.href}`);
  if (options.openBrowser) openInBrowser(loginUrl.href);
  const timer = setTimeout(
    () => settle.reject(new CliError('login timed out: nobody completed the login page')),
    options.timeoutMs,
  );
  try {
    return await received;
  } finally {
    clearTimeout(timer);
    server.close();
    server.closeAllConnections();
  }
}

/** Best effort: without a desktop the printed address is the way. */
function openInBrowser(url: string): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'cmd' : 'xdg-open';
  const args = process.platform === 'win32' ? ['/c', 'start', '', url] : [url];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener on this machine; the address was printed.
  }
}
