import http from 'node:http';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/harness.js';
import { freePort, waitFor } from '../support/private-servers.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * SIGTERM with a keep-alive client attached, in each process mode (docs/operations.md, "Stopping").
 * A pooled HTTP client (an http.Agent with keepAlive, as Node's fetch and OTel exporters use) holds
 * idle connections, and in `all` and `api` an ingest request is still sending its body when the
 * signal arrives. The process answers that request (with `Connection: close`), closes the idle
 * connections, closes workers and stores, logs each step and exits 0: a forced exit (the bound
 * passed) would exit 1. The `all` start creates the demo account whose key the `api` start uses.
 */

const dir = tempDataDir('stop-modes');
const running: ServerProcess[] = [];
afterAll(() => {
  for (const s of running) s.child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };

function get(agent: http.Agent, port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

/** A POST whose body is sent in two halves: the second when `release` is called. */
function slowPost(agent: http.Agent, port: number, path: string, headers: Record<string, string>, body: string) {
  let release!: () => void;
  const answer = new Promise<Answer>((resolve, reject) => {
    const payload = Buffer.from(body);
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(payload.length) },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.write(payload.subarray(0, payload.length >> 1));
    release = () => req.end(payload.subarray(payload.length >> 1));
  });
  return { answer, release: () => release() };
}

/** The ingest queue's admitted-and-unanswered requests, read from the api's /metrics. */
async function ingestRequestsInFlight(port: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(/^sightline_ingest_queue_requests\{[^}]*\} (\d+)/m.exec(text)?.[1] ?? NaN);
}

let demoKey = '';

describe('SIGTERM with a keep-alive client attached', () => {
  for (const mode of ['all', 'api', 'web', 'worker'] as const) {
    it(
      `${mode}: answers the request in flight, closes keep-alive connections, exits 0 with its steps logged`,
      { timeout: 240_000 },
      async () => {
        const [port, webPort] = [await freePort(), await freePort()];
        const server = await startServerProcess({ mode, dataDir: dir, port, webPort });
        running.push(server);
        if (mode === 'all') {
          await waitFor(() => /API key\s+sl_/.test(server.output()), 'the demo account', 60_000);
          demoKey = /API key\s+(sl_\S+)/.exec(server.output())![1]!;
        }
        const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
        // Idle pooled connections to every port the process serves.
        const ports = { all: [port, webPort], api: [port], web: [webPort], worker: [port] }[mode];
        for (const p of ports) expect((await get(agent, p, '/healthz')).status).toBe(200);

        let inFlight: ReturnType<typeof slowPost> | undefined;
        if (mode === 'all' || mode === 'api') {
          const spans = Array.from({ length: 50 }, (_, i) => ({
            trace_id: `stop-${mode}`,
            span_id: `s${i}`,
            name: 'op',
            start_time: new Date().toISOString(),
          }));
          inFlight = slowPost(
            agent,
            port,
            '/api/v1/public/traces',
            { authorization: `Bearer ${demoKey}` },
            JSON.stringify({ spans }),
          );
          // Admitted (authenticated, in the ingest queue's count) and still reading its body.
          await waitFor(async () => (await ingestRequestsInFlight(port)) === 1, 'the ingest request to be admitted');
        }

        server.child.kill('SIGTERM');
        await waitFor(() => /stop: SIGTERM received/.test(server.output()), 'the stop to begin');
        inFlight?.release();
        if (inFlight) {
          const answer = await inFlight.answer;
          expect(answer.status, answer.body).toBe(200);
          expect(JSON.parse(answer.body).accepted).toBe(50);
          expect(answer.headers.connection).toBe('close');
        }
        const code = await server.exited;
        agent.destroy();
        const log = server.output();
        expect(log).not.toMatch(/FORCED EXIT/);
        expect(code, log).toBe(0);
        for (const step of [
          'stop: SIGTERM received',
          'stop: HTTP servers closed',
          'stop: span writer drained',
          'stop: stores closed; stopped in',
        ])
          expect(log).toContain(step);
        if (mode === 'all' || mode === 'worker') expect(log).toMatch(/stop: \d+ queue workers closed/);
      },
    );
  }
});
