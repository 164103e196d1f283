// A worker process of one export (bench/export-run.ts): opens the stores of DATA_DIR, starts the
// export workers (workers/exports.ts: the runs and the periodic pass, here every second) and, once the
// export has ended, prints `outcome {json}` and stops. Its environment is the process's configuration.
//
//   node --import tsx bench/export-worker.ts <export_id>
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { startExportWorkers } from '../workers/exports.js';

async function main(): Promise<void> {
  const exportId = process.argv[2]!;
  const ctx = await openRuntime(loadConfig());
  const started = performance.now();
  const workers = startExportWorkers(ctx, { tickMs: 1000 });
  process.stdout.write('export worker ready\n');
  for (;;) {
    const { rows } = await ctx.pg.pool.query<{
      status: string;
      rows: string;
      bytes: string;
      objects: string[];
      error: string | null;
    }>('SELECT status, rows, bytes, objects, error FROM exports WHERE id = $1', [exportId]);
    const row = rows[0];
    if (!row) throw new Error(`no export ${exportId}`);
    if (row.status === 'completed' || row.status === 'failed') {
      const outcome = {
        status: row.status,
        rows: Number(row.rows),
        bytes: Number(row.bytes),
        objects: row.objects,
        error: row.error,
        seconds: (performance.now() - started) / 1000,
      };
      process.stdout.write(`outcome ${JSON.stringify(outcome)}\n`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await Promise.allSettled(workers.map((w) => w.close()));
  await ctx.close();
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
