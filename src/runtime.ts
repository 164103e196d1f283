import crypto from 'node:crypto';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { AccessTokens } from './auth/access-token.js';
import { openClickHouse, type ClickHouseStore } from './stores/clickhouse.js';
import { openPostgres, type PostgresStore } from './stores/postgres.js';
import { openQueue, type QueueStore } from './stores/queue.js';
import { migrate } from './stores/migrate.js';
import { SpanWriter } from './traces/span-writer.js';
import { LoopWatch } from './health/loop-watch.js';
import { loadSecretBox } from './secrets/secret-box.js';

export type Runtime = AppContext & {
  /** Milliseconds each step of opening took (docs/operations.md, "Restarts"). */
  timings: Readonly<Record<'stores' | 'migrations' | 'total', number>>;
  /** Stores the spans still queued (or refuses them once their clients are gone), then closes the stores. */
  close(): Promise<void>;
};

/**
 * Opens the three stores, applies pending migrations and loads the signing key: everything a
 * process needs before it serves. The only place connections are opened. The stores open side by
 * side (each is mostly waiting: a WASM start, a native library, a network handshake), which is most
 * of a restart's time.
 */
export async function openRuntime(config: Config, options: { dataDir?: string } = {}): Promise<Runtime> {
  const started = performance.now();
  // Before any store opens: a key that can't be read is a configuration error, said at once.
  const secrets = loadSecretBox({
    key: config.secrets.key,
    previousKeys: config.secrets.previousKeys,
    dataDir: options.dataDir ?? config.dataDir,
  });
  const opened = await Promise.allSettled([
    openPostgres(config, options),
    openClickHouse(config, options),
    openQueue(config, options),
  ] as const);
  const [pgResult, chResult, queueResult] = opened;
  if (pgResult.status === 'rejected' || chResult.status === 'rejected' || queueResult.status === 'rejected') {
    await closeStores(
      queueResult.status === 'fulfilled' ? queueResult.value : undefined,
      chResult.status === 'fulfilled' ? chResult.value : undefined,
      pgResult.status === 'fulfilled' ? pgResult.value : undefined,
    ).catch(() => {});
    throw opened.find((r) => r.status === 'rejected')!.reason;
  }
  const [pg, ch, queue] = [pgResult.value, chResult.value, queueResult.value];
  const storesMs = performance.now() - started;
  try {
    await migrate(pg, ch);
    const migrationsMs = performance.now() - started - storesMs;
    const tokens = new AccessTokens(config.jwtSecret ?? (await sharedSecret(pg, 'jwt_signing_key')));
    const spanWriter = new SpanWriter(ch, pg, {
      maxQueuedSpans: config.ingest.queueMaxSpans,
      maxQueuedBytes: config.ingest.queueMaxBytes,
    });
    const loopWatch = new LoopWatch(config.liveness.maxBlockMs).start();
    return {
      config,
      pg,
      ch,
      queue,
      tokens,
      spanWriter,
      loopWatch,
      secrets,
      timings: Object.freeze({
        stores: Math.round(storesMs),
        migrations: Math.round(migrationsMs),
        total: Math.round(performance.now() - started),
      }),
      async close() {
        loopWatch.stop();
        try {
          await spanWriter.close();
        } finally {
          await closeStores(queue, ch, pg);
        }
      },
    };
  } catch (error) {
    await closeStores(queue, ch, pg).catch(() => {});
    throw error;
  }
}

/** The queue first (its workers may still use the other two), then ClickHouse and Postgres. */
async function closeStores(queue?: QueueStore, ch?: ClickHouseStore, pg?: PostgresStore): Promise<void> {
  try {
    await queue?.close();
  } finally {
    await Promise.all([ch?.close(), pg?.close()]);
  }
}

/** A secret generated once and kept in Postgres, so every process of a deployment agrees on it. */
async function sharedSecret(pg: PostgresStore, name: string): Promise<string> {
  await pg.pool.query('INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
    name,
    crypto.randomBytes(48).toString('base64url'),
  ]);
  const { rows } = await pg.pool.query<{ value: string }>('SELECT value FROM server_secrets WHERE name = $1', [name]);
  return rows[0]!.value;
}
