import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { typed } from '../http.js';
import { registerPublicRoutes } from '../app.js';
import { authenticate, userOf } from '../auth/principal.js';

/**
 * The browser's API (README, "Web application"): the public routes mounted again on the web origin
 * under `/app-api` (so `/app-api/traces` is `GET /api/v1/public/traces`), authenticated by the session
 * cookie (session-cookie.ts turns it into the bearer). Same process, same code, no CORS: the web
 * process opens the stores anyway, so there is no second hop to the API process.
 */
export const APP_API_PREFIX = '/app-api';

export function registerAppApi(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (api) => registerPublicRoutes(api, ctx), { prefix: APP_API_PREFIX });

  // Who is logged in: the single-page application asks this first and goes to /login on a 401.
  typed(app).get('/api/auth/session', { onRequest: authenticate(ctx, 'user') }, async (request) => {
    const user = userOf(request);
    return { user: { id: user.userId, email: user.email, name: user.name } };
  });
}
