// The export rows (issue 35): an export of a bulk-loaded span history (bench/load-spans.ts, the last
// day) to a local S3-compatible server (s3rver on loopback), run by a worker process of its own
// (bench/export-run.ts), once per format: its rate (MB written per second, spans per second, from the
// worker's start to the export's end, planning included) and the worker's peak resident memory
// (VmHWM from /proc), beside the same process's peak when it was ready: what the export added.
//
// Alone: `npx tsx bench/export.ts [--spans 1000000] [--formats parquet,jsonl] [--dir bench/data/export]`;
// `npm run bench -- --only export` runs it too.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import S3rver from 's3rver';
import { printTable, type Row } from './measure.js';
import { prepareExport, startExportWorker } from './export-run.js';

/** The bound the crash test holds every export worker to (test/faults/export-crash.test.ts). */
export const EXPORT_PEAK_RSS_BOUND = 1.5 * 1024 ** 3;

export type ExportBenchOptions = { dir: string; spans: number; formats: ('parquet' | 'jsonl' | 'csv')[] };

export async function benchExport(options: ExportBenchOptions, rows: Row[]) {
  const results: Record<string, unknown>[] = [];
  for (const format of options.formats) {
    const dir = `${options.dir}-${format}`;
    fs.rmSync(dir, { recursive: true, force: true });
    const objects = path.join(dir, 's3');
    fs.mkdirSync(objects, { recursive: true });
    const server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: objects,
      configureBuckets: [{ name: 'bench' }],
    });
    const address = (await server.run()) as AddressInfo;
    try {
      const prepared = await prepareExport(path.join(dir, 'stores'), {
        spans: options.spans,
        format,
        bucket: {
          endpoint: `http://127.0.0.1:${address.port}`,
          bucket: 'bench',
          accessKeyId: 'S3RVER',
          secretAccessKey: 'S3RVER',
        },
      });
      const worker = startExportWorker(path.join(dir, 'stores'), prepared.exportId);
      await worker.ready;
      const outcome = await worker.outcome;
      await worker.exited;
      if (outcome.status !== 'completed') throw new Error(`the ${format} export ${outcome.status}: ${outcome.error}`);
      const peak = worker.peakRss();
      const atReady = worker.readyRss();
      const mb = outcome.bytes / 1e6;
      const result = {
        format,
        spans: outcome.rows,
        objects: outcome.objects.length,
        bytes: outcome.bytes,
        seconds: outcome.seconds,
        mb_per_s: mb / outcome.seconds,
        spans_per_s: outcome.rows / outcome.seconds,
        peak_rss_bytes: peak,
        ready_rss_bytes: atReady,
      };
      results.push(result);
      rows.push({
        work: `export of ${outcome.rows.toLocaleString('en')} spans to S3, ${format} (${outcome.objects.length} objects, ${mb.toFixed(0)} MB)`,
        api: `${result.mb_per_s.toFixed(1)} MB/s, ${Math.round(result.spans_per_s)} spans/s`,
        reference: `peak RSS ${(peak / 1e6).toFixed(0)} MB (${(atReady / 1e6).toFixed(0)} MB when ready)`,
        ratio: '',
        target: `peak RSS <= ${(EXPORT_PEAK_RSS_BOUND / 1e6).toFixed(0)} MB: ${peak <= EXPORT_PEAK_RSS_BOUND ? 'met' : 'MISSED'}`,
      });
    } finally {
      await server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values: args } = parseArgs({
    options: {
      spans: { type: 'string', default: '1000000' },
      formats: { type: 'string', default: 'parquet,jsonl' },
      dir: { type: 'string', default: 'bench/data/export' },
    },
  });
  const rows: Row[] = [];
  benchExport(
    {
      dir: path.resolve(args.dir),
      spans: Number(args.spans),
      formats: args.formats.split(',') as ExportBenchOptions['formats'],
    },
    rows,
  )
    .then((results) => {
      printTable(rows);
      const out = path.resolve('bench/results', `${new Date().toISOString().replace(/[:.]/g, '-')}-export.json`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, JSON.stringify({ results, rows }, null, 2));
      console.log(`\nresults: ${path.relative(process.cwd(), out)}`);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
