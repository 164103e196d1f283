import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';
import { NotFoundError } from '../errors.js';
import { ROOT_DIR } from '../stores/migrate.js';

/** Where `npm run build:web` (vite, web/vite.config.ts) writes the browser application. */
export const WEB_DIST = path.join(ROOT_DIR, 'web', 'dist');

/** Paths that belong to the server, never to the single-page application's router. */
const SERVER_PATHS = /^\/(api|app-api|cli|assets)(\/|$)/;

/** Inline, so allowed by hash in the web origin's CSP (security-headers.ts); a style attribute would not be. */
export const NOT_BUILT_STYLE = 'body{font-family:system-ui,sans-serif;max-width:40rem;margin:3rem auto}';

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sightline</title><style>${NOT_BUILT_STYLE}</style></head>
<body>
<h1>Sightline</h1>
<p>The web application has not been built. Run <code>npm run build:web</code> (done by <code>npm start</code>) and reload.</p>
</body></html>`;

/**
 * The built application: hashed assets under `/assets/` (cached for good: a new build has new names)
 * and `index.html` for every other GET that isn't a server route, so deep links such as a
 * `trace_url` open the page the browser's router draws (the router shows not-found pages itself).
 */
export function registerStaticApp(app: FastifyInstance, dist = WEB_DIST): void {
  const built = fs.existsSync(path.join(dist, 'index.html'));
  if (built) {
    app.register(fastifyStatic, {
      root: path.join(dist, 'assets'),
      prefix: '/assets/',
      maxAge: '365d',
      immutable: true,
      index: false,
    });
  }

  const page = async (request: { url: string }, reply: import('fastify').FastifyReply) => {
    const pathname = request.url.split('?', 1)[0]!;
    if (SERVER_PATHS.test(pathname)) throw new NotFoundError('Not Found');
    reply.header('cache-control', 'no-cache');
    if (!built) return reply.type('text/html').send(NOT_BUILT_PAGE);
    return reply.sendFile('index.html', dist, { maxAge: 0, immutable: false });
  };
  app.get('/', page);
  app.get('/*', page);
}
