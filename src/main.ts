import type { FastifyInstance } from 'fastify';
import { loadConfig, ConfigError } from './config.js';
import { openRuntime } from './runtime.js';
import { HttpDrain, stopOnSignals } from './shutdown.js';
import { startStallWatchdog } from './health/stall-watchdog.js';

/**
 * `npm start` runs api, web and worker in one process (the embedded stores allow one process per
 * data directory); `start:api`, `start:web`, `start:worker` run one part each.
 */
type Part = 'api' | 'web' | 'worker';
const PARTS: Record<string, Part[]> = { all: ['api', 'web', 'worker'], api: ['api'], web: ['web'], worker: ['worker'] };

/**
 * The code of the parts a mode runs, loaded while the stores open (docs/operations.md, "Restarts"):
 * a restart's time is mostly these two, and a mode loads only what it serves.
 */
async function loadParts(parts: Part[]) {
  const [api, web, workers, demo, http, health] = await Promise.all([
    parts.includes('api') ? import('./app.js') : undefined,
    parts.includes('web') ? import('./web/app.js') : undefined,
    parts.includes('worker') ? import('../workers/index.js') : undefined,
    import('./demo/seed.js'),
    import('./http.js'),
    import('./health/routes.js'),
  ]);
  return { api, web, workers, demo, http, health };
}

async function main(): Promise<void> {
  const mode = process.argv[2] ?? 'all';
  const parts = PARTS[mode];
  if (!parts) throw new ConfigError(`unknown mode '${mode}'; use one of ${Object.keys(PARTS).join(', ')}`);
  const config = loadConfig();
  // First, so that a loop blocked from here on still ends (docs/operations.md, "A stuck process").
  startStallWatchdog(config.liveness.stallExitMs);
  const modulesMs = performance.now();
  const [runtime, code] = await Promise.all([openRuntime(config), loadParts(parts)]);
  const drains: HttpDrain[] = [];
  const workers = code.workers ? code.workers.startWorkers(runtime) : [];
  // From here a signal stops gracefully; servers join `drains` as they start listening.
  stopOnSignals({
    runtime,
    drains,
    workers,
    log: (line) => process.stdout.write(`Sightline ${line}\n`),
    exit: (code) => process.exit(code),
  });
  // Before each server listens: the stop needs to see its requests (src/shutdown.ts).
  const serve = async (name: string, app: FastifyInstance, port: number) => {
    drains.push(new HttpDrain(name, app));
    await app.listen({ host: config.host, port });
  };

  if (code.api) {
    await serve('api', code.api.buildApiApp(runtime), config.port);
  }
  if (mode === 'worker') {
    // A worker alone serves only /healthz and /readyz, for its container's health check.
    const health = code.http.createServer({ logLevel: config.logLevel });
    code.health.registerHealthRoutes(health, runtime);
    await serve('health', health, config.port);
  }
  if (code.web) {
    await serve('web', code.web.buildWebApp(runtime), config.webPort);
  }

  const t = runtime.timings;
  const cpu = process.cpuUsage();
  const lines = [
    `Sightline (${mode}) is running: ready ${Math.round(performance.now())} ms after the process started ` +
      `(${Math.round(modulesMs)} ms loading code, then stores ${t.stores} ms and migrations ${t.migrations} ms beside the parts' code; ` +
      `CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms)`,
  ];
  if (parts.includes('api')) lines.push(`  API  ${config.baseUrl}/api/v1/public`);
  if (parts.includes('web')) lines.push(`  Web  ${config.webUrl}`);
  lines.push(
    `  stores: ClickHouse ${runtime.ch.embedded ? 'embedded (chdb)' : 'server'}, Postgres ${runtime.pg.embedded ? 'embedded (PGlite)' : 'server'}, queue ${runtime.queue.backend}`,
  );
  if (mode === 'all' && config.seedDemo) {
    const demo = await code.demo.seedDemoAccount(runtime);
    if (demo) {
      const spans = await code.demo.seedDemoTraces(runtime, demo.projectId);
      lines.push(
        '',
        '  First start: a demo account was created (shown this once):',
        `    e-mail    ${demo.email}`,
        `    password  ${demo.password}`,
        `    web app   ${config.webUrl} (log in with this e-mail and password)`,
        `    project   ${demo.projectId}`,
        `    API key   ${demo.apiKey}`,
        `    traces    ${code.demo.DEMO_TRACES} demo agent traces (${spans} spans) over the last 24 hours`,
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
