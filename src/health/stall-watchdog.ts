import { Worker } from 'node:worker_threads';

/**
 * Ends the process when its event loop has been blocked for `stallExitMs` (docs/operations.md, "A
 * stuck process"). A blocked loop serves no request, no health probe and no SIGTERM: the graceful stop
 * runs on that loop too, so without this only SIGKILL from outside ends it. The main loop bumps a
 * shared counter every BEAT_MS; a thread of its own (which a blocked main loop doesn't hold) looks at
 * it and, when it has not moved for `stallExitMs`, writes one line to stderr and sends the process
 * SIGKILL, so a supervisor (systemd, Kubernetes, docker's restart policy) starts it again.
 */

const BEAT_MS = 250;

/** The thread's code: kept as text so it needs no file of its own next to the compiled server. */
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const beats = new Int32Array(workerData.buffer);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
let last = Atomics.load(beats, 0);
let still = Date.now();
for (;;) {
  Atomics.wait(sleeper, 0, 0, workerData.lookMs);
  const now = Atomics.load(beats, 0);
  if (now !== last) { last = now; still = Date.now(); continue; }
  const blocked = Date.now() - still;
  if (blocked >= workerData.stallExitMs) {
    fs.writeSync(2, 'Sightline: the event loop has been blocked for ' + blocked + ' ms (LOOP_STALL_EXIT_MS ' +
      workerData.stallExitMs + '); ending the process with SIGKILL so that it can be restarted\\n');
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

export type StallWatchdog = { stop(): Promise<void> };

/** Starts the watchdog thread and the main loop's heartbeat; `stallExitMs` 0 starts nothing. */
export function startStallWatchdog(stallExitMs: number): StallWatchdog {
  if (stallExitMs <= 0) return { stop: async () => {} };
  const buffer = new SharedArrayBuffer(4);
  const beats = new Int32Array(buffer);
  const heartbeat = setInterval(() => Atomics.add(beats, 0, 1), BEAT_MS);
  heartbeat.unref();
  const lookMs = Math.max(50, Math.min(1_000, Math.floor(stallExitMs / 4)));
  // No inherited flags: `--input-type=module` or a loader would make the CommonJS text above a module.
  const thread = new Worker(WATCHDOG_SOURCE, { eval: true, execArgv: [], workerData: { buffer, stallExitMs, lookMs } });
  thread.unref();
  return {
    async stop() {
      clearInterval(heartbeat);
      await thread.terminate();
    },
  };
}
