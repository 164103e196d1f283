import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import type { Config } from '../config.js';

/**
 * The browser's session (README, "Web application"): the session token lives in an HttpOnly,
 * SameSite=Lax cookie on the web origin, never in script-readable storage. The web process turns the
 * cookie into the `Authorization: Bearer` the routes expect, so one authentication hook serves the
 * CLI, API callers and the browser alike.
 *
 * CSRF: a cookie authenticates a state-changing request only when the request also carries
 * `X-Sightline-CSRF: 1`. A cross-site page can't send a custom header without a CORS preflight, which
 * this origin never grants; SameSite=Lax already keeps the cookie off cross-site POSTs in browsers
 * that honour it. Safe methods (GET, HEAD) read with the cookie alone. Login and signup issue the
 * cookie only with the header too, so a cross-site form can't log a browser into someone else's
 * account (login CSRF).
 */
export const SESSION_COOKIE = 'sightline_session';
export const CSRF_HEADER = 'x-sightline-csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function fromWebApp(request: FastifyRequest): boolean {
  return request.headers[CSRF_HEADER] === '1';
}

/** Registers cookie parsing and the cookie-to-bearer hook on the web process. */
export function registerSessionCookie(app: FastifyInstance): void {
  // The hook goes on after the plugin has loaded, so it runs after the plugin's own cookie parsing.
  app.register(cookie).after(() => {
    app.addHook('onRequest', async (request) => {
      if (request.headers.authorization !== undefined) return;
      const token = request.cookies[SESSION_COOKIE];
      if (!token) return;
      if (!SAFE_METHODS.has(request.method) && !fromWebApp(request)) return;
      request.headers.authorization = `Bearer ${token}`;
    });
  });
}

/**
 * Whether the browser reached this origin over https: WEB_URL says so, or the request does (its own
 * TLS, or a TLS-terminating proxy's X-Forwarded-Proto, believed only from proxies named in TRUST_PROXY).
 * The cookie is Secure then, so it never travels over plain http.
 */
export function servedOverHttps(request: FastifyRequest, config: Config): boolean {
  return config.webUrl.startsWith('https://') || request.protocol === 'https';
}

export function setSessionCookie(reply: FastifyReply, config: Config, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: servedOverHttps(reply.request, config),
    maxAge: config.sessionTtlDays * 86_400,
  });
}

export function clearSessionCookie(reply: FastifyReply, config: Config): void {
  reply.clearCookie(SESSION_COOKIE, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: servedOverHttps(reply.request, config),
  });
}
