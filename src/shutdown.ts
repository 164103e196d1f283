import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Worker } from 'bullmq';
import type { Runtime } from './runtime.js';

/**
 * The graceful stop of a process (docs/operations.md, "Stopping"), for every mode: stop accepting,
 * answer what is in flight, close keep-alive connections, close the workers, store or refuse the
 * spans still queued, close the stores, exit 0; all within `config.stopTimeoutMs`, else a forced,
 * logged, non-zero exit. Each step is logged with its time.
 *
 * Keep-alive is why this takes care: Node's `server.close()` closes the connections idle at that
 * moment, but a connection whose request is still being answered becomes idle afterwards and then
 * stays open until its keep-alive timeout (Fastify's: 72 s), holding the close. So answers in flight
 * are sent with `Connection: close` (Fastify does so itself for requests that arrive while
 * closing), and connections that turn idle during the drain are closed as they do.
 */

/** One HTTP server's part of the stop. Created before the server listens. */
export class HttpDrain {
  private readonly inFlight = new Set<ServerResponse>();

  constructor(
    readonly name: string,
    private readonly app: FastifyInstance,
  ) {
    app.server.on('request', (_request, response: ServerResponse) => {
      this.inFlight.add(response);
      response.once('close', () => this.inFlight.delete(response));
    });
  }

  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Resolves when the server is closed and every connection ended. Past `cutAfterMs`, the
   * connections still open (a slow request, a client that never finishes its body) are cut.
   */
  async close(cutAfterMs: number): Promise<{ cut: number }> {
    for (const response of this.inFlight) if (!response.headersSent) response.setHeader('connection', 'close');
    const server = this.app.server;
    const closing = this.app.close();
    server.closeIdleConnections();
    const reaper = setInterval(() => server.closeIdleConnections(), 50);
    let cut = 0;
    const cutter = setTimeout(() => {
      cut = this.inFlight.size;
      server.closeAllConnections();
    }, cutAfterMs);
    try {
      await closing;
    } finally {
      clearInterval(reaper);
      clearTimeout(cutter);
    }
    return { cut };
  }
}

export type StopPlan = {
  runtime: Runtime;
  drains: HttpDrain[];
  workers: Worker[];
  log: (line: string) => void;
  exit: (code: number) => void;
};

/** Runs the stop once; a second signal while it runs is only logged (npm and the terminal both send SIGINT). */
export function stopOnSignals(plan: StopPlan): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return plan.log(`${signal} again: already stopping`);
    stopping = true;
    void stop(plan, signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

async function stop({ runtime, drains, workers, log, exit }: StopPlan, signal: string): Promise<void> {
  const bound = runtime.config.stopTimeoutMs;
  const started = performance.now();
  const ms = () => `${Math.round(performance.now() - started)} ms`;
  let step = 'closing the HTTP servers';
  const forced = setTimeout(() => {
    log(`stop: FORCED EXIT after ${ms()}: the stop passed its ${bound} ms bound while ${step}`);
    exit(1);
  }, bound);
  forced.unref();

  try {
    await stopSteps();
    clearTimeout(forced);
    log(`stop: stores closed; stopped in ${ms()}`);
    exit(0);
  } catch (error) {
    clearTimeout(forced);
    log(`stop: failed after ${ms()} while ${step}: ${error instanceof Error ? error.message : String(error)}`);
    exit(1);
  }

  async function stopSteps(): Promise<void> {
    const inFlight = drains.reduce((n, d) => n + d.inFlightCount, 0);
    log(`stop: ${signal} received; no new connections, answering ${inFlight} request(s) in flight (bound ${bound} ms)`);
    // Half the bound for answers in flight; the rest is for the workers, the queued spans and the stores.
    const closed = await Promise.allSettled(drains.map((d) => d.close(Math.round(bound / 2))));
    const cut = closed.reduce((n, r) => n + (r.status === 'fulfilled' ? r.value.cut : 0), 0);
    log(
      `stop: HTTP servers closed (${drains.map((d) => d.name).join(', ') || 'none'}) after ${ms()}${cut ? `; ${cut} slow request(s) cut` : ''}`,
    );

    if (workers.length) {
      step = 'closing the queue workers';
      await closeWorkers(workers, Math.round(bound / 5));
      log(`stop: ${workers.length} queue workers closed after ${ms()}`);
    }
    step = 'storing the queued spans';
    const queued = runtime.spanWriter.depth().spans;
    await runtime.spanWriter.close();
    log(`stop: span writer drained (${queued} span(s) were queued) after ${ms()}`);
    step = 'closing the stores';
    await runtime.close();
  }
}

/** Lets running jobs finish for `graceMs`, then stops waiting for them (BullMQ hands them back as stalled). */
async function closeWorkers(workers: Worker[], graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const graceful = Promise.allSettled(workers.map((w) => w.close()));
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
  const outcome = await Promise.race([graceful, late]);
  clearTimeout(timer);
  if (outcome === 'late') await Promise.allSettled(workers.map((w) => w.close(true)));
}
