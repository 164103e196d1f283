import crypto from 'node:crypto';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.js';

/**
 * Real Postgres and Redis servers of a test's own, on ports of their own, that the test may stop and
 * start with the system tools (fault tests): the machine's shared servers stay untouched, so other
 * test files running at the same time never see the outage.
 */

/**
 * A port no other process is given meanwhile: one below the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range, 32768 and up here), tried by binding it. A port from
 * `listen(0)` is ephemeral, so while a private server is stopped the kernel may hand it to another
 * test's listener; the restarted server then cannot bind, and its clients talk to a stranger.
 */
export async function freePort(): Promise<number> {
  const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const ceiling = Math.min(Number.isFinite(low) ? low : 32768, 32768);
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * (ceiling - 20_000));
    if (await bindable(port)) return port;
  }
  throw new Error('no free port below the ephemeral range');
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

const PG_BIN = (() => {
  const root = '/usr/lib/postgresql';
  const version = fs.existsSync(root) ? fs.readdirSync(root).sort().at(-1) : undefined;
  return version ? path.join(root, version, 'bin') : '';
})();

/** initdb and pg_ctl refuse to run as root; the Debian packages' `postgres` user runs them. */
function asPostgres(command: string, args: string[]): string {
  const bin = path.join(PG_BIN, command);
  if (process.getuid?.() === 0)
    return execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  return execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export type PrivatePostgres = { url: string; stop(): Promise<void>; start(): Promise<void>; destroy(): Promise<void> };

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-pg-'));
  fs.chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const port = await freePort();
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const start = async () => {
    asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  };
  const stop = async () => {
    asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      await stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type PrivateRedis = { url: string; stop(): Promise<void>; start(): Promise<void>; destroy(): Promise<void> };

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  /** This test's own server answers: the child runs and a PING on its port gets PONG. */
  const answers = (c: ChildProcess) =>
    new Promise<boolean>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve(false);
      const socket = net.connect({ host: '127.0.0.1', port });
      let reply = '';
      socket.setTimeout(2_000, () => socket.destroy());
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.on('data', (chunk) => {
        reply += chunk.toString('latin1');
        if (reply.includes('\r\n')) socket.end();
      });
      socket.once('close', () => resolve(reply.startsWith('+PONG')));
      socket.once('error', () => resolve(false));
    });
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  const start = async () => {
    const c = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    child = c;
    await waitFor(async () => {
      if (c.exitCode !== null || c.signalCode !== null) throw new Error(`redis-server exited (${c.exitCode})`);
      return answers(c);
    }, 'redis start');
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c) return;
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }
    await waitFor(async () => !(await listening()), 'redis stop');
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, stop, destroy: stop };
}

/**
 * A database of a test's own on the machine's Postgres server (DATABASE_URL), dropped at the end;
 * undefined when the tests run on embedded Postgres, whose data directory is the harness's own
 * already. In CI every test file shares the server's one database, and a service process another
 * long test starts runs its alert ticks and notification sweeps over every project in it: a fault
 * test that counts its own webhooks must not share its alerts with those processes.
 */
export async function privateDatabase(): Promise<{ url: string; drop(): Promise<void> } | undefined> {
  const shared = process.env.DATABASE_URL;
  if (!shared) return undefined;
  const { default: pg } = await import('pg');
  const name = `sightline_private_${crypto.randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: shared });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

// Fault tests import the waiting helper with the servers it waits for.
export { waitFor };
