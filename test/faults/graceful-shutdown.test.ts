import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/harness.js';
import { freePort, waitFor } from '../support/private-servers.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * SIGTERM during heavy ingest: a real `npm start` process (api, web and worker on embedded stores of
 * its own) takes batches from several clients and is told to stop mid-stream. In-flight group commits
 * finish, the process exits 0 within 15 s, and once it runs again every batch it acknowledged with a
 * 200 is stored, whole. The demo account it creates on first start provides the API key.
 */

const dir = tempDataDir('sigterm');
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The server of `npm start` (api, web and worker in one process) on this test's data directory. */
async function startServer(port: number, webPort: number): Promise<ServerProcess> {
  const server = await startServerProcess({ mode: 'all', dataDir: dir, port, webPort });
  children.push(server.child);
  return server;
}

describe('SIGTERM during ingest', () => {
  it(
    'finishes in-flight commits, exits 0 within 15 s, and every acknowledged batch is stored',
    { timeout: 240_000 },
    async () => {
      const [port, webPort] = [await freePort(), await freePort()];
      const first = await startServer(port, webPort);
      await waitFor(() => /API key\s+sl_/.test(first.output()), 'the demo account', 60_000);
      const key = { key: /API key\s+(sl_\S+)/.exec(first.output())![1]! };
      const server = first.child;
      const acked: string[] = [];
      let sending = true;
      let batchNo = 0;
      const client = async (c: number) => {
        while (sending) {
          const trace = `c${c}-b${batchNo++}`;
          const spans = Array.from({ length: 200 }, (_, i) => ({
            trace_id: trace,
            span_id: `s${i}`,
            name: 'op',
            start_time: new Date().toISOString(),
            input: 'x'.repeat(200),
          }));
          try {
            const res = await fetch(`http://127.0.0.1:${port}/api/v1/public/traces`, {
              method: 'POST',
              headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
              body: JSON.stringify({ spans }),
              signal: AbortSignal.timeout(20_000),
            });
            if (res.status === 200) acked.push(trace);
            else {
              await res.text();
              await new Promise((r) => setTimeout(r, 50));
            }
          } catch {
            // The server is going away: not acknowledged.
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      };
      const clients = [0, 1, 2, 3].map(client);
      await waitFor(() => acked.length >= 8, 'some batches to be acknowledged', 60_000);
      const exited = new Promise<{ code: number | null; ms: number }>((resolve) => {
        if (server.exitCode !== null) return resolve({ code: server.exitCode, ms: 0 });
        const started = Date.now();
        server.once('exit', (code) => resolve({ code, ms: Date.now() - started }));
      });
      server.kill('SIGTERM');
      const { code, ms } = await exited;
      sending = false;
      await Promise.all(clients);
      expect(code).toBe(0);
      expect(ms).toBeLessThan(15_000);

      await startServer(port, webPort);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/public/sql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: "SELECT trace_id, count() AS n FROM spans WHERE trace_id LIKE 'c%-b%' GROUP BY trace_id",
        }),
      });
      const stored = new Map(((await res.json()) as { rows: [string, number][] }).rows);
      for (const trace of acked) expect(stored.get(trace), `acknowledged batch ${trace}`).toBe(200);
    },
  );
});
