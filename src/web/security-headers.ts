import crypto from 'node:crypto';
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { LOGIN_STYLE } from './cli-login.js';
import { NOT_BUILT_STYLE } from './static.js';

/**
 * Security headers of the web origin (@fastify/helmet): the built application (web/dist), the
 * `/api/auth/*` and `/app-api/*` JSON routes, and the CLI login page (docs/authentication.md).
 *
 * The Content-Security-Policy allows what those pages load and nothing else:
 * - scripts: only the origin's own files. Vite emits one external module script and no inline
 *   script; no `eval`.
 * - styles: the origin's stylesheets, plus the two inline `<style>` blocks the server writes itself
 *   (CLI login page, not-built page), by hash. No 'unsafe-inline': React's `style` props and uPlot set
 *   styles through the CSSOM (`element.style`), which CSP does not govern; style *attributes* in
 *   markup would be refused.
 * - images: the origin and `data:` (the favicon is an inline SVG data URL).
 * - fetches: the origin (`/app-api`, `/api/auth`) and the API origin (BASE_URL).
 * - forms: the origin only; the CLI login page alone may also send its form on to the CLI's loopback
 *   listener, because POST /cli/login answers with a redirect there and `form-action` governs the
 *   redirects of a form submission too (cliLoginPolicy).
 * - no framing, no plugins, no `<base>`.
 *
 * No CORS here: the browser application calls this origin from itself, and the CLI is no browser.
 * A cross-origin page gets no Access-Control-Allow-* header, so its browser refuses the answer (and
 * its preflights, which the cookie's CSRF header would need, fail).
 */
export function registerWebSecurityHeaders(app: FastifyInstance, config: Config): void {
  app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: webDirectives(config) },
    frameguard: { action: 'deny' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
}

type Directives = Record<string, string[]>;

function styleHash(css: string): string {
  return `'sha256-${crypto.createHash('sha256').update(css, 'utf8').digest('base64')}'`;
}

/** The policy of every page of the web origin; `config.webUrl` https adds upgrade-insecure-requests. */
export function webDirectives(config: Config): Directives {
  const api = new URL(config.baseUrl).origin;
  const self = new URL(config.webUrl).origin;
  const directives: Directives = {
    'default-src': ["'self'"],
    'script-src': ["'self'"],
    'script-src-attr': ["'none'"],
    'style-src': ["'self'", styleHash(LOGIN_STYLE), styleHash(NOT_BUILT_STYLE)],
    'img-src': ["'self'", 'data:'],
    'font-src': ["'self'"],
    'connect-src': api === self ? ["'self'"] : ["'self'", api],
    'object-src': ["'none'"],
    'base-uri': ["'none'"],
    'frame-ancestors': ["'none'"],
    'form-action': ["'self'"],
  };
  if (config.webUrl.startsWith('https://')) directives['upgrade-insecure-requests'] = [];
  return directives;
}

/**
 * The CLI login page's policy: the web policy, with `form-action` widened to exactly the origin of the
 * page's own (already checked loopback) `redirect_uri`, where the successful POST redirects. CSP
 * source expressions have no IPv6 literals, so a `[::1]` redirect_uri cannot be named: its redirect is
 * refused by the browser (the CLI listens on 127.0.0.1).
 */
export function cliLoginPolicy(config: Config, redirect: URL): string {
  const directives = webDirectives(config);
  directives['form-action'] = ["'self'", redirect.origin];
  return serialize(directives);
}

export function serialize(directives: Directives): string {
  return Object.entries(directives)
    .map(([name, values]) => [name, ...values].join(' '))
    .join('; ');
}
