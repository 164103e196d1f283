import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openRuntime } from '../../src/runtime.js';
import { tempDataDir } from '../support/harness.js';
import { startLocalS3, type LocalS3 } from '../support/s3-server.js';
import { waitUntil } from '../support/wait.js';
import { prepareExport, startExportWorker, type ExportWorker } from '../../bench/export-run.js';

/**
 * An export of 1M spans to a local S3 server (issue 35, "Done when"), across a crash: a real worker
 * process (bench/export-worker.ts: the export workers of workers/exports.ts on embedded stores of its
 * own) is SIGKILLed once it has written some of the export's objects, then a second worker process on
 * the same data takes the export over once the first one's lease has run out, and finishes it. The
 * bucket then holds each part once (the keys the export names, no other), the parts hold the 1M spans
 * once each, and neither process's peak resident memory (VmHWM, /proc) came near the export's size:
 * the parts are streamed, never the whole export held. Long: loading and exporting 1M spans takes minutes.
 */

const SPANS = 1_000_000;
/**
 * The memory bound of a worker: measured peaks are 1.11-1.31 GB, of which about 0.8 GB is held before
 * the export begins (the embedded engines) and the rest one part of 100,000 rows at a time: the same
 * after 2 parts as after 11, so it does not grow with the export. (Before the export's queries read
 * blocks of 8,192 rows and wrote row groups of 10,000, src/query/exports.ts, peaks were 1.42-1.68 GB,
 * and one CI run crossed this bound.)
 */
const PEAK_RSS_BOUND = 1.5 * 1024 ** 3;
const LEASE_SECONDS = 30;

const dirs: string[] = [];
const workers: ExportWorker[] = [];
let s3: LocalS3 | undefined;
afterAll(async () => {
  for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
  await s3?.close();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

it('exports 1M spans to S3 across a SIGKILL of its worker: every part once, every span once, bounded memory', async () => {
  s3 = await startLocalS3();
  const dir = tempDataDir('export-crash');
  dirs.push(dir);
  const prepared = await prepareExport(dir, { spans: SPANS, format: 'parquet', bucket: s3 });
  const exportKeys = `${prepared.prefix}${prepared.exportId}/`;

  const first = startExportWorker(dir, prepared.exportId, { leaseSeconds: LEASE_SECONDS });
  workers.push(first);
  await first.ready;
  // Some parts written, not all: the kill lands mid-export (often inside an upload).
  let before: string[] = [];
  await waitUntil(
    async () => (before = await s3!.keys(exportKeys)).length >= 2,
    'the first worker to write two parts',
    600_000,
    200,
  );
  const firstPeak = first.peakRss();
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  await expect(first.outcome).rejects.toThrow(/exited/);

  const second = startExportWorker(dir, prepared.exportId, { leaseSeconds: LEASE_SECONDS });
  workers.push(second);
  const outcome = await second.outcome;
  const secondPeak = second.peakRss();
  expect(await second.exited).toBe(0);
  expect(outcome).toMatchObject({ status: 'completed', rows: SPANS, error: null });

  // Each part once: the bucket holds exactly the objects the export names, each named once.
  const keys = await s3.keys(exportKeys);
  expect(new Set(outcome.objects).size).toBe(outcome.objects.length);
  expect([...outcome.objects].sort()).toEqual(keys);
  expect(keys.length).toBeGreaterThan(before.length);
  for (const key of before) expect(keys).toContain(key);

  // Every span once, read back from the objects with the engine itself.
  const files = tempDataDir('export-crash-parts');
  dirs.push(files);
  let bytes = 0;
  for (const key of keys) {
    const body = await s3.bytes(key);
    bytes += body.length;
    fs.writeFileSync(path.join(files, path.basename(key)), body);
  }
  expect(bytes).toBe(outcome.bytes);
  const ctx = await openRuntime(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', SEED_DEMO: 'false' }));
  try {
    const result = await ctx.ch.client.query({
      query: `SELECT count() AS n, uniqExact(trace_id, span_id) AS distinct_spans FROM file('${files}/*.parquet', Parquet)`,
      format: 'JSONEachRow',
    });
    const [counted] = await result.json<{ n: string; distinct_spans: string }>();
    expect(Number(counted!.n)).toBe(SPANS);
    expect(Number(counted!.distinct_spans)).toBe(SPANS);
  } finally {
    await ctx.close();
  }

  // Bounded memory: each worker's peak far under what it exported.
  console.log(
    `export of ${SPANS} spans: ${keys.length} objects, ${(bytes / 1e6).toFixed(0)} MB; peak RSS ` +
      `${(firstPeak / 1e6).toFixed(0)} MB (killed after ${before.length} objects), ${(secondPeak / 1e6).toFixed(0)} MB ` +
      `(finished in ${outcome.seconds.toFixed(0)} s)`,
  );
  expect(firstPeak).toBeGreaterThan(0);
  expect(firstPeak).toBeLessThan(PEAK_RSS_BOUND);
  expect(secondPeak).toBeLessThan(PEAK_RSS_BOUND);
}, 1_800_000);
