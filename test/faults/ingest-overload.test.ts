import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../support/harness.js';
import { freePort, waitFor } from '../support/private-servers.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

/**
 * Producers past capacity against a real server process (docs/operations.md, "Overload"): the
 * span writer's queue bounded small (4 MiB of bodies, 5,000 spans) and 24 producers sending
 * 1,000-span batches of about 1 MB at once, none retrying. Past the bound the server answers 429
 * with Retry-After; every batch it acknowledged is stored whole and every batch it refused is not
 * stored at all; and the process's peak resident memory during the flood stays within
 * MEMORY_BOUND_MB of what it held before (unbounded, the same flood queued every body).
 */

const MEMORY_BOUND_MB = 300;
const PRODUCERS = 24;
const BATCHES = 6;
const SPANS_PER_BATCH = 1_000;

const dir = tempDataDir('overload');
let server: ServerProcess | undefined;
afterAll(() => {
  server?.child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

function memoryKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
}

describe('ingest past capacity', () => {
  it(
    'answers 429 with Retry-After, stores every acknowledged batch whole and no refused one, memory bounded',
    { timeout: 300_000 },
    async () => {
      const [port, webPort] = [await freePort(), await freePort()];
      server = await startServerProcess({
        mode: 'all',
        dataDir: dir,
        port,
        webPort,
        env: { INGEST_QUEUE_MAX_BYTES: String(4 * 1024 * 1024), INGEST_QUEUE_MAX_SPANS: '5000' },
      });
      await waitFor(() => /API key\s+sl_/.test(server!.output()), 'the demo account', 60_000);
      const key = /API key\s+(sl_\S+)/.exec(server.output())![1]!;
      const pid = server.child.pid!;
      // Peak RSS counts from here (writing 5 to clear_refs resets the high-water mark).
      fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const before = memoryKb(pid, 'VmRSS');

      const outcome = new Map<string, number>();
      const retryAfter: (string | undefined)[] = [];
      const producer = async (p: number) => {
        for (let b = 0; b < BATCHES; b++) {
          const trace = `flood-${p}-${b}`;
          const spans = Array.from({ length: SPANS_PER_BATCH }, (_, i) => ({
            trace_id: trace,
            span_id: `s${i}`,
            name: 'op',
            start_time: new Date().toISOString(),
            input: 'x'.repeat(900),
          }));
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/public/traces`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ spans }),
          });
          await res.text();
          outcome.set(trace, res.status);
          if (res.status === 429) retryAfter.push(res.headers.get('retry-after') ?? undefined);
        }
      };
      await Promise.all(Array.from({ length: PRODUCERS }, (_, p) => producer(p)));
      const peakGrowthMb = (memoryKb(pid, 'VmHWM') - before) / 1024;

      const statuses = [...outcome.values()];
      expect(
        statuses.every((s) => s === 200 || s === 429),
        `statuses: ${[...new Set(statuses)].join(', ')}`,
      ).toBe(true);
      const acked = [...outcome].filter(([, s]) => s === 200).map(([t]) => t);
      const refused = [...outcome].filter(([, s]) => s === 429).map(([t]) => t);
      expect(acked.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      for (const value of retryAfter) expect(Number(value)).toBeGreaterThanOrEqual(1);

      const res = await fetch(`http://127.0.0.1:${port}/api/v1/public/sql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          query: "SELECT trace_id, count() AS n FROM spans WHERE trace_id LIKE 'flood-%' GROUP BY trace_id",
        }),
      });
      expect(res.status).toBe(200);
      const stored = new Map(((await res.json()) as { rows: [string, number][] }).rows.map(([t, n]) => [t, Number(n)]));
      for (const trace of acked) expect(stored.get(trace), `acknowledged batch ${trace}`).toBe(SPANS_PER_BATCH);
      for (const trace of refused) expect(stored.get(trace), `refused batch ${trace}`).toBeUndefined();

      console.log(
        `overload: ${acked.length} acknowledged, ${refused.length} refused (429); peak RSS growth ${peakGrowthMb.toFixed(0)} MB`,
      );
      expect(peakGrowthMb).toBeLessThan(MEMORY_BOUND_MB);
    },
  );
});
