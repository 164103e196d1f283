import type { FastifyInstance } from 'fastify';
import { loadConfig, ConfigError } from './config.js';
import { openRuntime } from './runtime.js';
import { buildApiApp } from './app.js';
import { buildWebApp } from './web/app.js';
import { DEMO_TRACES, seedDemoAccount, seedDemoTraces } from './demo/seed.js';
import { startWorkers } from '../workers/index.js';
import { createServer } from './http.js';
import { registerHealthRoutes } from './health/routes.js';
import { HttpDrain, stopOnSignals } from './shutdown.js';

/**
 * `npm start` runs api, web and worker in one process (the embedded stores allow one process per
 * data directory); `start:api`, `start:web`, `start:worker` run one part each.
 */
type Part = 'api' | 'web' | 'worker';
const PARTS: Record<string, Part[]> = { all: ['api', 'web', 'worker'], api: ['api'], web: ['web'], worker: ['worker'] };

async function main(): Promise<void> {
  const mode = process.argv[2] ?? 'all';
  const parts = PARTS[mode];
  if (!parts) throw new ConfigError(`unknown mode '${mode}'; use one of ${Object.keys(PARTS).join(', ')}`);
  const config = loadConfig();
  const runtime = await openRuntime(config);
  const drains: HttpDrain[] = [];
  const workers = parts.includes('worker') ? startWorkers(runtime) : [];
  // From here a signal stops gracefully; servers join `drains` as they start listening.
  stopOnSignals({ runtime, drains, workers, log: (line) => process.stdout.write(`Sightline ${line}\n`), exit: (code) => process.exit(code) });
  // Before each server listens: the stop needs to see its requests (src/shutdown.ts).
  const serve = async (name: string, app: FastifyInstance, port: number) => {
    drains.push(new HttpDrain(name, app));
    await app.listen({ host: config.host, port });
  };

  if (parts.includes('api')) {
    await serve('api', buildApiApp(runtime), config.port);
  }
  if (mode === 'worker') {
    // A worker alone serves only /healthz and /readyz, for its container's health check.
    const health = createServer({ logLevel: config.logLevel });
    registerHealthRoutes(health, runtime);
    await serve('health', health, config.port);
  }
  if (parts.includes('web')) {
    await serve('web', buildWebApp(runtime), config.webPort);
  }

  const t = runtime.timings;
  const lines = [`Sightline (${mode}) is running (ready ${Math.round(performance.now())} ms after start: stores ${t.stores} ms, migrations ${t.migrations} ms)`];
  if (parts.includes('api')) lines.push(`  API  ${config.baseUrl}/api/v1/public`);
  if (parts.includes('web')) lines.push(`  Web  ${config.webUrl}`);
  lines.push(
    `  stores: ClickHouse ${runtime.ch.embedded ? 'embedded (chdb)' : 'server'}, Postgres ${runtime.pg.embedded ? 'embedded (PGlite)' : 'server'}, queue ${runtime.queue.backend}`,
  );
  if (mode === 'all' && config.seedDemo) {
    const demo = await seedDemoAccount(runtime);
    if (demo) {
      const spans = await seedDemoTraces(runtime, demo.projectId);
      lines.push(
        '',
        '  First start: a demo account was created (shown this once):',
        `    e-mail    ${demo.email}`,
        `    password  ${demo.password}`,
        `    web app   ${config.webUrl} (log in with this e-mail and password)`,
        `    project   ${demo.projectId}`,
        `    API key   ${demo.apiKey}`,
        `    traces    ${DEMO_TRACES} demo agent traces (${spans} spans) over the last 24 hours`,
        `  Try: curl -H "Authorization: Bearer ${demo.apiKey}" ${config.baseUrl}/api/v1/public/traces`,
      );
    }
  }
  process.stdout.write(lines.join('\n') + '\n');

}

main().catch((error) => {
  process.stderr.write(`Sightline failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
