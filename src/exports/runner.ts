import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PassThrough, Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { SecretBoxError } from '../secrets/secret-box.js';
import {
  clickhouseFormat,
  partMinutesQuery,
  partQuery,
  planQuery,
  type ExportSelection,
  type PartChunk,
} from '../query/exports.js';
import { openBucket } from './buckets.js';
import { bucketWriter, BucketWriteError } from './bucket-writer.js';
import { planChunks, planParts, partName, type PlannedPart } from './plan.js';
import { CONTENT_TYPES, downloadDir, type ExportRow } from './service.js';

/**
 * The worker's run of an export (workers/exports.ts). A run claims the export with a token and a
 * lease (EXPORT_LEASE_SECONDS, default 120, renewed after each part); a second run finds it claimed
 * and does nothing. The first run plans the parts (src/exports/plan.ts) and stores the plan; then each part is queried
 * in the export's format and written under its fixed name (a download's file in DATA_DIR/exports/, an
 * object in the bucket), and only then counted done. A run that dies leaves the export `running`; once
 * its lease has run out the periodic pass queues it again, and the next run goes on from the first part
 * not counted: that part is written again under the same name, replacing what the dead run left, so
 * no object is ever duplicated. Failures end `failed` with a fixed sentence (FAILURES): never a stack,
 * an address or a credential.
 */

/**
 * A JSON lines or CSV part on the embedded engine (which answers a query whole) is written as chunks of
 * about this fraction of the part's rows (EXPORT_PART_ROWS / 5: 20,000 by default), one query each
 * (plan.ts `planChunks`). A Parquet part is one file, so one query; a ClickHouse server streams.
 */
export const CHUNKS_PER_PART = 5;

export const FAILURES = {
  tooManyRows: (max: number) =>
    `the export holds more than ${max} rows (EXPORT_MAX_ROWS); narrow its window or filters`,
  query: 'the export’s query failed',
  bucketGone: 'the export’s bucket was deleted',
  bucketKeys: 'the bucket’s keys can not be opened with the configured secrets keys; create the bucket again',
  other: 'the export failed',
} as const;

export type RunOptions = {
  /** Stops the run between steps without failing it (shutdown; tests simulate a crash so). */
  signal?: AbortSignal;
  /** Tests: called after a part's object is written and before it is counted done. */
  afterPartWritten?: (index: number) => void | Promise<void>;
};

type Destination = { put(name: string, body: Readable): Promise<string>; close(): void };

function downloadDestination(ctx: AppContext, row: ExportRow): Destination {
  const dir = downloadDir(ctx, row.id);
  fs.mkdirSync(dir, { recursive: true });
  return {
    async put(name, body) {
      // Written beside and renamed: the name only ever holds a whole part.
      const temp = path.join(dir, `.${name}.${crypto.randomBytes(4).toString('hex')}`);
      await pipeline(body, fs.createWriteStream(temp));
      fs.renameSync(temp, path.join(dir, name));
      return name;
    },
    close() {},
  };
}

async function bucketDestination(ctx: AppContext, row: ExportRow): Promise<Destination> {
  const writer = bucketWriter(await openBucket(ctx, row.project_id, row.bucket_id!), ctx.config.exports.allowPrivate);
  return {
    async put(name, body) {
      const key = writer.keyOf(row.id, name);
      await writer.put(key, body, CONTENT_TYPES[row.format]);
      return key;
    },
    close: () => writer.close(),
  };
}

class ExportFailure extends Error {}

function selectionOf(row: ExportRow): ExportSelection {
  return {
    projectId: row.project_id,
    kind: row.kind,
    startMs: row.start_time.getTime(),
    endMs: row.end_time.getTime(),
    filters: row.filters,
  };
}

/** The embedded engine's maintenance session (long statements away from ingest), or the server client. */
function exportClient(ctx: AppContext) {
  return ctx.ch.embedded ? ctx.ch.maintenance : ctx.ch.client;
}

async function plan(ctx: AppContext, row: ExportRow): Promise<PlannedPart[]> {
  const read = planQuery(selectionOf(row));
  const result = await exportClient(ctx).query({ ...read, format: 'JSONEachRow' });
  const hours = (await result.json<{ hour: number | string; rows: number | string }>()).map((h) => ({
    hour: Number(h.hour),
    rows: Number(h.rows),
  }));
  const total = hours.reduce((sum, h) => sum + h.rows, 0);
  if (total > ctx.config.exports.maxRows) throw new ExportFailure(FAILURES.tooManyRows(ctx.config.exports.maxRows));
  return planParts(hours, ctx.config.exports.partRows);
}

/** Counts the bytes that pass. */
function counted(source: Readable): { body: Readable; bytes: () => number } {
  let bytes = 0;
  const body = new PassThrough();
  body.on('data', (chunk: Buffer) => (bytes += chunk.length));
  source.on('error', (error) => body.destroy(error));
  source.pipe(body);
  return { body, bytes: () => bytes };
}

/**
 * A part's file as its queries answer it: one query, or for a JSON lines or CSV part on the embedded
 * engine one per chunk (CHUNKS_PER_PART), run one after the other as the write reaches them. The first
 * runs here, so its failure is said to be the query's; `queryFailed` tells a later one's apart from
 * the write's own failures.
 */
async function partBody(ctx: AppContext, row: ExportRow, part: PlannedPart, index: number) {
  const selection = selectionOf(row);
  let failed = false;
  const run = async (chunk: PartChunk, first: boolean): Promise<Readable> => {
    const read = partQuery(selection, part, clickhouseFormat(row.format, index === 0 && first), chunk);
    try {
      return (await exportClient(ctx).exec({ query: read.query, query_params: read.query_params })).stream;
    } catch {
      failed = true;
      throw new ExportFailure(FAILURES.query);
    }
  };
  let chunks: PartChunk[] = [{}];
  if (ctx.ch.embedded && row.format !== 'parquet') {
    const read = partMinutesQuery(selection, part);
    try {
      const result = await exportClient(ctx).query({ ...read, format: 'JSONEachRow' });
      const minutes = await result.json<{ minute: number | string; rows: number | string }>();
      chunks = planChunks(
        minutes.map((m) => ({ minute: Number(m.minute), rows: Number(m.rows) })),
        Math.ceil(ctx.config.exports.partRows / CHUNKS_PER_PART),
      );
    } catch {
      throw new ExportFailure(FAILURES.query);
    }
  }
  const first = await run(chunks[0]!, true);
  async function* chunked() {
    yield* first;
    for (const chunk of chunks.slice(1)) yield* await run(chunk, false);
  }
  const source = chunks.length === 1 ? first : Readable.from(chunked(), { objectMode: false });
  return { ...counted(source), queryFailed: () => failed };
}

/** Runs (or goes on with) one export; answers what it did. */
export async function runExport(
  ctx: AppContext,
  exportId: string,
  options: RunOptions = {},
): Promise<'completed' | 'failed' | 'stopped' | 'not-claimed'> {
  const db = ctx.pg.pool;
  const token = crypto.randomUUID();
  const claimed = await db.query<ExportRow>(
    `UPDATE exports SET status = 'running', run_token = $2, lease_until = now() + make_interval(secs => $3),
            started_at = COALESCE(started_at, now())
      WHERE id = $1 AND (status = 'queued' OR (status = 'running' AND (lease_until IS NULL OR lease_until < now())))
      RETURNING *`,
    [exportId, token, ctx.config.exports.leaseSeconds],
  );
  const row = claimed.rows[0];
  if (!row) return 'not-claimed';
  const mine = 'id = $1 AND run_token = $2';
  let destination: Destination | undefined;
  try {
    let parts = row.parts as PlannedPart[] | null;
    if (!parts) {
      parts = await plan(ctx, row);
      const rows = parts.reduce((sum, p) => sum + p.rows, 0);
      await db.query(`UPDATE exports SET parts = $3::jsonb, rows = $4 WHERE ${mine}`, [
        row.id,
        token,
        JSON.stringify(parts),
        rows,
      ]);
    }
    if (row.to_bucket && row.bucket_id === null) throw new ExportFailure(FAILURES.bucketGone);
    destination = row.to_bucket ? await bucketDestination(ctx, row) : downloadDestination(ctx, row);
    for (let index = row.parts_done; index < parts.length; index++) {
      if (options.signal?.aborted) return 'stopped';
      const { body, bytes, queryFailed } = await partBody(ctx, row, parts[index]!, index);
      let key: string;
      try {
        key = await destination.put(partName(index, row.format), body);
      } catch (error) {
        throw queryFailed() ? new ExportFailure(FAILURES.query) : error;
      }
      await options.afterPartWritten?.(index);
      if (options.signal?.aborted) return 'stopped';
      const done = await db.query(
        `UPDATE exports SET parts_done = $3, bytes = bytes + $4, objects = objects || $5::jsonb,
                lease_until = now() + make_interval(secs => $6)
          WHERE ${mine}`,
        [row.id, token, index + 1, bytes(), JSON.stringify([key]), ctx.config.exports.leaseSeconds],
      );
      // Another run took the export over (this one's lease ran out): it goes on, this one stops.
      if (done.rowCount === 0) return 'stopped';
    }
    await db.query(
      `UPDATE exports SET status = 'completed', finished_at = now(), run_token = NULL, lease_until = NULL,
              expires_at = CASE WHEN to_bucket THEN NULL ELSE now() + interval '24 hours' END
        WHERE ${mine}`,
      [row.id, token],
    );
    return 'completed';
  } catch (error) {
    if (options.signal?.aborted) return 'stopped';
    const sentence =
      error instanceof ExportFailure || error instanceof BucketWriteError
        ? error.message
        : error instanceof SecretBoxError
          ? FAILURES.bucketKeys
          : FAILURES.other;
    await db.query(
      `UPDATE exports SET status = 'failed', error = $3, finished_at = now(), run_token = NULL, lease_until = NULL
        WHERE ${mine}`,
      [row.id, token, sentence],
    );
    return 'failed';
  } finally {
    destination?.close();
  }
}

/**
 * The periodic pass's upkeep: queues again the exports whose run died (running, lease over) or whose
 * job never reached the queue (queued for over a minute), and deletes downloads 24 hours after they
 * completed. Answers the ids it queued.
 */
export async function sweepExports(ctx: AppContext, enqueue: (id: string) => Promise<void>): Promise<string[]> {
  const db = ctx.pg.pool;
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM exports
      WHERE (status = 'running' AND (lease_until IS NULL OR lease_until < now()))
         OR (status = 'queued' AND created_at < now() - interval '1 minute')
      ORDER BY created_at LIMIT 100`,
  );
  for (const { id } of rows) await enqueue(id);
  const expired = await db.query<{ id: string }>(
    `UPDATE exports SET objects = '[]'::jsonb WHERE expires_at < now() AND objects != '[]'::jsonb AND NOT to_bucket
      RETURNING id`,
  );
  for (const { id } of expired.rows) fs.rmSync(downloadDir(ctx, id), { recursive: true, force: true });
  return rows.map((r) => r.id);
}
