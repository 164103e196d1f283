import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT_DIR } from '../../src/stores/migrate.js';
import { waitFor } from './wait.js';

/**
 * A real Sightline process for the tests that stop, kill and restart servers (test/faults): node with
 * tsx's loader (not the tsx command, whose SIGKILL leaves the server running), one mode, its own data
 * directory and ports, only the environment given here (never the test's DATABASE_URL or REDIS_URL: it
 * runs on embedded stores of its own); its output kept (the first 256 KB) for the test to read what it
 * logged.
 */
export type ServerProcess = {
  child: ChildProcess;
  output: () => string;
  /** Resolves once the process has exited: with the signal that ended it, else its exit code. */
  exited: Promise<NodeJS.Signals | number | null>;
};

export async function startServerProcess(options: {
  mode: 'all' | 'api' | 'web' | 'worker';
  dataDir: string;
  port: number;
  webPort: number;
  env?: Record<string, string>;
  /** Which port answers /healthz once up: the api's, else the web's (web mode). */
  healthPort?: number;
}): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', options.mode], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      DATA_DIR: options.dataDir,
      PORT: String(options.port),
      WEB_PORT: String(options.webPort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (d: Buffer) => {
    if (output.length < 262_144) output += d.toString('utf8');
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const port = options.healthPort ?? (options.mode === 'web' ? options.webPort : options.port);
  // A server that never came up is killed here: the caller never got it to stop.
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${output}`);
        return /is running/.test(output) && (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
      },
      `the ${options.mode} server to start`,
      120_000,
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, output: () => output, exited };
}
