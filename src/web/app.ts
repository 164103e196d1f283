import type { FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import type { AppContext } from '../context.js';
import { createServer } from '../http.js';
import { registerRateLimits } from '../rate-limits.js';
import { registerHealthRoutes } from '../health/routes.js';
import { registerWebRoutes } from './routes.js';
import { registerSignalWebRoutes } from '../signals/web-routes.js';
import { registerSessionCookie } from './session-cookie.js';
import { registerAppApi } from './app-api.js';
import { registerStaticApp } from './static.js';
import { registerWebSecurityHeaders } from './security-headers.js';

/** The web process: login, the CLI token exchange and browser login, and the pages. */
export function buildWebApp(ctx: AppContext): FastifyInstance {
  const app = createServer({ logLevel: ctx.config.logLevel, trustProxy: ctx.config.trustProxy });
  app.register(formbody);
  registerWebSecurityHeaders(app, ctx.config);
  registerRateLimits(app, ctx.config);
  // First: every route after it sees the session cookie as a bearer (CSRF rules in session-cookie.ts).
  registerSessionCookie(app);
  registerHealthRoutes(app, ctx);
  app.register(async (web) => registerWebRoutes(web, ctx));
  // Dismiss and merge: web-only signal routes (docs/signals.md).
  app.register(async (web) => registerSignalWebRoutes(web, ctx));
  app.register(async (web) => registerAppApi(web, ctx));
  app.register(async (web) => registerStaticApp(web));
  return app;
}
