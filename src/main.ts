import type { FastifyInstance } from 'fastify';
import { loadConfig, ConfigError } from './config.js';
import { openRuntime } from './runtime.js';
import { buildApiApp } from './app.js';
import { buildWebApp } from './web/app.js';
import { DEMO_TRACES, seedDemoAccount, seedDemoTraces } from './demo/seed.js';
import { startWorkers } from '../workers/index.js';
import { createServer } from './http.js';
import { registerHealthRoutes } from './health/routes.js';

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
  const servers: FastifyInstance[] = [];
  const workers = parts.includes('worker') ? startWorkers(runtime) : [];

  if (parts.includes('api')) {
    const api = buildApiApp(runtime);
    await api.listen({ host: config.host, port: config.port });
    servers.push(api);
  }
  if (mode === 'worker') {
    // A worker alone serves only /healthz and /readyz, for its container's health check.
    const health = createServer({ logLevel: config.logLevel });
    registerHealthRoutes(health, runtime);
    await health.listen({ host: config.host, port: config.port });
    servers.push(health);
  }
  if (parts.includes('web')) {
    const web = buildWebApp(runtime);
    await web.listen({ host: config.host, port: config.webPort });
    servers.push(web);
  }

  const lines = [`Sightline (${mode}) is running`];
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`Sightline stopping (${signal})\n`);
    const timer = setTimeout(() => process.exit(1), 15_000);
    timer.unref();
    await Promise.allSettled(servers.map((s) => s.close()));
    await Promise.allSettled(workers.map((w) => w.close()));
    await runtime.close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  process.stderr.write(`Sightline failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
