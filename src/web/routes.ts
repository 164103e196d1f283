import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { BadRequestError, UnauthorizedError } from '../errors.js';
import { typed } from '../http.js';
import { authenticate, resolvePrincipal, userOf, type UserPrincipal } from '../auth/principal.js';
import { createSession, login, logout, signup } from '../accounts/service.js';
import { authPool } from '../stores/postgres.js';
import { changePassword, logoutEverywhere } from '../accounts/password.js';
import { loginPage, loopbackRedirect, redirectWithToken } from './cli-login.js';
import { clearSessionCookie, fromWebApp, SESSION_COOKIE, setSessionCookie } from './session-cookie.js';
import { cliLoginPolicy } from './security-headers.js';

const email = z.string().trim().min(3).max(320).email();
const password = z.string().min(8).max(1024);

const SignupBody = z.object({ email, password, name: z.string().trim().min(1).max(200) });
const LoginBody = z.object({ email: z.string().trim().min(1).max(320), password: z.string().min(1).max(1024) });
const PasswordBody = z.object({ current_password: z.string().min(1).max(1024), new_password: password });
const CliLoginQuery = z.object({ redirect_uri: z.string().min(1).max(2048), state: z.string().max(512).optional() });
const CliLoginForm = CliLoginQuery.extend({
  email: z.string().max(320).default(''),
  password: z.string().max(1024).default(''),
  /** `1`: hand the CLI a new session of the browser's live login (the page's "Continue as" button). */
  continue_session: z.literal('1').optional(),
});

/** The web application's JSON routes (docs/authentication.md) and the CLI browser login. */
export function registerWebRoutes(app: FastifyInstance, ctx: AppContext): void {
  const r = typed(app);

  r.post('/api/auth/signup', { schema: { body: SignupBody } }, async (request, reply) => {
    const session = await signup(ctx, request.body);
    // The web application's own calls also get the session as an HttpOnly cookie (session-cookie.ts); the body is the spec's.
    if (fromWebApp(request)) setSessionCookie(reply, ctx.config, session.session_token);
    return reply.status(201).send(session);
  });

  r.post('/api/auth/login', { schema: { body: LoginBody } }, async (request, reply) => {
    const session = await login(ctx, request.body, request.ip);
    if (fromWebApp(request)) setSessionCookie(reply, ctx.config, session.session_token);
    return session;
  });

  r.post('/api/auth/logout', { onRequest: authenticate(ctx, 'user') }, async (request, reply) => {
    await logout(ctx, userOf(request));
    clearSessionCookie(reply, ctx.config);
    return reply.status(204).send();
  });

  // Password change: the caller's session stays, every other one ends (docs/authentication.md).
  r.post(
    '/api/auth/password',
    { onRequest: authenticate(ctx, 'user'), schema: { body: PasswordBody } },
    async (request) => changePassword(ctx, userOf(request), request.body),
  );

  // Log out everywhere: every session of the user ends, and with them every access token.
  r.post('/api/auth/logout-all', { onRequest: authenticate(ctx, 'user') }, async (request, reply) => {
    const ended = await logoutEverywhere(ctx, userOf(request));
    clearSessionCookie(reply, ctx.config);
    return ended;
  });

  // The bearer must be the session token itself; an access token can't mint another.
  r.post('/api/cli/token', { onRequest: authenticate(ctx, 'user') }, async (request) => {
    const user = userOf(request);
    if (user.via !== 'session') throw new UnauthorizedError('a session token is required to mint an access token');
    return { accessToken: await ctx.tokens.mint({ userId: user.userId, sessionId: user.sessionId }) };
  });

  // The API reference lives on the API origin (src/openapi.ts); the web app links here, so a person
  // who only knows the web address finds it.
  r.get('/docs', async (_request, reply) => reply.redirect(`${ctx.config.baseUrl}/docs`, 302));

  r.get('/cli/login', { schema: { querystring: CliLoginQuery } }, async (request, reply) => {
    const { redirect_uri, state } = request.query;
    const target = loopbackRedirect(redirect_uri);
    if (!target) throw new BadRequestError('redirect_uri must be an http URL on the loopback interface');
    return reply
      .type('text/html')
      .header('cache-control', 'no-store')
      .header('content-security-policy', cliLoginPolicy(ctx.config, target))
      .send(
        loginPage({
          redirectUri: redirect_uri,
          state,
          signedIn: await browserLogin(ctx, request.cookies[SESSION_COOKIE]),
        }),
      );
  });

  r.post('/cli/login', { schema: { body: CliLoginForm } }, async (request, reply) => {
    const { redirect_uri, state, email: mail, password: pass } = request.body;
    const target = loopbackRedirect(redirect_uri);
    if (!target) throw new BadRequestError('redirect_uri must be an http URL on the loopback interface');
    if (request.body.continue_session === '1') {
      // A form can't carry the CSRF header, so the browser's Origin must be this origin (SameSite=Lax
      // already keeps the cookie off cross-site posts). The CLI gets a session of its own, so its
      // logout never ends the browser's.
      const user = sameOrigin(request, ctx.config.webUrl)
        ? await browserLogin(ctx, request.cookies[SESSION_COOKIE])
        : null;
      if (!user) throw new UnauthorizedError('no live browser login to continue with; log in with your password');
      const token = await createSession(authPool(ctx.pg), user.userId, ctx.config.sessionTtlDays);
      return reply.header('cache-control', 'no-store').redirect(redirectWithToken(target, token, state), 302);
    }
    try {
      const session = await login(ctx, { email: mail, password: pass }, request.ip);
      return reply
        .header('cache-control', 'no-store')
        .redirect(redirectWithToken(target, session.session_token, state), 302);
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
      return reply
        .status(401)
        .type('text/html')
        .header('content-security-policy', cliLoginPolicy(ctx.config, target))
        .send(loginPage({ redirectUri: redirect_uri, state, email: mail, error: error.detail }));
    }
  });
}

/** The user of the browser's session cookie when it is live, else null (the page then asks for the password). */
async function browserLogin(ctx: AppContext, cookie: string | undefined): Promise<UserPrincipal | null> {
  if (!cookie) return null;
  try {
    const principal = await resolvePrincipal(ctx, cookie);
    return principal.kind === 'user' && principal.via === 'session' ? principal : null;
  } catch {
    return null;
  }
}

/** Whether a form post came from a page of this origin (WEB_URL's, or the one the request was sent to). */
function sameOrigin(request: FastifyRequest, webUrl: string): boolean {
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  return origin === new URL(webUrl).origin || origin === `${request.protocol}://${request.host}`;
}
