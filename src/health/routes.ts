import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

const PROBE_TIMEOUT_MS = 3_000;

/**
 * `/healthz`: the process answers, and its event loop was not blocked past LIVENESS_MAX_BLOCK_MS in
 * the last minute (src/health/loop-watch.ts); 503 otherwise, so an orchestrator restarts it.
 * `/readyz`: every store answers; 503 names those that don't.
 */
export function registerHealthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/healthz', async (_request, reply) => {
    const block = ctx.loopWatch.failing();
    if (block) {
      const ago = Math.round((performance.now() - block.endedAt) / 1000);
      return reply.status(503).send({
        detail: `not live: the event loop was blocked for ${block.ms} ms (bound ${ctx.loopWatch.maxBlockMs} ms), ${ago} s ago; restart this process`,
      });
    }
    return { status: 'ok' };
  });

  app.get('/readyz', async (_request, reply) => {
    const probes = { clickhouse: () => ctx.ch.ping(), postgres: () => ctx.pg.ping(), queue: () => ctx.queue.ping() };
    const results = await Promise.all(
      Object.entries(probes).map(
        async ([name, probe]) =>
          [
            name,
            await withTimeout(probe()).then(
              () => 'ok',
              () => 'unreachable',
            ),
          ] as const,
      ),
    );
    const checks = Object.fromEntries(results);
    const down = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (down.length > 0) return reply.status(503).send({ detail: `not ready: ${down.join(', ')} unreachable`, checks });
    return { status: 'ok', checks };
  });
}

function withTimeout(promise: Promise<unknown>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), PROBE_TIMEOUT_MS);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
