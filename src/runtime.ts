import crypto from 'node:crypto';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { AccessTokens } from './auth/access-token.js';
import { openClickHouse } from './stores/clickhouse.js';
import { openPostgres, type PostgresStore } from './stores/postgres.js';
import { openQueue } from './stores/queue.js';
import { migrate } from './stores/migrate.js';

export type Runtime = AppContext & { close(): Promise<void> };

/**
 * Opens the three stores, applies pending migrations and loads the signing key: everything a
 * process needs before it serves. The only place connections are opened.
 */
export async function openRuntime(config: Config, options: { dataDir?: string } = {}): Promise<Runtime> {
  const pg = await openPostgres(config, options);
  const ch = await openClickHouse(config, options).catch(async (e) => {
    await pg.close();
    throw e;
  });
  const queue = await openQueue(config, options).catch(async (e) => {
    await Promise.all([pg.close(), ch.close()]);
    throw e;
  });
  try {
    await migrate(pg, ch);
    const tokens = new AccessTokens(config.jwtSecret ?? (await sharedSecret(pg, 'jwt_signing_key')));
    return {
      config,
      pg,
      ch,
      queue,
      tokens,
      async close() {
        await queue.close();
        await Promise.all([ch.close(), pg.close()]);
      },
    };
  } catch (error) {
    await queue.close().catch(() => {});
    await Promise.all([ch.close(), pg.close()]).catch(() => {});
    throw error;
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
