// One project ingested by 1, 2 and 4 span writers at once (issue 22, item 4): each writer stands for
// one API process's group commit, with its own requests in flight; all write the same project. With a
// Postgres server (`--database-url`, or DATABASE_URL) the writers lock through it as API processes
// do; without one they share the process's lock table. Two lock schemes, interleaved in each round:
// - trace: the span writer's locks (src/traces/ingest-locks.ts), one per trace;
// - project: one lock per project, as before issue 22 (`projectLocks`), for comparison.
// Each writer gets an engine connection of its own (the embedded engine's public SQL sessions on the
// same data directory), but they still run in this one process on the machine's cores, and chdb
// runs queries with parameters (the "already stored?" check) one at a time per process: the speedup
// here is a floor; on servers each process has its own core and ClickHouse its own.
import type { Runtime } from '../src/runtime.js';
import { openPostgres, type PostgresStore } from '../src/stores/postgres.js';
import { SpanWriter } from '../src/traces/span-writer.js';
import { projectLocks, traceLocks } from '../src/traces/ingest-locks.js';
import type { NormalizedSpan } from '../src/traces/span-input.js';
import { median, time, type Row } from './measure.js';

export type WritersOptions = {
  /** The requests, validated: each is what one POST /traces hands the writer. */
  batches: NormalizedSpan[][];
  writers: number[];
  /** Requests in flight per writer. */
  concurrency: number;
  rounds: number;
  databaseUrl?: string;
  label: string;
};

export async function benchWriters(ctx: Runtime, o: WritersOptions, rows: Row[]) {
  const pg: PostgresStore = o.databaseUrl ? await openPostgres(ctx.config, { url: o.databaseUrl }) : ctx.pg;
  const spans = o.batches.reduce((n, b) => n + b.length, 0);
  const rates: Record<string, number[]> = {};
  try {
    for (let round = 0; round < o.rounds; round++) {
      for (const scheme of ['trace', 'project'] as const) {
        for (const n of o.writers) {
          if (scheme === 'project' && n === 1) continue; // the same as one writer with trace locks
          const projectId = `writers-${scheme}-${n}-${round}-${Date.now()}`;
          const locks = scheme === 'trace' ? traceLocks(ctx.ch, pg) : projectLocks(traceLocks(ctx.ch, pg), projectId);
          // Each writer its own engine connection, as each API process has its own: embedded, one
          // connection runs one query at a time, so writers sharing one would take turns whatever
          // the locks. The public SQL sessions are such connections to the same data directory.
          const clients = [ctx.ch.client, ...ctx.ch.sqlClients];
          const writers = Array.from(
            { length: n },
            (_, w) => new SpanWriter({ ...ctx.ch, client: clients[w % clients.length]! }, pg, { locks }),
          );
          const ms = await time(() =>
            Promise.all(
              writers.map(async (writer, w) => {
                const mine = o.batches.filter((_, i) => i % n === w);
                let next = 0;
                await Promise.all(
                  Array.from({ length: o.concurrency }, async () => {
                    while (next < mine.length) await writer.write(projectId, 30, mine[next++]!);
                  }),
                );
              }),
            ),
          );
          await Promise.all(writers.map((w) => w.close()));
          (rates[`${scheme}-${n}`] ??= []).push((spans / ms) * 1000);
        }
      }
      console.log(
        `writers round ${round + 1}:`,
        Object.entries(rates)
          .map(([k, v]) => `${k} ${Math.round(v.at(-1)!)}`)
          .join(', '),
        'spans/s',
      );
    }
  } finally {
    if (pg !== ctx.pg) await pg.close();
  }
  const one = median(rates['trace-1']!);
  const where = o.databaseUrl ? 'Postgres server locks' : 'in-process locks';
  for (const n of o.writers.filter((n) => n > 1)) {
    const trace = median(rates[`trace-${n}`]!);
    const project = median(rates[`project-${n}`]!);
    rows.push({
      work: `${o.label}: ${n} writers on one project (${where}), ${o.concurrency} requests in flight each${o.rounds > 1 ? `, median of ${o.rounds}` : ''}`,
      api: `${Math.round(trace).toLocaleString()} spans/s`,
      reference: `1 writer ${Math.round(one).toLocaleString()} spans/s; ${n} writers under one project lock ${Math.round(project).toLocaleString()} spans/s`,
      ratio: `${(trace / one).toFixed(2)}× one writer (project lock: ${(project / one).toFixed(2)}×)`,
      target: 'scales with writers',
    });
  }
  return {
    spans,
    rounds: o.rounds,
    database: o.databaseUrl ? 'server' : 'embedded',
    medians: Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, median(v)])),
    samples: rates,
  };
}
